"""Run the cases against a backend: a fresh memory per case from the factory, driven only through `call`."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from .driver import Answer, close, invoke, make, race
from .model import EXACT, Case, Race, Result
from .rules import RULES

Factory = Callable[[], Any]


def _shown(text: str, limit: int = 300) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _matches(got: str, expected: str, match: str) -> bool:
    return got == expected if match == EXACT else got.startswith(expected)


def _broken(case: Case | Race, what: str) -> str:
    """The failure message: the rule the backend breaks, in words, then what differed."""
    return f"breaks {case.rule} ({RULES[case.rule]}): {what}"


def _compare(step: str, got: Answer, expected: Answer, match: str = EXACT) -> str:
    """'' when `got` is the expected answer, else what differs."""
    (text, error), (want, want_error) = got, expected
    if _matches(text, want, match) and error == want_error:
        return ""
    parts = []
    if error != want_error:
        parts.append(f"is_error {error}, expected {want_error}")
    if not _matches(text, want, match):
        how = "" if match == EXACT else "beginning with "
        parts.append(f"answered {_shown(text)}, expected {how}{_shown(want)}")
    return f"{step}: " + "; ".join(parts)


async def _given(tool: Any, case: Case | Race, result: Result) -> str:
    for command in case.given:
        answer = await invoke(tool, command)
        result.calls += 1
        if answer[1]:
            return f"setup {command} failed: {_shown(answer[0])}"
    return ""


async def _run_case(tool: Any, case: Case, result: Result) -> str:
    problem = await _given(tool, case, result)
    if problem:
        return problem
    got = await invoke(tool, case.call)
    result.calls += 1
    result.answers.append(got)
    problem = _compare(f"{case.command} {_shown(str(case.call))}", got, (case.answer, case.is_error), case.match)
    if problem:
        result.got = got[0]
        return _broken(case, problem)
    for look in case.after:
        seen = await invoke(tool, look.input())
        result.calls += 1
        problem = _compare(f"then view {look.path}", seen, (look.answer, look.is_error))
        if problem:
            result.got = seen[0]
            return _broken(case, problem)
    return ""


async def _run_race(tool: Any, case: Race, result: Result) -> str:
    problem = await _given(tool, case, result)
    if problem:
        return problem
    got = await race(tool, list(case.calls))
    result.calls += len(case.calls)
    result.answers.extend(got)
    if not any(Counter(got) == Counter(outcome) for outcome in case.outcomes):
        expected = " or ".join(str(sorted(outcome)) for outcome in case.outcomes)
        return _broken(case, f"the {len(case.calls)} calls answered {sorted(got)}, expected {expected}")
    for path, allowed in case.after:
        text, error = await invoke(tool, {"command": "view", "path": path})
        result.calls += 1
        if error or text not in allowed:
            result.got = text
            return _broken(case, f"then view {path}: answered {_shown(text)}, expected one of {list(allowed)}")
    return ""


async def run_one(factory: Factory, case: Case | Race) -> Result:
    result = Result(case, "pass")
    tool = await make(factory)
    try:
        if isinstance(case, Race):
            problem = await _run_race(tool, case, result)
        else:
            problem = await _run_case(tool, case, result)
    finally:
        await close(tool)
    if problem:
        result.status, result.detail = "fail", problem
    return result


def check(factory: Factory, case: Case | Race) -> Result:
    """Run one case on a fresh memory from `factory` (in its own event loop)."""
    return asyncio.run(run_one(factory, case))


def run(factory: Factory, cases: Iterable[Case | Race], claims: Iterable[str] = ()) -> list[Result]:
    """Every case in order; a case that needs a claim the backend does not make is skipped."""
    made = set(claims)
    results: list[Result] = []
    for case in cases:
        if case.needs and case.needs not in made:
            results.append(Result(case, "skip", f"needs the backend to claim {case.needs}"))
            continue
        results.append(check(factory, case))
    return results
