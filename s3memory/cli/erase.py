"""Erase memory: `purge` (an agent, every version), `shred` (its keys first) and `prune` (old files)."""

from __future__ import annotations

import argparse
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from s3memory.core.paths import owner_name
from s3memory.storage.admin_store import Version
from s3memory.storage.keyspace import AgentKeyspace

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
from .erase_replica import on_both_sides, refuse_unreplicated_erase
from .exits import EXIT_FAILED, EXIT_OK, Failed, UsageError
from .history import say_if_locked
from .progress import count, summary

if TYPE_CHECKING:
    from collections.abc import Callable

    from s3memory.admin.common import Problem
    from s3memory.admin.locked import Held
    from s3memory.storage.admin_store import AdminStore

    from .context import Context


def _shown(space: AgentKeyspace, key: str) -> str:
    """The memory path of `key`; every key as stored when the agent's names cannot be read (one style)."""
    from s3memory.core.paths import escape_for_display
    from s3memory.storage.names import STORED_KEYS

    return escape_for_display(key) if space.names is STORED_KEYS else space.shown(key)


def _version_line(space: AgentKeyspace, version: Version) -> str:
    what = "delete marker" if version.delete_marker else "version"
    if version.version_id == "null":
        return _shown(space, version.key) + (" (delete marker)" if version.delete_marker else "")
    return f"{_shown(space, version.key)} ({what} {version.version_id})"


def _by_path(space: AgentKeyspace, versions: list[Version]) -> list[Version]:
    """`versions` in the order of what they show (encrypted names are stored in no useful order)."""
    return sorted(versions, key=lambda v: (_shown(space, v.key), v.delete_marker, v.version_id))


def _versions_json(space: AgentKeyspace, versions: list[Version]) -> list[dict[str, Any]]:
    """`[{"path", "version", "delete_marker"}]` in the order of the text lines."""
    return [{"path": _shown(space, v.key), "version": v.version_id, "delete_marker": v.delete_marker}
            for v in versions]  # fmt: skip


def _report(args: argparse.Namespace, deleted: list[dict[str, Any]], problems: list[Problem], **more: Any) -> None:
    """With --json: purge's, shred's or prune's report (`deleted`: what is, or with --dry-run would be, deleted)."""
    if args.json:
        emit_json({"agent": args.agent, "dry_run": args.dry_run, **more, "deleted": deleted,
                   "problems": problems_json(problems)})  # fmt: skip


def run_purge(args: argparse.Namespace) -> int:
    return on_both_sides(args, _purge)


def run_shred(args: argparse.Namespace) -> int:
    return on_both_sides(args, _shred)


def _purge(args: argparse.Namespace) -> int:
    from s3memory.admin.locked import purge_refusal
    from s3memory.admin.purge import list_versions, purge

    can_confirm(args, "purge")
    started = time.monotonic()
    with connect(args, keys=False) as ctx:
        refuse_unreplicated_erase(args, ctx, "purge")
        ctx.require(args.agent, versions=True)
        space = ctx.space(args.agent)
        root = space.root
        where = f"s3://{ctx.settings.bucket}/{root}"
        versions = list_versions(ctx.store, root)
        if not versions:
            say(f"nothing is stored under {where}")
            _report(args, [], [], remaining=0)
            return EXIT_OK
        bucket = ctx.store.bucket
        _refuse_if_locked(ctx, versions, lambda found: purge_refusal(bucket, found, len(versions), args.agent))
        markers = sum(v.delete_marker for v in versions)
        objects = len({v.key for v in versions})
        what = f"{count(len(versions), 'version')} ({count(markers, 'delete marker')}) of {count(objects, 'object')}"
        if args.dry_run:
            for version in _by_path(space, versions):
                say(f"would delete {_version_line(space, version)}")
            print_summary(f"would purge {what} under {where} in {time.monotonic() - started:.2f} s")
            _report(args, _versions_json(space, _by_path(space, versions)), [], remaining=len(versions))
            return EXIT_OK
        confirm(args, "purge", f"This permanently deletes {what} under {where}; it cannot be undone.")
        progress, countdown = ctx.progress("purge"), ctx.countdown("purge", "the erase")
        wait = ctx.settings.fence_seconds
        try:
            report = purge(ctx.store, space, ctx.pool, progress, versions, keystore=ctx.keystore, wait=wait,
                           countdown=countdown)  # fmt: skip
        finally:
            countdown.finish()
            progress.finish()
    for version in _by_path(space, report.deleted):
        say(f"deleted {_version_line(space, version)}")
    print_problems(report.problems)
    _arrived(report.arrived)
    gone = sum(v.delete_marker for v in report.deleted)
    line = f"purged {count(len(report.deleted), 'version')} ({count(gone, 'delete marker')})"
    line += f" of {owner_name(args.agent)}"
    line += f" in {time.monotonic() - started:.2f} s{failed_suffix(report.problems)}"
    _report(args, _versions_json(space, _by_path(space, report.deleted)), report.problems, remaining=report.remaining)
    if report.remaining:
        print_summary(line)
        raise Failed(f"{count(report.remaining, 'version')} still under {where}; stop the agent and purge again")
    print_summary(f"{line}; nothing remains under {where}")
    return EXIT_FAILED if report.problems else EXIT_OK


