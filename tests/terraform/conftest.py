"""The Terraform tests check policies and the Lambda example on moto (and offline tools): they are
not storage tests, so a run against another S3 endpoint skips them."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/terraform/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.moto_only)
