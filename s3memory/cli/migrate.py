"""`migrate`: convert an agent's file names to encrypted or plain (resumable; see admin.migrate)."""

from __future__ import annotations

import argparse
import time

from s3memory.core.names import NameMode
from s3memory.core.paths import owner_name

from .context import (
    can_confirm,
    confirm,
    connect,
    emit_json,
    failed_suffix,
    print_problems,
    print_summary,
    problems_json,
    say,
)
from .exits import EXIT_FAILED, EXIT_OK
from .progress import count, summary


def run_migrate(args: argparse.Namespace) -> int:
    from s3memory.admin.migrate import migrate

    can_confirm(args, "migrate")
    started = time.monotonic()
    with connect(args) as ctx:
        ctx.require(args.agent)
        if args.dry_run:
            from s3memory.admin.plans import plan_migrate

            plan = plan_migrate(ctx.vault(args.agent, names=None), NameMode(args.names))
            for path in plan.moves:
                say(f"would move {path.display}")
            print_problems(plan.problems)
            print_summary(f"would move {count(len(plan.moves), 'file')} of {owner_name(args.agent)} to "
                          f"{args.names} names ({plan.already:,} already stored {args.names}); "
                          "nothing was changed (--dry-run)"
                          + failed_suffix(plan.problems))  # fmt: skip
            if args.json:
                emit_json({"agent": args.agent, "names": args.names, "dry_run": True, "moved": len(plan.moves),
                           "already": plan.already, "finished": False,
                           "problems": problems_json(plan.problems)})  # fmt: skip
            return EXIT_FAILED if plan.problems else EXIT_OK
        confirm(args, "migrate", f"This moves every file of {owner_name(args.agent)} to {args.names} names; "
                "the agent's tools refuse it until the migration completes.", nothing="changed")  # fmt: skip
        progress, countdown = ctx.progress("migrate"), ctx.countdown("migrate", "the migration")
        try:
            vault, wait = ctx.vault(args.agent, names=None, read_only=False), ctx.settings.fence_seconds
            report = migrate(vault, NameMode(args.names), ctx.pool, progress, wait=wait, countdown=countdown)
        finally:
            countdown.finish()
            progress.finish()
    print_problems(report.problems)
    if report.newer_kept:
        say(f"{count(report.newer_kept, 'file')} written at both names meanwhile: the newer copy kept, the older one "
            "a prior version")  # fmt: skip
    line = summary("moved", report.moved, None, time.monotonic() - started, "file")
    print_summary(f"{line} ({report.already:,} already stored {args.names}){failed_suffix(report.problems)}")
    if args.json:
        emit_json({"agent": args.agent, "names": args.names, "dry_run": False, "moved": report.moved,
                   "already": report.already, "finished": report.finished,
                   "problems": problems_json(report.problems)})  # fmt: skip
    if report.finished:
        say(f"{args.agent}: file names are {args.names}; tools of this agent need names={args.names!r} "
            f"(S3MEMORY_NAMES={args.names})")  # fmt: skip
        return EXIT_OK
    say(f"{args.agent}: the migration is not finished; tools refuse the agent until `s3memory migrate` completes it")
    return EXIT_FAILED