def _shred(args: argparse.Namespace) -> int:
    from s3memory.admin import locked
    from s3memory.admin.locked import keystore_refusal
    from s3memory.admin.purge import list_versions
    from s3memory.admin.shred import keystore_versions, shred

    can_confirm(args, "shred")
    started = time.monotonic()
    with connect(args, keys=False) as ctx:
        refuse_unreplicated_erase(args, ctx, "shred")
        ctx.require(args.agent, versions=True)
        space = ctx.space(args.agent)
        keystore = ctx.keystore
        keys_where = f"s3://{keystore.bucket}/{space.keystore_prefix}"
        key_versions = keystore_versions(keystore, space)
        objects = [] if args.keys_only else [v for v in list_versions(ctx.store, space.root)
                                              if not (keystore is ctx.store and space.is_keystore(v.key))]  # fmt: skip
        _refuse_if_locked(ctx, key_versions, lambda found: keystore_refusal(keystore.bucket, found), keystore)
        kept = locked.held(ctx.store, objects, ctx.pool)  # Object Lock: the keys go, the objects stay
        keys_only = args.keys_only or bool(kept)
        what = f"{count(len(key_versions), 'branch key version')} under {keys_where}"
        if not keys_only:
            what += f", then {count(len(objects), 'version')} under s3://{ctx.settings.bucket}/{space.root}"
        elif kept:
            objects = []
            say(locked.shred_note(ctx.store.bucket, kept))
        if args.dry_run:
            for version in key_versions + _by_path(space, objects):
                say(f"would delete {_version_line(space, version)}")
            print_summary(f"would shred {what} in {time.monotonic() - started:.2f} s")
            keys = _versions_json(space, key_versions)
            _report(args, _versions_json(space, _by_path(space, objects)), [], keys_only=args.keys_only,
                    branch_keys=keys, remaining=len(key_versions) + len(objects))  # fmt: skip
            return EXIT_OK
        confirm(args, "shred", f"This destroys {what}; no copy of this agent's memory can be decrypted after it.")
        progress, countdown = ctx.progress("shred"), ctx.countdown("shred", "the erase")
        wait = ctx.settings.fence_seconds
        try:
            report = shred(ctx.store, keystore, space, ctx.pool, progress, keys_only=keys_only, wait=wait,
                           countdown=countdown)  # fmt: skip
        finally:
            countdown.finish()
            progress.finish()
    for version in report.keys.deleted + _by_path(space, report.objects.deleted if report.objects else []):
        say(f"deleted {_version_line(space, version)}")
    problems = report.keys.problems + (report.objects.problems if report.objects else [])
    print_problems(problems)
    _arrived(report.objects.arrived if report.objects else 0)
    line = f"shredded {count(len(report.keys.deleted), 'branch key version')} of {owner_name(args.agent)}"
    if report.objects is not None:
        line += f" and purged {count(len(report.objects.deleted), 'version')}"
    line += f" in {time.monotonic() - started:.2f} s{failed_suffix(problems)}"
    print_summary(line)
    objects_deleted = _by_path(space, report.objects.deleted) if report.objects else []
    remaining = report.keys.remaining + (report.objects.remaining if report.objects else 0)
    _report(args, _versions_json(space, objects_deleted), problems, keys_only=args.keys_only,
            branch_keys=_versions_json(space, report.keys.deleted), remaining=remaining)  # fmt: skip
    if report.keys.remaining or report.keys.problems:
        left = report.keys.remaining or len(report.keys.problems)
        raise Failed(f"{count(left, 'branch key version')} still under {keys_where}; nothing else was deleted; "
                     "stop the agent and run shred again")  # fmt: skip
    if report.objects is not None and report.objects.remaining:
        raise Failed(f"{count(report.objects.remaining, 'version')} still under the agent's prefix, sealed under "
                     "the destroyed keys (undecryptable); stop the agent's tools and run shred again")  # fmt: skip
    return EXIT_FAILED if problems else EXIT_OK


