"""The `s3memory` CLI's argument types and shared option groups (the parser itself is `cli.parser`)."""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from typing import Any, NoReturn

from .exits import EXIT_USAGE, PROG


def error(message: str) -> None:
    """The CLI's one error line on stderr: `s3memory: error: MESSAGE`."""
    sys.stderr.write(f"{PROG}: error: {message}\n")


_CONNECTION_HELP = """Flags override the S3MEMORY_* environment variables. Set the bucket and exactly one key
source (agents, purge, prune, shred and rewrap need none); prefer S3MEMORY_LOCAL_KEY to --local-key,
so the key stays out of your shell history."""


def agent_id(text: str) -> str:
    from s3memory.core.paths import validate_agent_id

    try:
        return validate_agent_id(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def store(text: str) -> str:
    """`--store ID`: the store's owner label, which every operator command takes where an agent id goes."""
    from s3memory.core.paths import store_owner

    try:
        return store_owner(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def owner_options(parser: argparse.ArgumentParser, *, every: bool = False) -> None:
    """`--agent ID` or `--store ID`, one of them (with `every`, neither: every agent under the prefix)."""
    group = parser.add_mutually_exclusive_group(required=not every)
    group.add_argument("--agent", type=agent_id, help=_EVERY_AGENT if every else "agent id")
    group.add_argument("--store", dest="agent", type=store, metavar="ID",
                       help="only this shared store (stores are never in the default)" if every
                       else "shared store id, instead of --agent")  # fmt: skip


_EVERY_AGENT = "only this agent (default: every agent under the prefix)"


def add_replica_flags(parser: argparse.ArgumentParser) -> None:
    """purge's and shred's flags for a replica region (`cli.erase_replica`)."""
    parser.add_argument("--replica", metavar="BUCKET",
                        help="the replica region's memory bucket: erase the agent there too, after this side "
                             "(S3 does not replicate the deletion of a version)")  # fmt: skip
    parser.add_argument("--replica-keystore-bucket", metavar="BUCKET",
                        help="the replica's keystore bucket (with --replica; needed when S3MEMORY_KEYSTORE_BUCKET "
                             "is set)")  # fmt: skip
    parser.add_argument("--replica-region", metavar="REGION", help="the replica's region (with --replica)")
    parser.add_argument("--this-region-only", action="store_true",
                        help="erase in this region only, though its buckets replicate (run it in the other region "
                             "too)")  # fmt: skip


def mount(text: str) -> str:
    from s3memory.core.mounts import parse_spec

    try:
        parse_spec(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def workers(text: str) -> int:
    value = int(text) if text.isdigit() else 0
    if not 1 <= value <= 256:
        raise argparse.ArgumentTypeError("must be a whole number from 1 to 256")
    return value


class Parser(argparse.ArgumentParser):
    """argparse with the CLI's error form: one line `s3memory: error: MESSAGE` on stderr, exit 2.

    Every subparser is one too (`add_subparsers` builds its parsers with the parent's class).
    """

    def error(self, message: str) -> NoReturn:
        error(" ".join(message.split("\n")) + _choice_hint(message))
        self.exit(EXIT_USAGE)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """A command's unknown option (`--agnet`) is named, with the option it is closest to, before
        argparse would answer only that a required option is missing."""
        if self._subparsers is None and args is not None:
            known = [o for o in self._option_string_actions if o.startswith("--")]
            for arg in args:
                if arg == "--":
                    break
                name = arg.split("=", 1)[0]
                if name.startswith("--") and not any(o.startswith(name) for o in known):
                    close = difflib.get_close_matches(name, known, n=1)
                    self.error(f"unrecognized arguments: {name}" + (f"; did you mean {close[0]}?" if close else ""))
        return super().parse_known_args(args, namespace)

    def _parse_optional(self, arg_string: str) -> Any:
        # No option starts with a digit: `--older-than -1d` passes "-1d" on to the age check
        # (which says what is wrong with it) instead of failing as an option without a value.
        if arg_string[:1] == "-" and arg_string[1:2].isdigit():
            return None
        return super()._parse_optional(arg_string)


def _choice_hint(message: str) -> str:
    """`; did you mean ls?` for argparse's `invalid choice: 'lst' (choose from ...)`, else ""."""
    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if found is None:
        return ""
    choices = re.findall(r"'?([\w-]+)'?", found.group(2))
    close = difflib.get_close_matches(found.group(1), choices, n=1)
    return f"; did you mean {close[0]}?" if close else ""


def parents() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    conn = argparse.ArgumentParser(add_help=False)
    group = conn.add_argument_group("connection", _CONNECTION_HELP)
    group.add_argument("--bucket", help="S3 bucket (S3MEMORY_BUCKET)")
    group.add_argument("--prefix", help='key prefix before the agent id, "" or ending in "/" (S3MEMORY_PREFIX)')
    group.add_argument("--kms-key-id", metavar="KEY", help="KMS key id, ARN or alias (S3MEMORY_KMS_KEY_ID)")
    group.add_argument("--local-key", metavar="BASE64", help="local 32-byte master key (S3MEMORY_LOCAL_KEY)")
    group.add_argument("--endpoint-url", metavar="URL", help="S3/KMS endpoint (S3MEMORY_ENDPOINT_URL)")
    group.add_argument("--region", help="AWS region (S3MEMORY_REGION)")
    group.add_argument("--profile", help="AWS profile (S3MEMORY_PROFILE)")
    bulk = argparse.ArgumentParser(add_help=False)
    bulk.add_argument("--workers", type=workers, metavar="N", help="parallel S3 requests (default 16)")
    bulk.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    return conn, bulk
