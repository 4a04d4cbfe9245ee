"""The three storage scenarios, each on its own in-process moto with injected latency.

1. `session`: a seeded agent session (trace.py) on s3memory, the naive backend and the SDK's
   local-filesystem tool; time, S3 and KMS calls per command.
2. `bulk`: rename and recursive delete of a directory of N files.
3. `listing`: `view /memories` of an agent holding N objects in many directories.
"""

from __future__ import annotations

import functools
import math
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import boto3
from anthropic.lib.tools import ToolError
from botocore.config import Config
from moto import mock_aws

from bench import trace
from bench.competent import CompetentMemory
from bench.latency import Meter, Phase, calls_in
from bench.naive import NaiveError, NaiveMemory
from s3memory import KmsKeys, S3MemoryTool
from s3memory.core.paths import MemoryPath

try:
    from anthropic.lib.tools import BetaLocalFilesystemMemoryTool  # type: ignore[attr-defined]
except ImportError:  # older SDKs export it only from the module that defines it
    from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool

BUCKET = "s3memory-bench"
REGION = "us-east-1"
PREFIX = "agents/"
SEED = 20250818

# S3 calls a warm `S3MemoryTool` may make per command (the core issue's budgets).
BUDGETS = {
    "view_root": 2,
    "view_dir": 2,
    "view_file": 1,
    "create": 3,
    "str_replace": 2,
    "insert": 2,
    "rename_file": 5,
    "delete_file": 3,
}


@contextmanager
def aws(meter: Meter) -> Iterator[tuple[Any, Any, str]]:
    """A fresh in-process moto with one bucket and one KMS key; clients carry the meter."""
    with mock_aws():
        config = Config(max_pool_connections=64, retries={"mode": "standard", "max_attempts": 5})
        s3 = meter.attach(boto3.client("s3", region_name=REGION, config=config))
        kms = meter.attach(boto3.client("kms", region_name=REGION, config=config))
        s3.create_bucket(Bucket=BUCKET)
        key_id = kms.create_key(Description="s3memory bench")["KeyMetadata"]["KeyId"]
        yield s3, kms, key_id


def make_tool(s3: Any, kms: Any, key_id: str, agent_id: str) -> S3MemoryTool:
    return S3MemoryTool(bucket=BUCKET, agent_id=agent_id, keys=KmsKeys(key_id, kms_client=kms), s3_client=s3,
                        prefix=PREFIX)  # fmt: skip


# --- 1. session trace ------------------------------------------------------------------


