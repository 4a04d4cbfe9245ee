"""What a run found: a per-case table, a summary by concern and by command, and JSON."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .model import Result

MARKS = {"pass": "ok", "fail": "FAIL", "skip": "skip"}


def table(results: list[Result]) -> list[str]:
    """One line per case (status, concern, command, id, rule); each failure's detail indented below it."""
    width = max((len(r.case.id) for r in results), default=0)
    lines = []
    for r in results:
        case = r.case
        lines.append(f"{MARKS[r.status]:<4}  {case.concern:<11}  {case.command:<11}  {case.id:<{width}}  {case.rule}")
        if r.status == "fail":
            lines.append(f"      {r.detail}")
    return lines


def _counts(results: list[Result], key: str) -> dict[str, Counter[str]]:
    groups: dict[str, Counter[str]] = {}
    for r in results:
        groups.setdefault(getattr(r.case, key), Counter())[r.status] += 1
    return groups


def summary(results: list[Result]) -> list[str]:
    """Passed / failed / skipped per concern, per command, and in all."""
    lines = []
    for key in ("concern", "command"):
        lines.append(f"by {key}:")
        for name, counts in _counts(results, key).items():
            lines.append(
                f"  {name:<12} {counts['pass']:>3} passed  {counts['fail']:>3} failed  {counts['skip']:>3} skipped"
            )
    total = Counter(r.status for r in results)
    lines.append(f"{len(results)} cases: {total['pass']} passed, {total['fail']} failed, {total['skip']} skipped")
    return lines


def failed_rules(results: list[Result]) -> list[str]:
    """The rules broken, each once, in the order first met."""
    return list(dict.fromkeys(r.case.rule for r in results if r.status == "fail"))


def to_json(results: list[Result]) -> dict[str, Any]:
    total = Counter(r.status for r in results)
    return {
        "passed": total["pass"], "failed": total["fail"], "skipped": total["skip"],
        "failed_rules": failed_rules(results),
        "by_concern": {k: dict(v) for k, v in _counts(results, "concern").items()},
        "by_command": {k: dict(v) for k, v in _counts(results, "command").items()},
        "cases": [
            {"id": r.case.id, "concern": r.case.concern, "command": r.case.command, "rule": r.case.rule,
             "source": r.case.source, "status": r.status, "detail": r.detail}
            for r in results
        ],
    }  # fmt: skip
