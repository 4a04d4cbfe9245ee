"""Key management: `rewrap` (branch keys, and format-1 objects, under another KMS key), `rotate`
(a new active branch key now) and `reseal` (objects re-sealed under the active branch key)."""

from __future__ import annotations

import argparse
import os
import time

from s3memory.core.paths import escape_for_display

from .context import connect, emit_json, failed_suffix, print_problems, print_summary, problems_json, say
from .exits import EXIT_FAILED, EXIT_OK, UsageError
from .progress import count, summary

_FORMAT1_NOTE = (
    "objects in format 1 keep data keys under the old KMS key: `s3memory verify` counts them, "
    "`s3memory reseal` converts them (or run rewrap again with --objects)"
)


def run_rewrap(args: argparse.Namespace) -> int:
    from s3memory.admin.branch_keys import rewrap_keys
    from s3memory.admin.rewrap import RewrapReport, rewrap
    from s3memory.errors import KeyMisconfigured
    from s3memory.storage.keyspace import AgentKeyspace
    from s3memory.storage.keystore import Keystore
    from s3memory.storage.kms import KmsKeys

    started = time.monotonic()
    source = args.kms_key_id or os.environ.get("S3MEMORY_KMS_KEY_ID") or None
    with connect(args, keys=False) as ctx:
        keys = KmsKeys(args.to_key, kms_client=ctx.kms)
        progress = ctx.progress("rewrap")
        agents = ctx.agent_ids(args.agent)
        # Names only show the objects' problems; read before the name keys move.
        spaces = [ctx.space(a) if args.objects else AgentKeyspace(ctx.settings.prefix, a) for a in agents]
        objects = RewrapReport()
        try:
            report = rewrap_keys([Keystore(ctx.keystore, keys, s) for s in spaces], keys, args.to_key, progress,
                                 source=source)  # fmt: skip
            if args.objects:
                objects = rewrap(ctx.store, spaces, keys, args.to_key, ctx.pool, progress, source=source)
        except KeyMisconfigured as err:
            flags = "--to-key" if source is None else "--to-key and the source key (S3MEMORY_KMS_KEY_ID, --kms-key-id)"
            raise UsageError(f"KMS refused the keys ({err.code}); nothing was rewrapped; check {flags}") from None
        finally:
            progress.finish()
    problems = sorted(report.problems + objects.problems)
    print_problems(problems)
    destination = escape_for_display(args.to_key)
    line = summary("rewrapped", report.rewrapped, None, time.monotonic() - started, "branch key")
    extra = f"{report.already:,} already under {destination}, {count(report.kms_calls + objects.kms_calls, 'KMS call')}"
    if report.name_keys or report.name_keys_already:  # agents with encrypted file names
        extra += f"; {count(report.name_keys, 'name key')} rewrapped, {report.name_keys_already:,} already"
    if args.objects:
        extra += f"; {count(objects.rewrapped, 'format-1 object')} rewrapped, {objects.already:,} already"
    print_summary(f"{line} ({extra}){failed_suffix(problems)}")
    if not args.objects:
        say(f"note: {_FORMAT1_NOTE}")
    if args.json:
        moved = {"rewrapped": objects.rewrapped, "already": objects.already} if args.objects else None
        emit_json({"to_key": args.to_key, "rewrapped": report.rewrapped, "already": report.already,
                   "name_keys": report.name_keys, "name_keys_already": report.name_keys_already, "objects": moved,
                   "kms_calls": report.kms_calls + objects.kms_calls, "problems": problems_json(problems)})  # fmt: skip
    return EXIT_FAILED if problems else EXIT_OK


def run_rotate(args: argparse.Namespace) -> int:
    from s3memory.admin.branch_keys import rotate

    started = time.monotonic()
    with connect(args) as ctx:
        progress = ctx.progress("rotate")
        done, problems = rotate([ctx.writing_vault(a).keystore for a in ctx.agent_ids(args.agent)], progress)
        progress.finish()
    for agent, rotation in done:
        was = f" (was {rotation.previous.branch_id})" if rotation.previous else " (its first)"
        how = "" if rotation.created else "; another process rotated it at the same moment and its key is used"
        say(f"{agent}: branch key {rotation.active.branch_id} is active{was}{how}")
    print_problems(problems)
    line = f"rotated {count(len(done), 'agent')} in {time.monotonic() - started:.2f} s"
    print_summary(line + failed_suffix(problems))
    if args.json:
        rotated = [{"agent": agent, "active": r.active.branch_id, "created": r.created,
                    "previous": r.previous.branch_id if r.previous else None} for agent, r in done]  # fmt: skip
        emit_json({"rotated": rotated, "problems": problems_json(problems)})
    return EXIT_FAILED if problems else EXIT_OK


def run_reseal(args: argparse.Namespace) -> int:
    from s3memory.admin.reseal import reseal

    started = time.monotonic()
    with connect(args) as ctx:
        progress = ctx.progress("reseal")
        report = reseal(ctx.writing_vault(args.agent), ctx.pool, progress)
        progress.finish()
    print_problems(report.problems)
    line = summary("resealed", report.resealed, None, time.monotonic() - started)
    extra = f"{report.already:,} already under branch key {report.active}"
    print_summary(f"{line} ({extra}){failed_suffix(report.problems)}")
    if args.json:
        emit_json({"agent": args.agent, "resealed": report.resealed, "already": report.already,
                   "active": report.active, "problems": problems_json(report.problems)})  # fmt: skip
    return EXIT_FAILED if report.problems else EXIT_OK
