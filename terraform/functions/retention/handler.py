"""Scheduled retention for s3memory: `s3memory prune` over every agent under the prefix.

The Terraform module's opt-in retention job (terraform/retention.tf) has EventBridge Scheduler
invoke this function on a schedule. Each run lists the agents (`s3memory agents --json`) and
runs, for each of them, exactly what an operator would type:

    s3memory prune --agent <id> --not-accessed-for <N>d -q     (RETENTION_NOT_ACCESSED_DAYS)
    s3memory prune --agent <id> --older-than <N>d -q           (RETENTION_OLDER_THAN_DAYS)

through `s3memory.cli.main`, so the job deletes what the command deletes and nothing else:
memory files whose content (and, by access, whose last recorded read) is older than the cutoff;
never the `.s3memory/` bookkeeping or branch keys. In a versioned bucket a prune writes delete
markers: the files stay restorable (`s3memory restore`) until the bucket's noncurrent-version
rule removes them.

Configuration (environment; the module sets all of it):
  S3MEMORY_BUCKET, S3MEMORY_PREFIX, S3MEMORY_REGION   where the memories are (read by the CLI);
  RETENTION_NOT_ACCESSED_DAYS or RETENTION_OLDER_THAN_DAYS   exactly one, a whole number of days;
  RETENTION_DRY_RUN   "true": list what would be deleted, delete nothing (default "false").
No key source is needed: prune decrypts nothing.

Event: `{}` (what the schedule sends), or `{"dry_run": true}` for a trial run by hand.

Output: one JSON log line per agent (its id, the exit code, how many files were deleted or
would be, how many failed and why) and one summary line, which is also the return value. File
paths, memory contents and credentials are never logged. A run ends in an error (so Lambda
counts it in the function's `Errors` metric) if listing the agents fails, if any agent's prune
fails, or if the time ran out before every agent was reached: the function stops starting
new agents `RESERVE_SECONDS` before its timeout, and starts each run at a random agent so that
runs which cannot reach everyone do not always leave out the same ones.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import secrets
from collections import Counter
from collections.abc import Sequence
from typing import Any

from s3memory.cli import main

NOT_ACCESSED_DAYS = "RETENTION_NOT_ACCESSED_DAYS"
OLDER_THAN_DAYS = "RETENTION_OLDER_THAN_DAYS"
DRY_RUN = "RETENTION_DRY_RUN"
MAX_DAYS = 36500  # what `s3memory prune` accepts (s3memory.admin.prune.MAX_AGE_DAYS)
RESERVE_SECONDS = 60  # no agent is started with less time than this left
_DAYS = re.compile(r"[1-9][0-9]{0,4}")


class RetentionError(RuntimeError):
    """The run did not complete: its summary says what is missing (no paths, no secrets)."""


def _criterion() -> list[str]:
    """The prune flag and age from the environment: exactly one of the two variables."""
    given = {
        flag: os.environ.get(name, "").strip()
        for name, flag in ((NOT_ACCESSED_DAYS, "--not-accessed-for"), (OLDER_THAN_DAYS, "--older-than"))
    }
    given = {flag: days for flag, days in given.items() if days}
    if len(given) != 1:
        raise RetentionError(f"set exactly one of {NOT_ACCESSED_DAYS} and {OLDER_THAN_DAYS} (a whole number of days)")
    ((flag, days),) = given.items()
    if not _DAYS.fullmatch(days) or int(days) > MAX_DAYS:
        raise RetentionError(f"{flag} needs a whole number of days from 1 to {MAX_DAYS}, got {days!r}")
    return [flag, f"{days}d"]


def _dry_run(event: Any) -> bool:
    configured = os.environ.get(DRY_RUN, "false").strip().lower()
    if configured not in ("true", "false"):
        raise RetentionError(f"{DRY_RUN} must be true or false")
    if event is None:
        event = {}
    if not isinstance(event, dict) or set(event) - {"dry_run"} or not isinstance(event.get("dry_run", False), bool):
        raise RetentionError('the event must be {} or {"dry_run": true|false}')
    return configured == "true" or bool(event.get("dry_run", False))


def _cli(argv: Sequence[str]) -> tuple[int, str, str]:
    """`s3memory ARGV` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _errors(stderr: str) -> list[str]:
    """The CLI's own error lines (one line each, never a secret or a traceback)."""
    return [line for line in stderr.splitlines() if line.startswith("s3memory: error: ")]


def _log(record: dict[str, Any]) -> None:
    print(json.dumps(record, sort_keys=True), flush=True)


def _prune(agent: str, criterion: list[str], dry_run: bool) -> dict[str, Any]:
    """One agent's prune, as counts: its output names files, which are not logged."""
    code, out, err = _cli(["prune", "--agent", agent, *criterion, "-q", "--dry-run" if dry_run else "--yes"])
    lines = out.splitlines()
    done = sum(line.startswith("would delete " if dry_run else "deleted ") for line in lines)
    # "failed: <agent>:<path>: <reason>"; the reasons (e.g. "not deleted (AccessDenied)") hold no path
    reasons = Counter(line.rsplit(": ", 1)[-1] for line in lines if line.startswith("failed: "))
    result: dict[str, Any] = {"agent": agent, "exit": code, "would_delete" if dry_run else "deleted": done}
    if reasons:
        result["failed"] = sum(reasons.values())
        result["reasons"] = dict(sorted(reasons.items()))
    if code != 0 and _errors(err):
        result["error"] = _errors(err)[-1]
    return result


def _seconds_left(context: Any) -> float:
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    return float("inf") if remaining is None else remaining() / 1000


def lambda_handler(event: Any, context: Any) -> dict[str, Any]:
    criterion = _criterion()
    dry_run = _dry_run(event)
    code, out, err = _cli(["agents", "--json", "-q"])
    if code != 0:
        errors = _errors(err)
        raise RetentionError(f"listing the agents failed (exit {code})" + (f": {errors[-1]}" if errors else ""))
    agents = [row["agent"] for row in json.loads(out)]
    start = secrets.randbelow(len(agents)) if agents else 0
    order = agents[start:] + agents[:start]

    summary: dict[str, Any] = {
        "criterion": " ".join(criterion),
        "dry_run": dry_run,
        "agents": len(agents),
        "reached": 0,
        "would_delete" if dry_run else "deleted": 0,
        "failed_agents": [],
    }
    for agent in order:
        if _seconds_left(context) < RESERVE_SECONDS:
            break
        result = _prune(agent, criterion, dry_run)
        _log(result)
        summary["reached"] += 1
        summary["would_delete" if dry_run else "deleted"] += result["would_delete" if dry_run else "deleted"]
        if result["exit"] != 0:
            summary["failed_agents"].append(agent)
    summary["failed_agents"].sort()
    _log({"summary": summary})
    if summary["failed_agents"] or summary["reached"] < len(agents):
        missing = len(agents) - summary["reached"]
        raise RetentionError(
            f"retention incomplete: {len(summary['failed_agents'])} agent(s) failed, {missing} not reached "
            f"({json.dumps(summary, sort_keys=True)})"
        )
    return summary
