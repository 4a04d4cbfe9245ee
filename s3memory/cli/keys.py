"""Key management: `rewrap` (branch keys, and format-1 objects, under another KMS key), `rotate`
(a new active branch key now) and `reseal` (objects re-sealed under the active branch key)."""

from __future__ import annotations

import argparse
import os
import time
from typing import TYPE_CHECKING

from s3memory.core.paths import escape_for_display, owner_name, store_of

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
from .exits import EXIT_FAILED, EXIT_OK, UsageError
from .progress import count, summary

if TYPE_CHECKING:
    from s3memory.storage.keystore import Keystore

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

    can_confirm(args, "rewrap")
    started = time.monotonic()
    source = args.kms_key_id or os.environ.get("S3MEMORY_KMS_KEY_ID") or None
    with connect(args, keys=False) as ctx:
        keys = KmsKeys(args.to_key, kms_client=ctx.kms)
        agents = ctx.agent_ids(args.agent)
        if args.dry_run:
            return _plan_rewrap(ctx, agents, args)
        whose = f"{owner_name(args.agent)}" if args.agent else f"{count(len(agents), 'agent')} under {_where(ctx)}"
        confirm(args, "rewrap", f"This re-wraps the branch keys of {whose} under {escape_for_display(args.to_key)}; "
                "the agents' tools need access to that key from then on.", nothing="changed",
                bucket=ctx.settings.bucket)  # fmt: skip
        progress = ctx.progress("rewrap")
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
        emit_json({"to_key": args.to_key, "dry_run": False, "rewrapped": report.rewrapped, "already": report.already,
                   "name_keys": report.name_keys, "name_keys_already": report.name_keys_already, "objects": moved,
                   "kms_calls": report.kms_calls + objects.kms_calls, "problems": problems_json(problems)})  # fmt: skip
    return EXIT_FAILED if problems else EXIT_OK


def _who(owner: str) -> str:
    """How a line of `rotate` starts: the agent id, or `store ID`."""
    return owner if store_of(owner) is None else owner_name(owner)


def _where(ctx: Context) -> str:
    return f"s3://{ctx.settings.bucket}/{ctx.settings.prefix}"


def _keystores(ctx: Context, agents: list[str]) -> list[Keystore]:
    """The agents' keystores, read without a key source (a plan unwraps nothing)."""
    from s3memory.storage.keys import Keys
    from s3memory.storage.keyspace import AgentKeyspace
    from s3memory.storage.keystore import Keystore

    return [Keystore(ctx.keystore, Keys(), AgentKeyspace(ctx.settings.prefix, a), read_only=True) for a in agents]


def _plan_rewrap(ctx: Context, agents: list[str], args: argparse.Namespace) -> int:
    from s3memory.admin.plans import plan_keys

    plans, problems = plan_keys(_keystores(ctx, agents))
    destination = escape_for_display(args.to_key)
    for plan in plans:
        also = " and its name key" if plan.name_keys else ""
        say(f"would rewrap {count(plan.branch_keys, 'branch key')}{also} of {owner_name(plan.agent)} "
            f"under {destination}")  # fmt: skip
    print_problems(problems)
    keys, names = sum(p.branch_keys for p in plans), sum(p.name_keys for p in plans)
    extra = f", {count(names, 'name key')}" if names else ""
    extra += "; format-1 objects would be read (--objects)" if args.objects else ""
    print_summary(f"would rewrap up to {count(keys, 'branch key')}{extra} of {count(len(plans), 'agent')}; "
                  f"keys already under {destination} stay as they are; nothing was changed (--dry-run)"
                  + failed_suffix(problems))  # fmt: skip
    if args.json:  # a plan unwraps nothing, so it cannot tell which keys are already under the key
        emit_json({"to_key": args.to_key, "dry_run": True, "rewrapped": keys, "already": None, "name_keys": names,
                   "name_keys_already": None, "objects": None, "kms_calls": 0,
                   "problems": problems_json(problems)})  # fmt: skip
    return EXIT_FAILED if problems else EXIT_OK