def _replay(
    meter: Meter,
    steps: list[trace.Step],
    call: Callable[[dict[str, Any]], str],
    settle: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """Replay `steps`, one phase per command. `settle`: wait for what a command sends after its
    answer (s3memory's release of an intent record): counted in the command's row, its time not in
    the command's nor the session's (between an agent's commands the model thinks)."""
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    settling = 0.0
    for i, step in enumerate(steps):
        with Phase(meter) as phase:
            try:
                out, failed = call(step.command), False
            except (ToolError, NaiveError) as exc:
                out, failed = str(getattr(exc, "message", None) or exc), True
            phase.answer()
            before = time.perf_counter()
            settle()
            settling += time.perf_counter() - before
        rows.append({
            "kind": step.kind, "first": i == 0, "seconds": phase.seconds, "cpu_seconds": phase.cpu_seconds,
            "s3": phase.count("s3"), "kms": phase.count("kms"), "ops": dict(phase.calls),
            "failed": failed, "expected_failure": step.fails, "output": out,
        })  # fmt: skip
    total = time.perf_counter() - start - settling
    return {
        "seconds": total,
        "commands": len(rows),
        "s3": sum(r["s3"] for r in rows),
        "kms": sum(r["kms"] for r in rows),
        "cpu_seconds": sum(r["cpu_seconds"] for r in rows),
        "kms_ops": {op: sum(r["ops"].get(f"kms:{op}", 0) for r in rows) for op in ("GenerateDataKey", "Decrypt")},
        "unexpected": sum(r["failed"] != r["expected_failure"] for r in rows),
        "rows": rows,
    }


def _percentile(values: list[float], p: int) -> float:
    """The p-th percentile (nearest rank) of `values`."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def _by_kind(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for kind in trace.KINDS:
        mine = [r for r in rows if r["kind"] == kind and not r["first"]]
        if mine:
            out[kind] = {
                "n": len(mine),
                "s3_mean": statistics.fmean(r["s3"] for r in mine),
                "s3_max": max(r["s3"] for r in mine),
                "kms_mean": statistics.fmean(r["kms"] for r in mine),
                "ms_mean": 1000 * statistics.fmean(r["seconds"] for r in mine),
                "ms_p50": 1000 * _percentile([r["seconds"] for r in mine], 50),
                "ms_p95": 1000 * _percentile([r["seconds"] for r in mine], 95),
            }
    return out


def session(n_commands: int, n_seed_files: int = 40) -> dict[str, Any]:
    seed_steps, steps = trace.build(SEED, n_seed_files, n_commands)
    meter = Meter()
    results: dict[str, Any] = {"commands": n_commands, "seed_files": n_seed_files}
    with aws(meter) as (s3, kms, key_id):
        # s3memory: memory written by an earlier process, replayed by a fresh tool instance (a
        # cold Lambda): its first command pays the crash-recovery LIST, and its first read or write
        # one KMS Decrypt (the agent's branch key, made by the earlier process's first write).
        with make_tool(s3, kms, key_id, "trace-s3memory") as seeder:
            for step in seed_steps:
                seeder.call(step.command)
        with make_tool(s3, kms, key_id, "trace-s3memory") as tool:
            results["s3memory"] = _replay(meter, steps, tool.call, tool.memory.settle)
        naive = NaiveMemory(s3, kms, BUCKET, key_id, "trace-naive", prefix=PREFIX)
        for step in seed_steps:
            naive.call(step.command)
        results["naive"] = _replay(meter, steps, naive.call)
        competent = CompetentMemory(s3, kms, BUCKET, key_id, "trace-competent", prefix=PREFIX)
        for step in seed_steps:
            competent.call(step.command)
        competent._data_key = None  # a fresh process: no data key yet
        competent._unwrapped.clear()
        results["competent"] = _replay(meter, steps, competent.call)
    with tempfile.TemporaryDirectory(prefix="s3memory-bench-") as tmp:
        local = BetaLocalFilesystemMemoryTool(base_path=tmp)
        for step in seed_steps:
            local.call(step.command)
        results["local"] = _replay(meter, steps, local.call)
    pairs = zip(results["s3memory"]["rows"], results["naive"]["rows"], strict=True)
    results["identical_outputs"] = sum(a["output"] == b["output"] for a, b in pairs)
    pairs = zip(results["s3memory"]["rows"], results["competent"]["rows"], strict=True)
    results["identical_competent"] = sum(a["output"] == b["output"] for a, b in pairs)
    for name in ("s3memory", "naive", "competent"):
        results[name]["by_kind"] = _by_kind(results[name]["rows"])
    results["budget_failures"] = [
        {"kind": r["kind"], "s3": r["s3"], "ops": r["ops"], "command": s.command.get("path", s.command.get("new_path"))}
        for r, s in zip(results["s3memory"]["rows"], steps, strict=True)
        if not r["first"] and r["kind"] in BUDGETS and r["s3"] > BUDGETS[r["kind"]]
    ]
    for name in ("s3memory", "naive", "competent", "local"):
        for row in results[name]["rows"]:
            del row["output"]
    return results


# --- 2. directory rename and recursive delete ------------------------------------------


def _bulk_layout(n_files: int) -> list[MemoryPath]:
    return [MemoryPath(("archive", f"{i % 10:02d}", f"note-{i:05d}.md")) for i in range(n_files)]


def _bulk_text(i: int) -> str:
    return "".join(f"[{i:05d}-{j:03d}] {trace.PHRASES[(i + j) % len(trace.PHRASES)]}\n" for j in range(20))


def _count_keys(s3: Any, prefix: str) -> int:
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return sum(len(page.get("Contents", [])) for page in pages)


def _count_files(s3: Any, root: str) -> int:
    """Objects under an s3memory agent's root but its keystore (its branch keys stay when files go)."""
    return _count_keys(s3, root) - _count_keys(s3, root + ".s3memory/keys/")


def _measure(meter: Meter, fn: Callable[[], object], settle: Callable[[], None] = lambda: None) -> dict[str, Any]:
    with Phase(meter) as phase:
        fn()
        phase.answer()
        settle()  # counted, not timed (see `_replay`)
    return {"seconds": phase.seconds, "cpu_seconds": phase.cpu_seconds, "s3": phase.count("s3"),
            "kms": phase.count("kms"), "ops": dict(phase.calls)}  # fmt: skip


def bulk(n_files: int, *, with_copy: bool = True) -> dict[str, Any]:
    layout = _bulk_layout(n_files)
    meter = Meter()
    results: dict[str, Any] = {"files": n_files}
    with aws(meter) as (s3, kms, key_id):
        agent = "bulk-s3memory"
        with make_tool(s3, kms, key_id, agent) as seeder:
            for i, path in enumerate(layout):
                seeder.memory.vault.write(path, _bulk_text(i))
        with make_tool(s3, kms, key_id, agent) as tool:
            cmd = {"command": "rename", "old_path": "/memories/archive", "new_path": "/memories/archive-2024"}
            results["s3memory_rename"] = _measure(meter, lambda: tool.call(cmd), tool.memory.settle)
            moved = _count_keys(s3, f"{PREFIX}{agent}/archive-2024/"), _count_keys(s3, f"{PREFIX}{agent}/archive/")
            results["s3memory_rename"]["verified"] = moved == (n_files, 0)
            cmd = {"command": "delete", "path": "/memories/archive-2024"}
            results["s3memory_delete"] = _measure(meter, lambda: tool.call(cmd), tool.memory.settle)
            results["s3memory_delete"]["verified"] = _count_files(s3, f"{PREFIX}{agent}/") == 0

        competent = CompetentMemory(s3, kms, BUCKET, key_id, "bulk-competent", prefix=PREFIX)
        for i, path in enumerate(layout):
            competent._write(path, _bulk_text(i))
        competent._data_key = None  # measured as a fresh process
        competent._unwrapped.clear()
        rename = functools.partial(competent.rename, "/memories/archive", "/memories/archive-2024")
        results["competent_rename"] = _measure(meter, rename)
        moved = (
            _count_keys(s3, f"{PREFIX}bulk-competent/archive-2024/"),
            _count_keys(s3, f"{PREFIX}bulk-competent/archive/"),
        )
        results["competent_rename"]["verified"] = moved == (n_files, 0)
        results["competent_delete"] = _measure(meter, functools.partial(competent.delete, "/memories/archive-2024"))
        results["competent_delete"]["verified"] = _count_keys(s3, f"{PREFIX}bulk-competent/") == 0

        variants = [("bulk-naive", True, ("rename", "delete")), ("bulk-naive-copy", False, ("rename",))]
        for agent, bind, ops in variants[: 2 if with_copy else 1]:
            naive = NaiveMemory(s3, kms, BUCKET, key_id, agent, prefix=PREFIX, bind_path=bind)
            for i, path in enumerate(layout):
                naive._write(path, _bulk_text(i))
            label = "naive" if bind else "naive_copy"
            rename = functools.partial(naive.rename, "/memories/archive", "/memories/archive-2024")
            results[f"{label}_rename"] = _measure(meter, rename)
            moved = _count_keys(s3, f"{PREFIX}{agent}/archive-2024/"), _count_keys(s3, f"{PREFIX}{agent}/archive/")
            results[f"{label}_rename"]["verified"] = moved == (n_files, 0)
            if "delete" in ops:
                results[f"{label}_delete"] = _measure(meter, functools.partial(naive.delete, "/memories/archive-2024"))
                results[f"{label}_delete"]["verified"] = _count_keys(s3, f"{PREFIX}{agent}/") == 0
    return results


# --- 3. view of /memories with many objects --------------------------------------------


def listing_layout(n_objects: int) -> Iterator[tuple[str, int]]:
    """(relative key, plaintext size) of exactly `n_objects` objects in many directories.

    Two root files; `n_objects // 2500` top-level directories, each with 4 files of its own and 24
    subdirectories sharing the rest; a hidden `.archive/` and a `node_modules/` at the root
    (1% of the objects each) that the view must not descend into.
    """
    n_top = max(2, n_objects // 2500)
    hidden = n_objects // 100
    yield "index.md", 600
    yield "todo.md", 1200
    rest = n_objects - 2 - 2 * hidden - 4 * n_top
    for i in range(hidden):
        yield f".archive/{i % 7}/old-{i:06d}.md", 100 + i % 900
        yield f"node_modules/pkg-{i % 13}/file-{i:06d}.js", 100 + i % 900
    for t in range(n_top):
        for f in range(4):
            yield f"project-{t:03d}/{('README', 'status', 'plan', 'notes')[f]}.md", 200 + 97 * (t + f) % 3000
    for i in range(rest):
        t, s = i % n_top, (i // n_top) % 24
        yield f"project-{t:03d}/topic-{s:02d}/note-{i:06d}.md", 50 + (31 * i) % 4000


def _seed_plain(s3: Any, bucket: str, keys: Iterator[tuple[str, int]]) -> tuple[int, str]:
    """Put plain bodies of `size + 16` bytes (the stored size of a sealed `size`-byte file).

    A directory view only lists, so no object needs to be a real envelope. moto's backend is
    written to directly when it can be (about 40 µs an object); otherwise the raw client is used.
    """
    filler = bytes(5000)
    try:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        backend = s3_backends[os.environ.get("MOTO_ACCOUNT_ID", DEFAULT_ACCOUNT_ID)]["global"]
        backend.get_bucket(bucket)

        def put(key: str, body: bytes) -> None:
            backend.put_object(bucket, key, body)

        how = "moto backend (in process)"
    except Exception:  # any moto layout change: fall back to the public API

        def put(key: str, body: bytes) -> None:
            s3.put_object(Bucket=bucket, Key=key, Body=body)

        how = "raw boto3 client"
    n = 0
    for key, size in keys:
        put(key, filler[: size + 16])
        n += 1
    return n, how


def listing(n_objects: int) -> dict[str, Any]:
    meter = Meter()
    results: dict[str, Any] = {"objects": n_objects}
    with aws(meter) as (s3, kms, key_id):
        # One bucket per backend: moto's ListObjectsV2 costs time in proportion to the bucket.
        naive_bucket = BUCKET + "-naive"
        s3.create_bucket(Bucket=naive_bucket)
        start = time.perf_counter()
        seeded = 0
        for agent, bucket in (("list-s3memory", BUCKET), ("list-naive", naive_bucket)):
            root = f"{PREFIX}{agent}/"
            count, how = _seed_plain(s3, bucket, ((root + rel, size) for rel, size in listing_layout(n_objects)))
            seeded += count
        results["seed_seconds"] = time.perf_counter() - start
        results["seeded"] = seeded
        results["seed_method"] = how
        with make_tool(s3, kms, key_id, "list-s3memory") as tool:
            tool.memory.recover()  # the once-per-instance crash-recovery LIST, made before measuring
            out: dict[str, str] = {}
            view = {"command": "view", "path": "/memories"}
            results["s3memory"] = _measure(meter, lambda: out.setdefault("s", tool.call(view)))
        naive = NaiveMemory(s3, kms, naive_bucket, key_id, "list-naive", prefix=PREFIX)
        results["naive"] = _measure(meter, lambda: out.setdefault("n", naive.view("/memories")))
    for name in ("s3memory", "naive"):
        ops = results[name].pop("ops")
        results[name]["lists"] = calls_in(ops, "s3", "ListObjectsV2")
        results[name]["heads"] = calls_in(ops, "s3", "HeadObject")
    lines = out["s"].split("\n")[1:]
    results["lines"] = len(lines)
    results["dirs_shown"] = sum(1 for line in lines if line.endswith("/")) + 1  # + the listed root itself
    results["top_dirs_shown"] = sum(1 for line in lines if line.endswith("/") and line.count("/") == 3)
    results["identical_outputs"] = out["s"] == out["n"]
    results["pages_if_flat"] = math.ceil(n_objects / 1000)
    return results
