"""`migrate`: convert an agent's file names to encrypted or plain (resumable; see admin.migrate)."""

from __future__ import annotations

import argparse
import time

from s3memory.core.names import NameMode

from .context import connect, failed_suffix, print_problems, print_summary, say
from .exits import EXIT_FAILED, EXIT_OK
from .progress import count, summary


def run_migrate(args: argparse.Namespace) -> int:
    from s3memory.admin.migrate import migrate

    started = time.monotonic()
    with connect(args) as ctx:
        progress = ctx.progress("migrate")
        try:
            vault, wait = ctx.vault(args.agent, names=None), ctx.settings.fence_seconds
            report = migrate(vault, NameMode(args.names), ctx.pool, progress, wait=wait)
        finally:
            progress.finish()
    print_problems(report.problems)
    if report.newer_kept:
        say(f"{count(report.newer_kept, 'file')} written at both names meanwhile: the newer copy kept, the older one "
            "a prior version")  # fmt: skip
    line = summary("moved", report.moved, None, time.monotonic() - started, "file")
    print_summary(f"{line} ({report.already:,} already stored {args.names}){failed_suffix(report.problems)}")
    if report.finished:
        say(f"{args.agent}: file names are {args.names}; tools of this agent need names={args.names!r} "
            f"(S3MEMORY_NAMES={args.names})")  # fmt: skip
        return EXIT_OK
    say(f"{args.agent}: the migration is not finished; tools refuse the agent until `s3memory migrate` completes it")
    return EXIT_FAILED
