"""Versions of memory: `history`, `show` (one version, as `view` shows it) and `restore`."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from s3memory.core.paths import owner_name

from .context import (
    Context,
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
from .exits import EXIT_FAILED, EXIT_OK, Failed, UsageError
from .pending import note_pending, pending_of
from .progress import count

if TYPE_CHECKING:
    from s3memory.admin.history import Change
    from s3memory.admin.restore import Planned
    from s3memory.core.paths import MemoryPath


def _versioning_note(ctx: Context) -> None:
    status = ctx.store.versioning()
    if status != "Enabled":
        state = "suspended" if status == "Suspended" else "off"
        sys.stderr.write(
            f"note: versioning is {state} for bucket {ctx.settings.bucket}: an overwritten or deleted file "
            "keeps no earlier version (turn it on: aws s3api put-bucket-versioning ... Status=Enabled)\n"
        )


def run_history(args: argparse.Namespace) -> int:
    from s3memory.admin.history import history
    from s3memory.core.paths import escape_refused

    started = time.monotonic()
    with connect(args) as ctx:
        ctx.require(args.agent, versions=True)
        _versioning_note(ctx)
        vault = ctx.vault(args.agent)
        path = vault.parse(args.path) if args.path else None
        report = history(ctx.store, vault, path, ctx.pool)
        note_pending(args.agent, pending_of(vault))
    if report.migrated_at is not None:
        sys.stderr.write(
            f"note: the file names of {owner_name(args.agent)} were converted (s3memory migrate) at "
            f"{report.migrated_at.strftime('%Y-%m-%dT%H:%M:%SZ')}; versions from before are stored under the "
            "old names and marked (old names)\n"
        )
    if args.json:
        emit_json(
            [
                {
                    "time": _json_time(c.time),
                    "path": escape_refused(c.path),  # a stored name a path may not hold, escaped as `ls` does
                    "action": escape_refused(c.action),  # renamed-from PATH
                    "size": c.size,
                    "actor": c.actor or None,
                    "agent": c.agent or None,
                    "command": c.command or None,
                    "version": c.version_id,
                    "current": c.latest,
                    "repeats": c.repeats or None,
                    "old_names": c.old_names,
                    "authenticated": c.authenticated if c.size is not None else None,
                }
                for c in report.changes
            ]
        )
    else:
        for c in report.changes:
            say(_history_line(c))
    print_problems(report.problems)
    line = f"{count(len(report.changes), 'version')} in {time.monotonic() - started:.2f} s"
    print_summary(line + failed_suffix(report.problems), args.json)
    return EXIT_FAILED if report.problems else EXIT_OK


def _json_time(when: datetime | None) -> str | None:
    """RFC 3339 in UTC with `Z` and microseconds, as every time in history's JSON."""
    return None if when is None else when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _history_line(c: Change) -> str:
    from s3memory.core.paths import escape_refused

    when = f"{c.time:%Y-%m-%dT%H:%M:%S}.{c.time.microsecond // 1000:03d}Z" if c.time else "-"
    size = "-" if c.size is None else count(c.size, "byte")
    current = " (current)" if c.latest and c.size is not None and not c.old_names else ""
    actor = f"actor {c.actor or '-'}" + (f" agent {c.agent}" if c.agent else "")
    if c.size is None and c.command and c.command != "delete":
        actor += f" ({c.command})"  # a deletion made by an operator command: restore, prune, ...
    notes = ""
    if c.action.startswith("renamed-from "):  # the source path after the columns, not inside them
        notes += f"  from {escape_refused(c.action.removeprefix('renamed-from '))}"
    if c.action == "replayed":
        notes += f"  repeats the sealed bytes of version {c.repeats}"
    elif c.action == "migrated":
        notes += f"  copy of version {c.repeats}"
    if c.old_names:
        notes += "  (old names)"
    if not c.authenticated:
        notes += "  (not authenticated)"
    action, path = escape_refused(c.action.split(" ", 1)[0].removesuffix("-from")), escape_refused(c.path)
    return f"{when}  {action:<9} {path}  {size}  {actor}  version {c.version_id}{current}{notes}"


def run_show(args: argparse.Namespace) -> int:
    from s3memory.admin.history import file_versions, show
    from s3memory.core import render
    from s3memory.core.limits import DEFAULT_MAX_VIEW_CHARS
    from s3memory.errors import NotFound, StorageRefused

    with connect(args) as ctx:
        ctx.require(args.agent, versions=True)
        vault = ctx.vault(args.agent)
        path = vault.parse(args.path)
        try:
            text = show(ctx.store, vault, path, args.version)
        except (NotFound, StorageRefused) as err:
            # S3 answers a delete marker's version with 404 or 405: the listing tells which it is.
            markers = [v for v in file_versions(ctx.store, vault.key(path)) if v.version_id == args.version]
            if markers and markers[0].delete_marker:
                raise Failed(
                    f"version {args.version} of {path.display} is its deletion (a delete marker): it has no text; "
                    "`s3memory history` lists the versions before it"
                ) from None
            if isinstance(err, StorageRefused):
                raise
            raise Failed(f"{path.display} has no version {args.version}; `s3memory history` lists them") from None
        note_pending(args.agent, pending_of(vault))
    say(render.file_view(path.display, text, None, DEFAULT_MAX_VIEW_CHARS))
    return EXIT_OK


