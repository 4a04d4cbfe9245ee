"""What the key hierarchy costs and saves: S3 requests and KMS calls, format 1 (before) against format 2 (after).

Counts are exact (botocore calls on moto's S3 and KMS, retries excluded), so one run is enough.
"Before" is what s3memory 0.2 did: the same tool with 0.2's `Vault.seal` put back (every writing
process wraps its own data key, kept for a 5-minute window, into each object, format 1), 0.2's
per-object `rewrap`, and `purge` as the only erasure. "After" is the tool as it is now.

    .venv/bin/python bench/keys.py            # prints a Markdown table
    .venv/bin/python bench/keys.py --objects 200   # a smaller rewrap scenario
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

# Run as a script, this folder would come first on sys.path and its requests.py would shadow the package.
sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
from moto import mock_aws  # noqa: E402

from s3memory import S3MemoryTool  # noqa: E402
from s3memory.admin.branch_keys import rewrap_keys  # noqa: E402
from s3memory.admin.purge import purge  # noqa: E402
from s3memory.admin.rewrap import rewrap  # noqa: E402
from s3memory.admin.shred import shred  # noqa: E402
from s3memory.storage.admin_store import AdminStore  # noqa: E402
from s3memory.storage.concurrency import Pool  # noqa: E402
from s3memory.storage.keys import Keys  # noqa: E402
from s3memory.storage.keyspace import AgentKeyspace  # noqa: E402
from s3memory.storage.keystore import Keystore  # noqa: E402
from s3memory.storage.kms import KmsKeys  # noqa: E402
from s3memory.storage.vault import Sealed, Vault  # noqa: E402
from tests.support.legacy import DataKey, data_key, seal_format1  # noqa: E402
from tests.support.views import NoProgress  # noqa: E402

BUCKET, PREFIX, REGION = "s3memory-bench-keys", "agents/", "us-east-1"


class Counter:
    def __init__(self, *clients: Any) -> None:
        self.calls: collections.Counter[str] = collections.Counter()
        for c in clients:
            c.meta.events.register(f"before-call.{c.meta.service_model.service_name}.*", self._seen)

    def _seen(self, model: Any, **_: Any) -> None:
        self.calls[f"{model.service_model.service_name}:{model.name}"] += 1

    @contextmanager
    def measure(self) -> Iterator[collections.Counter[str]]:
        self.calls.clear()
        seen: collections.Counter[str] = collections.Counter()
        yield seen
        seen.update(self.calls)


def s3_kms(c: collections.Counter[str]) -> tuple[int, int]:
    return sum(n for k, n in c.items() if k.startswith("s3:")), sum(n for k, n in c.items() if k.startswith("kms:"))


class Bench:
    def __init__(self) -> None:
        self.s3 = boto3.client("s3", region_name=REGION, config=Config(max_pool_connections=20))
        self.kms = boto3.client("kms", region_name=REGION)
        self.s3.create_bucket(Bucket=BUCKET)
        self.key = self.kms.create_key(Description="bench")["KeyMetadata"]["KeyId"]
        self.counter = Counter(self.s3, self.kms)
        self.tools: list[S3MemoryTool] = []

    def tool(self, agent: str) -> S3MemoryTool:
        made = S3MemoryTool(
            bucket=BUCKET, agent_id=agent, keys=KmsKeys(self.key, kms_client=self.kms), s3_client=self.s3, prefix=PREFIX
        )
        self.tools.append(made)
        return made

    def close(self) -> None:
        for t in self.tools:
            t.close()


# 0.2's data-key window, per key provider (a process) and agent. Every scenario here stays within
# one window (5 minutes, 1,000 objects), so one data key per provider and agent is what 0.2 used.
_WINDOWS: weakref.WeakKeyDictionary[Keys, dict[str, DataKey]] = weakref.WeakKeyDictionary()


def seal_v1(self: Vault, path: Any, plaintext: bytes, *, modified: int | None = None) -> Sealed:
    """0.2's `Vault.seal`: the process's current data key (format 1), wrapped into every header;
    the writer keeps it unwrapped, so reading its own objects costs no Decrypt."""
    when = int(time.time()) if modified is None else modified
    window = _WINDOWS.setdefault(self.keys, {})
    key = window.get(self.agent_id)
    if key is None:
        key = window[self.agent_id] = data_key(self.keys, self.agent_id)
        self.keys.caches.unwraps.put((self.agent_id, key.provider, key.wrapped), key.plaintext)
    body, header = seal_format1(plaintext, key, agent_id=self.agent_id, path=path.display, modified=when)
    return Sealed(body, header.to_metadata())


@contextmanager
def writing_format(fmt: int) -> Iterator[None]:
    original = Vault.seal
    if fmt == 1:
        Vault.seal = seal_v1  # type: ignore[method-assign]
    try:
        yield
    finally:
        Vault.seal = original  # type: ignore[method-assign]


def cold_reader(b: Bench, fmt: int) -> collections.Counter[str]:
    agent = f"cold-{fmt}"
    for i in range(30):  # 30 writers, each with its own key cache (separate processes)
        b.tool(agent).call({"command": "create", "path": f"/memories/f{i:02d}.md", "file_text": f"file {i}"})
    reader = b.tool(agent)
    with b.counter.measure() as seen:
        for i in range(30):
            reader.call({"command": "view", "path": f"/memories/f{i:02d}.md"})
    return seen


def session(b: Bench, fmt: int) -> collections.Counter[str]:
    agent = f"session-{fmt}"
    tool = b.tool(agent)
    with b.counter.measure() as seen:
        for i in range(40):
            tool.call({"command": "create", "path": f"/memories/n{i}.md", "file_text": "x"})
        for i in range(40):
            tool.call({"command": "view", "path": f"/memories/n{i}.md"})
    return seen


def rewrap_agent(b: Bench, fmt: int, objects: int) -> collections.Counter[str]:
    agent = f"rewrap-{fmt}"
    tool = b.tool(agent)
    for i in range(objects):
        tool.call({"command": "create", "path": f"/memories/o{i:04d}.md", "file_text": "x"})
    destination = b.kms.create_key(Description="next")["KeyMetadata"]["KeyId"]
    dest_keys = KmsKeys(destination, kms_client=b.kms)
    space = AgentKeyspace(PREFIX, agent)
    store = AdminStore(b.s3, BUCKET)
    with b.counter.measure() as seen, Pool(16) as pool:
        if fmt == 1:
            report = rewrap(store, [space], dest_keys, destination, pool, NoProgress(), source=b.key)
            assert report.rewrapped == objects, report
        else:
            keys_report = rewrap_keys([Keystore(store, dest_keys, space)], dest_keys, destination, NoProgress())
            assert keys_report.rewrapped == 1, keys_report
    return seen


def erase(b: Bench, fmt: int, objects: int) -> collections.Counter[str]:
    agent = f"erase-{fmt}"
    tool = b.tool(agent)
    for i in range(objects):
        tool.call({"command": "create", "path": f"/memories/e{i:03d}.md", "file_text": "x"})
    space, store = AgentKeyspace(PREFIX, agent), AdminStore(b.s3, BUCKET)
    with b.counter.measure() as seen, Pool(16) as pool:
        if fmt == 1:
            purge(store, space, pool, NoProgress())
        else:
            shred(store, store, space, pool, NoProgress())
    return seen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=1000, help="objects of the rewrap scenario (default 1000)")
    args = parser.parse_args(argv)
    rows: list[tuple[str, str, str]] = []

    def row(name: str, measure: Callable[[Bench, int], collections.Counter[str]]) -> None:
        cells = []
        for fmt in (1, 2):
            with mock_aws(), writing_format(fmt):
                bench = Bench()
                try:
                    s3, kms = s3_kms(measure(bench, fmt))
                finally:
                    bench.close()
            cells.append(f"{s3:,} S3 / {kms:,} KMS")
        rows.append((name, cells[0], cells[1]))

    row("cold reader: 30 files written by 30 processes", cold_reader)
    row("one process: 40 creates + 40 views", session)
    row(f"rewrap of an agent with {args.objects:,} objects", lambda b, f: rewrap_agent(b, f, args.objects))
    row("erase an agent with 50 objects (before: purge; after: shred)", lambda b, f: erase(b, f, 50))
    print("| scenario | before (format 1) | after (format 2) |")
    print("|---|---|---|")
    for name, before, after in rows:
        print(f"| {name} | {before} | {after} |")
    print(
        "\nErasure: a purge deletes the copies in this bucket only; after a shred, copies in replicas, backups and"
        "\nold versions cannot be decrypted either (no branch key is left), which no request count shows."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
