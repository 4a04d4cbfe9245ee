"""The Terraform tests check policies and the Lambda example on moto (and offline tools): they are
not storage tests, so a run against another S3 endpoint skips them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .simulator import Simulator, SimulatorUnavailable


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/terraform/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.moto_only)


@pytest.fixture(scope="module")
def simulator() -> Iterator[Simulator | str]:
    """The IAM policy simulator (a Node.js process), shared by a module's tests; the reason it is
    missing instead, for each test to fail with."""
    try:
        sim = Simulator()
    except SimulatorUnavailable as missing:
        yield str(missing)
        return
    yield sim
    sim.close()
