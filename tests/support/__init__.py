"""Helpers shared by the test modules (not fixtures: plain functions and classes)."""

from __future__ import annotations

import collections
import os
import threading
from typing import Any

import pytest
from anthropic.lib.tools import ToolError

BUCKET = os.environ.get("S3MEMORY_TEST_BUCKET") or "s3memory-test-bucket"
REGION = "us-east-1"
LOCAL_KEY = bytes(range(32))


def ok(tool: Any, **command: Any) -> str:
    """Run a command that must succeed; return its string."""
    result = tool.call(command)
    assert isinstance(result, str)
    return result


def err(tool: Any, **command: Any) -> str:
    """Run a command that must fail with ToolError; return the error text."""
    with pytest.raises(ToolError) as caught:
        tool.call(command)
    content = caught.value.content
    assert isinstance(content, str)
    return content


class CallCounter:
    """Counts botocore API calls (one per operation, retries not included) on given clients."""

    def __init__(self, *clients: Any) -> None:
        self._lock = threading.Lock()
        self.calls: list[str] = []
        for client in clients:
            service = client.meta.service_model.service_name
            client.meta.events.register(f"before-call.{service}.*", self._seen)

    def _seen(self, model: Any, **_: Any) -> None:
        with self._lock:
            self.calls.append(f"{model.service_model.service_name}:{model.name}")

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()

    def count(self, service: str | None = None) -> int:
        with self._lock:
            return sum(1 for c in self.calls if service is None or c.startswith(service + ":"))

    def by_op(self) -> dict[str, int]:
        with self._lock:
            return dict(collections.Counter(self.calls))
