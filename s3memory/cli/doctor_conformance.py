"""`s3memory doctor --conformance`: the conformance kit on the configured bucket, and its report lines."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from s3memory.conformance import summary, table, to_json

from .context import connect
from .exits import UsageError

if TYPE_CHECKING:
    from s3memory.admin.conformance import KitRun
    from s3memory.admin.doctor import Diagnosis


def run_kit(args: argparse.Namespace, diagnosis: Diagnosis) -> KitRun:
    """The kit with the user's credentials, key source and name mode; the races only on a store the
    probes found to enforce conditional creates, edits and deletes (what they rest on)."""
    from s3memory.admin.conformance import ScratchNotEmpty, run_kit

    enforced = diagnosis.safe and diagnosis.capabilities.get("delete_if_match", False)
    with connect(args) as ctx:
        settings = ctx.full
        try:
            return run_kit(
                ctx.store.s3, settings.bucket, settings.keys(ctx.kms), settings.agent_options(),
                settings.memory_options(), scratch=args.scratch_prefix, claims=("concurrency",) if enforced else (),
            )  # fmt: skip
        except ScratchNotEmpty as err:
            raise UsageError(str(err)) from None


def passed(kit: KitRun | None) -> bool:
    return kit is None or all(r.status != "fail" for r in kit.results)


def lines(kit: KitRun) -> list[str]:
    """The failed cases (with what differed), the summary, and what the run wrote and removed."""
    failed = [line for line in table(kit.results) if not line.startswith(("ok ", "skip "))]
    cleanup = (
        f"conformance scratch prefix {kit.scratch}: created {kit.created} objects; removed {kit.removed} object "
        f"versions and delete markers; left {kit.left}"
    )
    return ["conformance (the kit on this bucket):", *failed, *summary(kit.results), cleanup]


def as_json(kit: KitRun | None) -> dict[str, Any]:
    if kit is None:
        return {}
    report = to_json(kit.results) | {
        "scratch": kit.scratch, "created": kit.created, "removed": kit.removed, "left": kit.left,
    }  # fmt: skip
    return {"conformance": report}
