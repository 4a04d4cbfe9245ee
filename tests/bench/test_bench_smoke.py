"""`bench/run.py --quick` end to end: the structure of its results (call counts, never timings)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import trace

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("bench") / "results.json"
    proc = subprocess.run(
        # Call counts only are asserted: a tenth of the injected latency keeps them and sleeps 40 s less.
        [sys.executable, "bench/run.py", "--quick", "--latency-scale", "0.1", "--no-write", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("# s3memory benchmark results\n")
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


def test_session_trace(results: dict[str, Any]) -> None:
    s = results["session"]
    assert s["commands"] == 50
    for name in ("s3memory", "naive", "local"):
        assert s[name]["commands"] == 50
        assert s[name]["unexpected"] == 0, name
    assert s["identical_outputs"] == 50  # naive returns the same text for every command
    assert s["budget_failures"] == []
    for kind, stats in s["s3memory"]["by_kind"].items():
        if kind in ("view_root", "view_dir", "view_file", "create", "str_replace", "insert", "rename_file"):
            assert stats["s3_max"] <= {"view_file": 1, "rename_file": 5, "create": 3}.get(kind, 2), kind
    # KMS: the agent's branch key was made by the seeding process's first write; the replaying
    # process unwraps it once (one Decrypt) and seals all its writes under it too (no new key).
    assert s["s3memory"]["kms_ops"] == {"GenerateDataKey": 0, "Decrypt": 1}
    assert s["local"]["s3"] == s["local"]["kms"] == 0
    # The naive backend calls KMS on every read and write.
    assert s["naive"]["kms"] > 25 * s["s3memory"]["kms"]
    first = s["s3memory"]["rows"][0]
    # the root listing also answers the interrupted-change check: one request for a cold view
    assert (first["kind"], first["ops"]) == ("view_root", {"s3:ListObjectsV2": 1})


def test_session_trace_is_deterministic() -> None:
    a = trace.build(20250818, 20, 50)
    b = trace.build(20250818, 20, 50)
    assert a == b
    assert [step.kind for step in a[1][:1]] == ["view_root"]
    assert len(a[1]) == 50


def test_bulk_rename_and_delete(results: dict[str, Any]) -> None:
    b = results["bulk"]
    n = b["files"]
    assert n == 100
    mine, naive = b["s3memory_rename"], b["naive_rename"]
    assert [b[k]["verified"] for k in ("s3memory_rename", "naive_rename", "s3memory_delete", "naive_delete")] == [
        True,
        True,
        True,
        True,
    ]
    # One GET and one PUT per file (re-encrypted for its new path), sources removed in one batch.
    assert mine["ops"]["s3:GetObject"] == n + 1  # + the GET that finds the source is not a file
    assert mine["ops"]["s3:PutObject"] == n + 1  # + the intent record
    assert mine["ops"]["s3:DeleteObjects"] == math.ceil(n / 1000)
    assert mine["s3"] / n < naive["s3"] / n
    assert naive["ops"]["s3:DeleteObject"] == n
    assert mine["kms"] <= 2
    assert naive["kms"] == 2 * n
    assert b["s3memory_delete"]["s3"] <= 6
    assert b["naive_delete"]["ops"]["s3:DeleteObject"] == n


def test_listing_of_many_objects(results: dict[str, Any]) -> None:
    lst = results["listing"]
    assert lst["objects"] == 10_000
    assert lst["seeded"] == 20_000
    assert lst["identical_outputs"] is True
    mine, naive = lst["s3memory"], lst["naive"]
    # The first page ends inside the first project directory, so every shown top-level
    # directory is listed once: 1 first page + 1 root level + 4 directories.
    assert lst["top_dirs_shown"] == 4
    assert mine["lists"] == 1 + 1 + lst["top_dirs_shown"]
    assert mine["lists"] <= 1 + lst["dirs_shown"]
    assert mine["heads"] == 0
    assert naive["lists"] == lst["pages_if_flat"] == 10
    assert naive["heads"] == 2 + 4 * lst["top_dirs_shown"]  # every shown file: root files + 4 per project


def test_cold_start_and_budgets(results: dict[str, Any]) -> None:
    cold = results["cold_start"]
    assert cold["anthropic_lazy"] is True
    assert cold["rows"]["import s3memory"]["loaded"] == {"anthropic": False, "boto3": False, "botocore": False}
    assert cold["rows"]["import s3memory.cli"]["loaded"] == {"anthropic": False, "boto3": False, "botocore": False}
    assert all(row["ok"] for row in results["budgets"]), results["budgets"]
    # Only the agent's first write (the first row) creates its keystore: a claim and an index entry.
    assert [row["keystore"] for row in results["budgets"]] == [2] + [0] * (len(results["budgets"]) - 1)
    met = {t["target"]: t["met"] for t in results["targets"]}
    for name, ok in met.items():  # the structural targets; timing targets are reported, not tested
        if name.startswith(("Session", "Per-command", "view /memories", "import s3memory")):
            assert ok, name