def say_if_locked(ctx: Context, command: str) -> None:
    """Object Lock allows what `restore` and `prune` do (new versions, delete markers); say so once."""
    from s3memory.admin.locked import keeps_note, profile

    lock = profile(ctx.store)
    if lock.enabled:
        say(keeps_note(command, ctx.store.bucket, lock))


def run_restore(args: argparse.Namespace) -> int:
    from s3memory.admin.restore import parse_time, plan, restore

    try:
        at = parse_time(args.at)
    except ValueError as err:
        raise UsageError(f"--at: {err}") from None
    now = datetime.now(timezone.utc)
    if at > now:
        raise UsageError(
            f"--at: {args.at} is in the future (it is {now.strftime('%Y-%m-%dT%H:%M:%SZ')} now): every file is "
            "already as it will be then; give an earlier time (`s3memory history` lists the changes)"
        )
    can_confirm(args, "restore")
    started = time.monotonic()
    with connect(args) as ctx:
        if ctx.store.versioning() != "Enabled":
            raise Failed(
                f"restore needs S3 versioning, which is not enabled for bucket {ctx.settings.bucket}: "
                "there are no earlier versions to bring back"
            )
        ctx.require(args.agent, versions=True)
        say_if_locked(ctx, "restore")
        vault = ctx.vault(args.agent, read_only=False)
        scope = vault.parse(args.path) if args.path else None
        when = at.isoformat()
        if args.dry_run:
            steps = plan(ctx.store, vault, at, scope)
            for step in steps:
                what = f"{step.path.display} (version {step.version_id})" if step.step == "write" else step.path.display
                say(_unknown(step, when) if step.step == "unknown" else f"would {step.step} {what}")
            changed = [step for step in steps if step.step != "unknown"]
            print_summary(f"would restore {count(len(changed), 'file')} to {when}{_left(len(steps) - len(changed))}")
            writes = sum(s.step == "write" for s in changed)
            _restored(args, when, scope, steps, [writes, len(changed) - writes, 0], False, [])
            return EXIT_OK
        if not args.yes:  # what it would change first, then the question
            steps = plan(ctx.store, vault, at, scope)
            if steps:
                writing = count(sum(step.step == "write" for step in steps), "file")
                deleting = count(sum(step.step != "write" for step in steps), "file")
                confirm(args, "restore", f"This writes {writing} and deletes {deleting} of {owner_name(args.agent)} "
                        f"as they were at {when} (the replaced versions stay in the bucket).",
                        nothing="changed")  # fmt: skip
        progress = ctx.progress("restore")
        report = restore(ctx.store, vault, at, scope, ctx.pool, progress)
        progress.finish()
    print_problems(report.problems)
    for step in report.unknown:
        say(_unknown(step, when))
    done = f"{report.written:,} written, {report.deleted:,} deleted, {report.unchanged:,} already as they were"
    done += _left(len(report.unknown))
    line = f"restored {count(len(report.planned), 'file')} to {when} ({done}) in {time.monotonic() - started:.2f} s"
    if report.resumed:
        say("completed an interrupted restore to the same time")
    if report.problems:
        say("the restore is not finished: run the same command again to complete it")
    print_summary(line + failed_suffix(report.problems))
    done_counts = [report.written, report.deleted, report.unchanged]
    _restored(args, when, scope, report.planned, done_counts, report.resumed, problems_json(report.problems))
    return EXIT_FAILED if report.problems else EXIT_OK


def _restored(
    args: argparse.Namespace,
    when: str,
    scope: MemoryPath | None,
    steps: Sequence[Planned],
    counts: list[int],  # written, deleted, unchanged (with --dry-run: would be written and deleted)
    resumed: bool,
    problems: list[dict[str, str]],
) -> None:
    if args.json:
        planned = [{"path": s.path.display, "step": s.step, "version": s.version_id or None} for s in steps]
        written, deleted, unchanged = counts
        emit_json({"agent": args.agent, "at": when, "path": scope.display if scope else None, "dry_run": args.dry_run,
                   "planned": planned, "written": written, "deleted": deleted, "unchanged": unchanged,
                   "resumed": resumed, "problems": problems})  # fmt: skip


def _unknown(step: Planned, when: str) -> str:
    return f"left alone {step.path.display}: its state at {when} is unknown ({step.why})"


def _left(unknown: int) -> str:
    return f", {count(unknown, 'file')} left alone: state then unknown" if unknown else ""