def _refuse_if_locked(
    ctx: Context, versions: list[Version], refusal: Callable[[Held], str], store: AdminStore | None = None
) -> None:
    """Object Lock, read once before anything is deleted: refuse (exit 1) if it keeps any of `versions`."""
    from s3memory.admin.locked import held

    found = held(store or ctx.store, versions, ctx.pool)
    if found:
        raise Failed(refusal(found))


def _arrived(versions: int) -> None:
    if versions:
        say(f"{count(versions, 'version')} written meanwhile by a running tool erased too; stop the agent's tools")


def run_prune(args: argparse.Namespace) -> int:
    from s3memory.admin.prune import parse_age, prune

    by_access = args.not_accessed_for is not None
    flag, text = ("--not-accessed-for", args.not_accessed_for) if by_access else ("--older-than", args.older_than)
    try:
        age = parse_age(text)
    except ValueError as err:  # says what is wrong and gives an example
        raise UsageError(f"{flag}: {err}") from None
    can_confirm(args, "prune")
    cutoff = datetime.now(timezone.utc) - age
    started = time.monotonic()
    with connect(args, keys=False) as ctx:
        ctx.require(args.agent)
        say_if_locked(ctx, "prune")
        progress = ctx.progress("prune")
        space = ctx.space(args.agent)
        if not (args.dry_run or args.yes):  # what it would delete first, then the question
            planned = prune(ctx.store, space, ctx.pool, cutoff, progress, dry_run=True, by_access=by_access)
            if planned.candidates:
                files = count(len(planned.candidates), "file")
                confirm(args, "prune", f"This deletes {files} of {owner_name(args.agent)} ({flag} {text}: "
                        f"{_since(by_access)} since {cutoff:%Y-%m-%d %H:%M:%S} UTC).")  # fmt: skip
        report = prune(ctx.store, space, ctx.pool, cutoff, progress, dry_run=args.dry_run, by_access=by_access)
        progress.finish()
    would = "would " if args.dry_run else ""
    for item in report.candidates:
        when = item.last_modified.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        what = f"{'would delete' if would else 'deleted'} {item.path}"
        # with --not-accessed-for: "last used" only for a recorded access (S3MEMORY_TRACK_ACCESS)
        last = "last used" if item.used else "last modified, no read recorded since" if by_access else "last modified"
        say(f"{what} ({last} {when}, {count(item.size, 'byte')})")
    print_problems(report.problems)
    done = len(report.candidates)
    nbytes = sum(i.size for i in report.candidates)
    line = summary(f"{would}prune" if would else "pruned", done, nbytes, time.monotonic() - started)
    since = _since(by_access)
    print_summary(f"{line} ({since} since {cutoff:%Y-%m-%d %H:%M:%S} UTC){failed_suffix(report.problems)}")
    deleted = [{"path": i.path, "last_modified": _iso(i.last_modified), "size": i.size} for i in report.candidates]
    _report(args, deleted, report.problems, cutoff=_iso(cutoff), by="access" if by_access else "modified",
            bytes=nbytes)  # fmt: skip
    return EXIT_FAILED if report.problems else EXIT_OK


def _since(by_access: bool) -> str:
    return "not read or modified" if by_access else "not modified"


def _iso(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
