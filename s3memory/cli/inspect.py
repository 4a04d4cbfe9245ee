"""Look at stored memory: `ls`, `cat` (exactly as the tool's `view`), `agents`, `verify`."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from s3memory.core import render
from s3memory.core.mounts import ENV_VARIABLE

from .agent_check import empty_mount_note, empty_mounts, prefix_note
from .context import Context, connect, emit_json, failed_suffix, print_problems, print_summary, say
from .exits import EXIT_FAILED, EXIT_OK, UsageError
from .pending import has_pending, note_pending, note_unread, pending_of
from .progress import count, summary

if TYPE_CHECKING:
    from s3memory.admin.agents import AgentUsage
    from s3memory.memory.engine import Memory


def memory_for(ctx: Context, agent: str, *, read_only: bool = True) -> Memory:
    """The tool's command engine for `agent`, without the SDK (no anthropic import). `read_only`
    (inspection): it completes no interrupted change (see `pending`) and records no access."""
    from s3memory.errors import StorageError
    from s3memory.memory.open import memory_of

    # A storage failure here: the command's own request fails the same way and says so in the tool's words.
    with contextlib.suppress(StorageError):
        ctx.require(agent)
    vault = ctx.vault(agent, read_only=read_only)
    return memory_of(vault, ctx.full.memory_options(), ctx.pool.executor, read_only=read_only)


def _view(memory: Memory, path: str, view_range: list[int] | None = None) -> str:
    try:
        return memory.view(path, view_range)
    finally:
        note_pending(memory.vault.agent_id, memory.recovery.pending)


def run_ls(args: argparse.Namespace) -> int:
    with connect(args) as ctx:
        memory = memory_for(ctx, args.agent)
        if not args.json:
            say(_view(memory, args.path))
            return EXIT_OK
        try:
            path, found = memory.look(args.path)
        finally:
            note_pending(args.agent, memory.recovery.pending)
    if isinstance(found, str):
        emit_json({"type": "file", "view": render.file_view(path.display, found, None, memory.limits.max_view_chars)})
        return EXIT_OK
    entries = [
        {
            "path": f"{path.display}/{e.name.rstrip('/')}",
            "type": "directory" if e.is_dir else "file",
            "size": e.size,
            "size_shown": e.shown_size,
        }
        for e in found
    ]
    emit_json({"type": "directory", "path": path.display, "entries": entries})
    return EXIT_OK


def run_cat(args: argparse.Namespace) -> int:
    if args.view_range is not None:  # what no file can satisfy is a usage error here (the tool's words stay the tool's)
        start, end = args.view_range
        if start < 1:
            raise UsageError(f"--view-range: START ({start}) must be 1 or more; the first line is 1")
        if end == 0 or end < -1:
            raise UsageError(f"--view-range: END ({end}) must be a line number or -1 for the end of the file")
        if end != -1 and end < start:
            raise UsageError(f"--view-range: END ({end}) is before START ({start}); use -1 for the end of the file")
    with connect(args) as ctx:
        text = _view(memory_for(ctx, args.agent), args.path, args.view_range)
    if args.json:  # what the tool's `view` answered, as `ls --json` gives a file
        emit_json({"type": "file", "path": args.path, "view": text})
    else:
        say(text)
    return EXIT_OK


# --- agents, verify --------------------------------------------------------------------


def run_agents(args: argparse.Namespace) -> int:
    from s3memory.admin.agents import agents
    from s3memory.storage.keyspace import AgentKeyspace

    started = time.monotonic()
    with connect(args, keys=False) as ctx:
        progress = ctx.progress("agents")
        usage = agents(ctx.store, ctx.settings.prefix, ctx.pool, progress)
        progress.finish()
        spaces = [AgentKeyspace(ctx.settings.prefix, u.agent) for u in usage]
        pending = [s.agent_id for s, f in ctx.pool.completed(lambda s: has_pending(ctx.store, s), spaces) if f.result()]
        hints = [f.result() for _, f in ctx.pool.completed(lambda a: prefix_note(ctx.store, ctx.settings.prefix, a),
                                                           [u.agent for u in usage])]  # fmt: skip
    _print_usage(args, usage, "agent", time.monotonic() - started)
    for hint in sorted(h for h in hints if h):
        sys.stderr.write(hint + "\n")
    note_unread(sorted(pending))
    return EXIT_OK


def run_stores(args: argparse.Namespace) -> int:
    from s3memory.admin.agents import list_stores

    started = time.monotonic()
    with connect(args, keys=False) as ctx:
        progress = ctx.progress("stores")
        usage = list_stores(ctx.store, ctx.settings.prefix, ctx.pool, progress)
        progress.finish()
        empty = empty_mounts(ctx.store, ctx.keystore, ctx.settings.prefix, os.environ.get(ENV_VARIABLE, ""))
    _print_usage(args, usage, "store", time.monotonic() - started, empty)
    for name, store_id in empty:
        sys.stderr.write(empty_mount_note(name, store_id) + "\n")
    return EXIT_OK


def _print_usage(
    args: argparse.Namespace, usage: list[AgentUsage], kind: str, seconds: float, empty: Sequence[tuple[str, str]] = ()
) -> None:
    """`agents` and `stores`: one line per agent or store (or one JSON list), then the summary.
    `empty`: (mount, store) of each mounted store with nothing stored, shown after the stores."""
    objects, nbytes = sum(u.objects for u in usage), sum(u.bytes for u in usage)
    if args.json:
        rows: list[dict[str, object]] = [{kind: u.agent, "objects": u.objects, "bytes": u.bytes} for u in usage]
        rows += [{kind: s, "objects": 0, "bytes": 0, "nothing_stored": True, "mounted_as": n} for n, s in empty]
        emit_json(rows)
    else:
        width = max([5, *(len(u.agent) for u in usage), *(len(s) for _, s in empty)])
        say(f"{kind.upper():<{width}}  {'OBJECTS':>9}  {'BYTES':>15}")
        for u in usage:
            say(f"{u.agent:<{width}}  {u.objects:>9,}  {u.bytes:>15,}")
        for name, store_id in empty:
            say(f"{store_id:<{width}}  {'-':>9}  {'-':>15}  nothing stored (mounted at /memories/{name})")
    line = f"{count(len(usage), kind)}, {count(objects, 'object')}, {count(nbytes, 'byte')} in {seconds:.2f} s"
    print_summary(line, args.json)


def run_verify(args: argparse.Namespace) -> int:
    from s3memory.admin.agents import store_ids
    from s3memory.admin.verify import verify

    started = time.monotonic()
    with connect(args) as ctx:
        if args.history and ctx.store.versioning() != "Enabled":
            raise UsageError(
                f"verify --history needs S3 versioning, which is not enabled for bucket {ctx.settings.bucket}: "
                "there are no earlier versions to check for replays; run verify without --history"
            )
        progress = ctx.progress("verify")
        vaults = [ctx.vault(a) for a in ctx.agent_ids(args.agent)]
        skipped = 0 if args.agent else len(store_ids(ctx.store, ctx.settings.prefix))  # stores: only by --store
        report = verify(vaults, ctx.pool, progress)
        progress.finish()
        for vault in vaults:
            if vault.agent_id not in report.unread:
                note_pending(vault.agent_id, pending_of(vault))
        if args.history:
            from s3memory.admin.replays import replays

            read = [v for v in vaults if v.agent_id not in report.unread]
            report.problems = sorted(report.problems + [p for v in read for p in replays(ctx.store, v, ctx.pool)])
    if args.json:
        problems = [{"agent": p.agent, "path": p.path, "reason": p.reason} for p in report.problems]
        counts = {"verified": report.checked, "bookkeeping": report.bookkeeping, "bytes": report.nbytes}
        formats = {str(version): n for version, n in sorted(report.formats.items())}
        branches = [
            {"agent": b.agent, "id": b.branch_id, "active": b.active, "objects": b.objects} for b in report.branch_keys
        ]
        names = [{"agent": k.agent, "id": k.branch_id, "names": k.mode} for k in report.name_keys]
        emit_json(
            {"ok": not problems, **counts, "failed": len(problems), "problems": problems}
            | {"formats": formats, "branch_keys": branches, "name_keys": names, "stores_not_checked": skipped}
        )
    else:
        print_problems(report.problems)
        if report.formats:
            say("formats: " + ", ".join(f"{v}: {count(n, 'object')}" for v, n in sorted(report.formats.items())))
        for b in report.branch_keys:
            state = "active" if b.active else "unreferenced" if not b.objects else "older"
            say(f"branch key {b.agent} {b.branch_id} ({state}): {count(b.objects, 'object')}")
        for k in report.name_keys:
            say(f"name key {k.agent} {k.branch_id} (file names {k.mode})")
    line = summary("verified", report.checked, report.nbytes, time.monotonic() - started)
    stores = f"; {count(skipped, 'shared store')} not checked (verify --store ID checks one)" if skipped else ""
    print_summary(line + f" ({report.bookkeeping:,} bookkeeping)" + failed_suffix(report.problems) + stores, args.json)
    return EXIT_FAILED if report.problems else EXIT_OK
