"""The `s3memory` command line. Exit codes: 0 ok, 1 operation failed, 2 usage or configuration error."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s3memory",
        description="Claude's memory tool on envelope-encrypted S3: try it, inspect and operate agent memory.",
        epilog="Example: s3memory demo",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    demo = sub.add_parser(
        "demo",
        help="run a scripted session on an embedded moto S3 + KMS (nothing to configure)",
        description="Run a scripted customer-service session on an in-process moto S3 + KMS, "
        "then print the raw stored object to show it is encrypted.",
        epilog="Example: s3memory demo",
    )
    demo.set_defaults(func=_demo)
    return parser


def _demo(args: argparse.Namespace) -> int:
    from .demo import run

    run(sys.stdout)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
