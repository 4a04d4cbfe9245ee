"""The kit inside a backend's own pytest suite: one test per case.

In the backend's tests, define a fixture `memory_tool_factory` (a callable returning a fresh, empty
memory tool) and import the test function; optionally a fixture `memory_tool_claims` (e.g.
`("concurrency",)`) runs the race cases too:

    from s3memory.conformance.pytest_plugin import test_memory_conformance  # noqa: F401

    @pytest.fixture
    def memory_tool_factory():
        return MyMemoryTool

A failing case fails its test with the kit's message, which names the rule it breaks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .cases import CASES
from .model import Case, Race
from .runner import check


def _claims(request: pytest.FixtureRequest) -> tuple[str, ...]:
    try:
        claims: tuple[str, ...] = tuple(request.getfixturevalue("memory_tool_claims"))
    except pytest.FixtureLookupError:
        return ()
    return claims


@pytest.mark.parametrize("conformance_case", CASES, ids=[case.id for case in CASES])
def test_memory_conformance(
    conformance_case: Case | Race, memory_tool_factory: Callable[[], Any], request: pytest.FixtureRequest
) -> None:
    if conformance_case.needs and conformance_case.needs not in _claims(request):
        pytest.skip(f"needs the backend to claim {conformance_case.needs} (fixture memory_tool_claims)")
    result = check(memory_tool_factory, conformance_case)
    if not result.passed:
        pytest.fail(f"{conformance_case.id}: {result.detail}", pytrace=False)