def run_rotate(args: argparse.Namespace) -> int:
    from s3memory.admin.branch_keys import rotate

    started = time.monotonic()
    if args.dry_run:
        from s3memory.admin.plans import plan_keys

        with connect(args, keys=False) as ctx:
            plans, problems = plan_keys(_keystores(ctx, ctx.agent_ids(args.agent)), rotation=True)
        for plan in plans:
            was = f" (now {plan.active})" if plan.active else " (its first)"
            what = f"would make branch key generation {plan.next_generation} active{was}"
            say(f"{_who(plan.agent)}: {what}{_voids(plan.voids)}")
        print_problems(problems)
        print_summary(f"would rotate {count(len(plans), 'agent')}; nothing was changed (--dry-run)"
                      + failed_suffix(problems))  # fmt: skip
        if args.json:  # the new keys do not exist yet: no id, nothing created
            planned = [{"agent": p.agent, "active": None, "created": False, "previous": p.active or None,
                        "voided": list(p.voids)} for p in plans]  # fmt: skip
            emit_json({"dry_run": True, "rotated": planned, "problems": problems_json(problems)})
        return EXIT_FAILED if problems else EXIT_OK
    with connect(args) as ctx:
        progress = ctx.progress("rotate")
        done, problems = rotate([ctx.writing_vault(a).keystore for a in ctx.agent_ids(args.agent)], progress)
        progress.finish()
    for agent, rotation in done:
        was = f" (was {rotation.previous.branch_id})" if rotation.previous else " (its first)"
        how = "" if rotation.created else "; another process rotated it at the same moment and its key is used"
        say(f"{_who(agent)}: branch key {rotation.active.branch_id} is active{was}{how}{_voids(rotation.voided)}")
    print_problems(problems)
    line = f"rotated {count(len(done), 'agent')} in {time.monotonic() - started:.2f} s"
    print_summary(line + failed_suffix(problems))
    if args.json:
        rotated = [{"agent": agent, "active": r.active.branch_id, "created": r.created,
                    "previous": r.previous.branch_id if r.previous else None, "voided": list(r.voided)}
                    for agent, r in done]  # fmt: skip
        emit_json({"dry_run": False, "rotated": rotated, "problems": problems_json(problems)})
    return EXIT_FAILED if problems else EXIT_OK


def _voids(generations: tuple[int, ...]) -> str:
    """What a rotation says of the claims out of sequence it voided (see `core.keyring.void_entry`)."""
    if not generations:
        return ""
    listed = ", ".join(str(g) for g in generations)
    return f"; voided generation {listed} (claimed out of sequence; s3memory verify lists it)"


def run_reseal(args: argparse.Namespace) -> int:
    from s3memory.admin.reseal import reseal

    can_confirm(args, "reseal")
    started = time.monotonic()
    with connect(args) as ctx:
        ctx.require(args.agent)
        if args.dry_run:
            from s3memory.admin.plans import plan_reseal

            plan = plan_reseal(ctx.vault(args.agent), ctx.pool)
            print_problems(plan.problems)
            under = f"branch key {plan.active}" if plan.active else "its first branch key (created by the real run)"
            line = f"would reseal {count(plan.reseal, 'object')} of {owner_name(args.agent)} under {under}"
            print_summary(f"{line} ({plan.already:,} already); nothing was changed (--dry-run)"
                          + failed_suffix(plan.problems))  # fmt: skip
            if args.json:
                emit_json({"agent": args.agent, "dry_run": True, "resealed": plan.reseal, "already": plan.already,
                           "active": plan.active or None, "problems": problems_json(plan.problems)})  # fmt: skip
            return EXIT_FAILED if plan.problems else EXIT_OK
        confirm(args, "reseal", f"This re-seals every object of {owner_name(args.agent)} under its active branch key "
                "(each is read, sealed again and written back).", nothing="changed")  # fmt: skip
        progress = ctx.progress("reseal")
        report = reseal(ctx.writing_vault(args.agent), ctx.pool, progress)
        progress.finish()
    print_problems(report.problems)
    line = summary("resealed", report.resealed, None, time.monotonic() - started)
    extra = f"{report.already:,} already under branch key {report.active}"
    print_summary(f"{line} ({extra}){failed_suffix(report.problems)}")
    if args.json:
        emit_json({"agent": args.agent, "dry_run": False, "resealed": report.resealed, "already": report.already,
                   "active": report.active, "problems": problems_json(report.problems)})  # fmt: skip
    return EXIT_FAILED if report.problems else EXIT_OK


def run_retire(args: argparse.Namespace) -> int:
    from s3memory.admin.retire import plan_retire, retire

    can_confirm(args, "retire")
    with connect(args) as ctx:
        ctx.require(args.agent)
        if args.dry_run:
            plan = plan_retire(ctx.vault(args.agent), ctx.pool)
        else:
            confirm(args, "retire", f"This retires every branch key of {owner_name(args.agent)} older than its "
                    "active one: objects (older versions included) still sealed under them can never be read again.",
                    nothing="changed")  # fmt: skip
            plan = retire(ctx.writing_vault(args.agent), ctx.pool)
    print_problems(plan.problems)
    keys = f"{count(len(plan.keys), 'branch key')} of {owner_name(args.agent)} (up to generation {plan.generation})"
    if not plan.generation:
        line = f"nothing to retire: {owner_name(args.agent)} has no branch key older than its active one still in use"
    elif args.dry_run:
        line = f"would retire {keys}; {count(plan.sealed, 'current object')} still sealed under them"
    else:
        line = f"retired {keys}" if plan.retired else f"did not retire {keys}"
    if args.dry_run:
        line += "; nothing was changed (--dry-run)"
    print_summary(line + failed_suffix(plan.problems))
    if args.json:
        emit_json({"agent": args.agent, "dry_run": args.dry_run, "generation": plan.generation,
                   "keys": plan.keys, "sealed": plan.sealed, "retired": plan.retired,
                   "problems": problems_json(plan.problems)})  # fmt: skip
    return EXIT_FAILED if plan.problems else EXIT_OK
