"""The `s3memory` command line. Exit codes: 0 ok, 1 operation failed, 2 usage or configuration error.

Arguments → `Settings` → store / vault → the operation → stdout. Errors are one line on
stderr, never a traceback and never a secret. The parser is `parser.build_parser`; this module looks commands
up in `COMMANDS` (name → module and function, one module per command group) and maps errors
to exit codes. Nothing heavy (boto3, anthropic) is imported until a command runs, so
`s3memory --help` is instant.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from . import logs
from .arguments import error as _error
from .exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, Failed, UsageError, endpoint_hint
from .parser import COMMANDS, build_parser

if TYPE_CHECKING:
    from .context import Clients


def main(argv: Sequence[str] | None = None, *, clients: Clients | None = None) -> int:
    """Run the CLI. `clients(settings, agent_id)` builds the boto3 S3 and KMS clients of the
    commands that connect (default `StorageSettings.clients`): a seam for tests and embedders."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed help or a usage error
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if args.command is None:  # a bare `s3memory`: no command given is a usage error, shown with the help
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    from s3memory.errors import S3MemoryError
    from s3memory.memory.explain import cli_failure

    args.clients = clients  # read by context.connect
    module, name = COMMANDS[args.command]
    func: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    try:
        from .context import json_output

        with logs.to_stderr(args.log_level, failures=args.command == "mcp"), json_output(getattr(args, "json", False)):
            return func(args)
    except UsageError as err:
        _error(str(err))
        return EXIT_USAGE
    except Failed as err:
        _error(str(err))
        return EXIT_FAILED
    except S3MemoryError as err:
        line, usage = cli_failure(err)
        url = getattr(args, "endpoint_url", None) or os.environ.get("S3MEMORY_ENDPOINT_URL")
        _error(line + endpoint_hint(err, url))
        return EXIT_USAGE if usage else EXIT_FAILED
    except KeyboardInterrupt as err:  # a command interrupted where it can tell what it left says so
        _error(str(err) or "interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_FAILED
    except Exception as err:  # never a traceback: the type is enough to report it
        _error(f"unexpected {type(err).__name__}; nothing more is shown so that no secret can leak")
        return EXIT_FAILED
