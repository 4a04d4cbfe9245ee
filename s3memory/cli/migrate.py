"""`migrate`: convert an agent's file names to encrypted or plain (resumable; see admin.migrate)."""

from __future__ import annotations

import argparse
import time

from s3memory.core.names import NameMode

from .context import connect, emit_json, failed_suffix, print_problems, print_summary, problems_json, say
from .exits import EXIT_FAILED, EXIT_OK
from .progress import summary


def run_migrate(args: argparse.Namespace) -> int:
    from s3memory.admin.migrate import migrate

    started = time.monotonic()
    with connect(args) as ctx:
        progress = ctx.progress("migrate")
        try:
            report = migrate(ctx.vault(args.agent, names=None), NameMode(args.names), ctx.pool, progress)
        finally:
            progress.finish()
    print_problems(report.problems)
    line = summary("moved", report.moved, None, time.monotonic() - started, "file")
    print_summary(f"{line} ({report.already:,} already stored {args.names}){failed_suffix(report.problems)}")
    if args.json:
        emit_json({"agent": args.agent, "names": args.names, "moved": report.moved, "already": report.already,
                   "finished": report.finished, "problems": problems_json(report.problems)})  # fmt: skip
    if report.finished:
        say(f"{args.agent}: file names are {args.names}; tools of this agent need names={args.names!r} "
            f"(S3MEMORY_NAMES={args.names})")  # fmt: skip
        return EXIT_OK
    say(f"{args.agent}: the migration is not finished; tools refuse the agent until `s3memory migrate` completes it")
    return EXIT_FAILED
