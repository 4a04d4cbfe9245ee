"""Helpers shared by the test modules (not fixtures: plain functions and classes)."""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Iterable
from typing import Any

import pytest
from anthropic.lib.tools import ToolError

from s3memory.core import keyring

BUCKET = os.environ.get("S3MEMORY_TEST_BUCKET") or "s3memory-test-bucket"
REGION = "us-east-1"
LOCAL_KEY = bytes(range(32))
# Every agent's keystore (format 2): `{prefix}{agent}/.s3memory/keys/`, created by its first write
# as two objects, the claim `00000001` and one index entry. Bookkeeping, never a memory file.
KEYSTORE_FOLDER = ".s3memory/keys/"
KEYSTORE_OBJECTS_PER_KEY = 2


def is_keystore(key: str, root: str = "") -> bool:
    """True for a branch-key object: of the agent at `root` (`{prefix}{agent}/`), or of any agent."""
    if root:
        return key.startswith(root + KEYSTORE_FOLDER)
    return "/" + KEYSTORE_FOLDER in key


def listed_keys(s3: Any, bucket: str = BUCKET) -> list[str]:
    """Every key in `bucket`, in listing order (one page: enough for the tests' few objects)."""
    return [obj["Key"] for obj in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]


def without_keystore(keys: Iterable[str]) -> list[str]:
    """`keys` (in their order) without the agents' keystore objects: a listing of memory files."""
    return [key for key in keys if not is_keystore(key)]


def keystore_names(keys: Iterable[str], root: str) -> list[str]:
    """The names in the keystore folder of the agent at `root`, e.g. ["00000001", "00000001-….local-….…"]."""
    folder = root + KEYSTORE_FOLDER
    return sorted(key[len(folder) :] for key in keys if key.startswith(folder))


def assert_one_branch_key(keys: Iterable[str], root: str) -> None:
    """The agent at `root` has exactly one branch key, generation 1: its claim and its index entry."""
    names = keystore_names(keys, root)
    assert len(names) == KEYSTORE_OBJECTS_PER_KEY, names
    assert names[0] == "00000001", names
    record = keyring.parse_index(names[1])
    assert record is not None, names
    assert record.generation == 1, names


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
