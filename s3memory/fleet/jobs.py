"""The fleet's job table: every job, whether it destroys data, whether it needs an explicit list of
agents, its role class (which worker Lambda, with which least-privilege role, runs it) and its options.

Role classes (the Terraform module renders one worker function per class; a test keeps its mapping
equal to `JOBS`):

- `inspect`: list and head only, no decrypt (`prune --dry-run`; with `not_accessed_for`, tags too);
- `audit`: read and `kms:Decrypt` (`verify`);
- `prune`: list and delete memory objects, never `.s3memory/`;
- `keys`: KMS GenerateDataKey/Decrypt/ReEncrypt/Encrypt, S3 read and write (`rotate`, `rewrap`, `reseal`);
- `erase`: every version under the agent, keystore included (`shred`, `purge`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal

from s3memory.admin.prune import parse_age

RoleClass = Literal["inspect", "audit", "prune", "keys", "erase"]
ROLE_CLASSES: tuple[RoleClass, ...] = ("inspect", "audit", "prune", "keys", "erase")


@dataclass(frozen=True)
class Job:
    name: str
    summary: str
    destructive: bool  # asks for confirmation (unless --yes); with --dry-run it does not
    explicit_agents: bool  # an explicit list of agents only (--agents FILE), never --all
    role: RoleClass
    dry_run_role: RoleClass | None = None  # the class of its --dry-run (None: no dry run)
    options: tuple[str, ...] = ()  # the option names it takes (besides dry_run)

    def role_class(self, options: Mapping[str, Any]) -> RoleClass:
        """The role class that runs this job with `options`."""
        if options.get("dry_run") and self.dry_run_role is not None:
            return self.dry_run_role
        return self.role


JOBS: dict[str, Job] = {
    job.name: job
    for job in (
        Job("prune", "delete memory files not modified (or not used) since a cutoff", True, False, "prune",
            "inspect", ("older_than", "not_accessed_for", "cutoff")),
        Job("verify", "authenticate every object and audit the keystore", False, False, "audit"),
        Job("rotate", "make a new branch key active", False, False, "keys"),
        Job("rewrap", "re-wrap the branch keys (and with objects, format-1 objects) under another KMS key",
            True, False, "keys", None, ("to_key", "objects")),
        Job("reseal", "re-seal every object under the active branch key", True, False, "keys"),
        Job("shred", "destroy every version of the branch keys, then purge the agent", True, True, "erase",
            None, ("keys_only",)),
        Job("purge", "erase the agent: every version and delete marker", True, True, "erase"),
    )
}  # fmt: skip


class InvalidJob(ValueError):
    """A job name or options the fleet cannot run; the message names the option (as a CLI flag) to fix."""


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def check(job_name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options of `job_name`, checked and completed: `InvalidJob` names what is wrong.

    prune: exactly one of `older_than` and `not_accessed_for` (an age such as 90d); `cutoff` (ISO
    8601, UTC), when the run has fixed it, else it is computed from the age when an agent starts.
    rewrap: `to_key` is required."""
    job = JOBS.get(job_name)
    if job is None:
        raise InvalidJob(f"unknown job {job_name!r}: use one of {', '.join(JOBS)}")
    unknown = sorted(set(options) - {*job.options, "dry_run"})
    if unknown:
        raise InvalidJob(f"{job.name} takes no option {', '.join(_flag(n) for n in unknown)}")
    checked = dict(options)
    if not isinstance(checked.get("dry_run", False), bool):
        raise InvalidJob("dry_run must be true or false")
    if checked.get("dry_run") and job.dry_run_role is None:
        raise InvalidJob(f"{job.name} has no --dry-run in a fleet run")
    if job.name == "prune":
        ages = [n for n in ("older_than", "not_accessed_for") if checked.get(n)]
        if len(ages) != 1:
            raise InvalidJob("prune needs exactly one of --older-than and --not-accessed-for (e.g. 90d)")
        try:
            parse_age(str(checked[ages[0]]))
            if "cutoff" in checked:
                cutoff_of(checked)
        except ValueError as err:
            raise InvalidJob(f"{_flag(ages[0])}: {err}") from None
    if job.name == "rewrap" and not checked.get("to_key"):
        raise InvalidJob("rewrap needs --to-key KEY (the destination KMS key id, ARN or alias)")
    return checked


def cutoff_of(options: Mapping[str, Any], now: datetime | None = None) -> datetime:
    """prune's cutoff: the run's fixed `cutoff`, else now minus the age."""
    if options.get("cutoff"):
        when = datetime.fromisoformat(str(options["cutoff"]).replace("Z", "+00:00"))
        if when.tzinfo is None:
            raise ValueError("cutoff needs a time zone (e.g. 2026-01-01T00:00:00Z)")
        return when.astimezone(timezone.utc)
    age = parse_age(str(options.get("older_than") or options.get("not_accessed_for")))
    return (now or datetime.now(timezone.utc)) - age
