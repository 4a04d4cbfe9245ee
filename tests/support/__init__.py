"""Helpers shared by the test modules (not fixtures: plain functions and classes)."""

from __future__ import annotations

import collections
import os
import threading
import uuid
from collections.abc import Iterable
from typing import Any

import pytest
from anthropic.lib.tools import ToolError

from s3memory.core import keyring

# The scratch bucket; under pytest-xdist one per worker (`-gw0`, `-gw1`, ...), so that workers
# running against one endpoint never share a bucket (each worker runs its tests one at a time).
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
BUCKET = (os.environ.get("S3MEMORY_TEST_BUCKET") or "s3memory-test-bucket") + (f"-{_WORKER}" if _WORKER else "")
REGION = "us-east-1"


def unique_bucket(tag: str) -> str:
    """A bucket name of its own for one test: the scratch bucket's (per worker), `tag` and a random
    suffix, within S3's 63 characters. For the buckets a test must create itself (Object Lock is
    set only at creation; another region's), which a shared endpoint keeps after the test (a locked
    one cannot even be emptied), so a fixed name would meet the last test's bucket there."""
    return f"{BUCKET[:40]}-{tag[:12]}-{uuid.uuid4().hex[:8]}"


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


def listed_keys(s3: Any, bucket: str = BUCKET, prefix: str = "") -> list[str]:
    """Every key in `bucket` under `prefix`, all pages, in listing order."""
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return [obj["Key"] for page in pages for obj in page.get("Contents", [])]


def memory_keys(source: Any, root: str, *, bucket: str = BUCKET, relative: bool = False) -> list[str]:
    """The memory files' keys under `root` (an agent's root or the prefix), sorted, without the
    agents' bookkeeping (`.s3memory/`: keystores, intents). `source`: an S3 client (listed under
    `root` in `bucket`) or keys already listed. `relative`: each key without `root`."""
    keys = listed_keys(source, bucket, root) if hasattr(source, "list_objects_v2") else source
    below = [key[len(root) :] for key in keys if key.startswith(root)]
    return sorted((rel if relative else root + rel) for rel in below if "/.s3memory/" not in "/" + rel)


def keystore_keys(s3: Any, root: str, *, bucket: str = BUCKET) -> list[str]:
    """The names in the keystore folder of the agent at `root`, listed (sorted: claims before their index entries)."""
    return keystore_names(listed_keys(s3, bucket, root + KEYSTORE_FOLDER), root)


def branch_of(s3: Any, key: str, *, bucket: str = BUCKET) -> str:
    """The id of the branch key a format-2 object is sealed under (`s3m-bk` in its header)."""
    metadata = s3.head_object(Bucket=bucket, Key=key)["Metadata"]
    assert metadata["s3m-v"] == "2", metadata
    assert "s3m-wk" not in metadata, metadata
    return str(metadata["s3m-bk"])


def enable_versioning(s3: Any, bucket: str = BUCKET) -> None:
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})


def stock(tool: Any, files: dict[str, str]) -> Any:
    """Create `files` ({"notes.md": text, "d/x.md": text}, under /memories) with `tool`; return it."""
    for rel, text in files.items():
        ok(tool, command="create", path=f"/memories/{rel}", file_text=text)
    return tool


def memory_tool(s3: Any, agent: str, *, bucket: str = BUCKET, keys: Any = None, workers: int = 4) -> Any:
    """A new S3MemoryTool of `agent` under `agents/` (local test key unless `keys`): a fresh process
    as far as recovery is concerned. The caller closes it (or uses the `new_tool` fixture)."""
    from s3memory import LocalKeys, S3MemoryTool

    return S3MemoryTool(
        bucket=bucket, agent_id=agent, keys=keys or LocalKeys(LOCAL_KEY), s3_client=s3, prefix="agents/",
        max_workers=workers,
    )  # fmt: skip


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


def settled(tool: Any) -> None:
    """Wait for what a command leaves running after its answer (a directory change releases its
    intent record in the background), so that a test sees, and counts, all that the command did."""
    commands = getattr(tool, "commands", None)
    stores = getattr(commands, "stores", None) or {}
    for memory in [getattr(tool, "memory", None), *(memory for _, memory in stores.values())]:
        settle = getattr(memory, "settle", None)
        if settle is not None:
            settle()


def called(tool: Any, command: object) -> tuple[bool, Any]:
    """Run a command that may succeed or fail (and what it left running, see `settled`):
    (True, its result) or (False, the ToolError's content)."""
    try:
        return True, tool.call(command)
    except ToolError as exc:
        return False, exc.content
    finally:
        settled(tool)


def ok(tool: Any, **command: Any) -> str:
    """Run a command that must succeed (and what it left running, see `settled`); return its string."""
    try:
        result = tool.call(command)
    finally:
        settled(tool)
    assert isinstance(result, str)
    return result


def err(tool: Any, **command: Any) -> str:
    """Run a command that must fail with ToolError (and what it left running); return the error text."""
    try:
        with pytest.raises(ToolError) as caught:
            tool.call(command)
    finally:
        settled(tool)
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


def claim_mode(
    s3: Any, agent: str, seq: int, state: str, *, prefix: str = "agents/", bucket: str = BUCKET, entry: bool = True
) -> str:
    """Record name mode `seq` of `agent` as `s3memory migrate` does (its name key made first if it has
    none, the claim and entry tagged under it), with the local test key; `entry=False` leaves the claim
    alone (its writer stopped in between). Returns the entry's key."""
    from s3memory import LocalKeys
    from s3memory.storage.keyspace import AgentKeyspace
    from s3memory.storage.keystore import Keystore
    from s3memory.storage.store import ObjectStore

    keystore = Keystore(ObjectStore(s3, bucket), LocalKeys(LOCAL_KEY), AgentKeyspace(prefix, agent))
    keystore.name_key()
    assert keystore.claim_names(seq, state) == (seq, state)
    folder = f"{prefix}{agent}/{KEYSTORE_FOLDER}"
    (key,) = [k for k in listed_keys(s3, bucket, folder) if k.startswith(f"{folder}names.{seq:08d}.{state}.")]
    if not entry:
        s3.delete_object(Bucket=bucket, Key=key)
    return key
