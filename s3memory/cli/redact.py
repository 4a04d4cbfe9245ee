"""`s3memory redact`: delete one version of a file for good, or every stored copy of its content."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .context import Context, can_confirm, confirm, connect, emit_json, print_problems, print_summary, say
from .exits import EXIT_FAILED, EXIT_OK, Failed, UsageError
from .progress import count

if TYPE_CHECKING:
    from s3memory.admin.redact import RedactPlan
    from s3memory.storage.admin_store import Version

_NEEDS_KEYS = (
    "redact --all-versions follows the file's renames and its copy under the other file-name encoding, "
    "which needs the agent's key source (S3MEMORY_KMS_KEY_ID or S3MEMORY_LOCAL_KEY); nothing was deleted"
)


def run_redact(args: argparse.Namespace) -> int:
    if not (args.version or args.all_versions) or (args.version and args.all_versions):
        raise UsageError("redact needs exactly one of --version V or --all-versions")
    can_confirm(args, "redact")
    with connect(args, keys=False) as ctx:
        ctx.require(args.agent, versions=True)
        plan = _all_versions(ctx, args) if args.all_versions else _one_version(ctx, args)
        chosen = plan.versions
        from s3memory.admin.locked import held, redact_refusal

        found = held(ctx.store, [v for _, v in chosen], ctx.pool)  # Object Lock: refuse before deleting any
        if found:
            raise Failed(redact_refusal(ctx.store.bucket, found, len(chosen)))
        what = f"{count(len(chosen), 'version')} of {plan.path.display}{_also(plan)}"
        if args.dry_run:
            for at, v in chosen:
                say(f"would delete {at.display} (version {v.version_id})")
            print_problems(plan.unknown)
            print_summary(f"would redact {what}{_remains(plan)}")
            _redacted(args, plan, [v for _, v in chosen], {})
            return EXIT_FAILED if plan.unknown else EXIT_OK
        confirm(args, "redact", f"This permanently deletes {what}; it cannot be undone.")
        from s3memory.admin.history import redact

        failed = redact(ctx.store, [v for _, v in chosen])
    for at, v in chosen:
        if v not in failed:
            say(f"deleted {at.display} (version {v.version_id})")
    where = {v: at for at, v in chosen}
    for v, code in sorted(failed.items(), key=lambda item: item[0].version_id):
        shown = where.get(v, plan.path).display
        say(f"failed: {args.agent}:{shown}: version {v.version_id} not deleted ({code})")
    print_problems(plan.unknown)
    done = f"{count(len(chosen) - len(failed), 'version')} of {plan.path.display}{_also(plan)}"
    print_summary(f"redacted {done}{_remains(plan)}")
    _redacted(args, plan, [v for _, v in chosen if v not in failed], failed)
    return EXIT_FAILED if failed or plan.unknown else EXIT_OK


def _one_version(ctx: Context, args: argparse.Namespace) -> RedactPlan:
    from s3memory.admin.history import file_versions
    from s3memory.admin.redact import RedactPlan

    space = ctx.space(args.agent, need_names=True)
    path = space.parse(args.path)
    chosen = [v for v in file_versions(ctx.store, space.key(path)) if v.version_id == args.version]
    if not chosen:
        raise Failed(f"{path.display} has no version {args.version}; `s3memory history` lists them")
    return RedactPlan(path, [(path, v) for v in chosen])


def _all_versions(ctx: Context, args: argparse.Namespace) -> RedactPlan:
    from s3memory.admin.redact import plan_all_versions

    if ctx.key_source is None:
        ctx.space(args.agent, need_names=True)  # encrypted names: the usage error that says so (exit 2)
        raise Failed(_NEEDS_KEYS)
    vault = ctx.vault(args.agent, settings=ctx.key_source, read_only=False)
    plan = plan_all_versions(ctx.store, vault, vault.parse(args.path))
    if not plan.versions:
        raise Failed(f"{plan.path.display} has no version {args.version}; `s3memory history` lists them")
    return plan


def _also(plan: RedactPlan) -> str:
    also = ""
    if plan.followed:
        also += f" and of the paths it was renamed from ({', '.join(p.display for p in plan.followed)})"
    if plan.copied:
        also += f" and of the copies renames made of it ({', '.join(p.display for p in plan.copied)})"
    return also


def _remains(plan: RedactPlan) -> str:
    if not plan.unknown:
        return ""
    return f"; copies may remain: {count(len(plan.unknown), 'version')} could not be followed (the failed: lines)"


def _redacted(args: argparse.Namespace, plan: RedactPlan, deleted: list[Version], failed: dict[Version, str]) -> None:
    if args.json:
        emit_json({"agent": args.agent, "path": plan.path.display, "dry_run": args.dry_run,
                   "deleted": [v.version_id for v in deleted],
                   "followed": [p.display for p in plan.followed],
                   "copied": [p.display for p in plan.copied],
                   "failed": [{"version": v.version_id, "code": code}
                              for v, code in sorted(failed.items(), key=lambda item: item[0].version_id)],
                   "unknown": [{"path": p.path, "reason": p.reason} for p in plan.unknown]})  # fmt: skip
