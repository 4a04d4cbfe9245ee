"""`bench/client_cpu.py` end to end on a small page: its table's rows and request counts (never timings)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_client_cpu_measures_every_variant_and_counts_the_tools_requests() -> None:
    proc = subprocess.run(
        [sys.executable, "bench/client_cpu.py", "--reps", "1", "-n", "4", "--pages", "1", "--page-keys", "20"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line.split(" | ")[0].lstrip("| ") for line in proc.stdout.splitlines() if line.startswith("| ")]
    assert rows == [
        "client CPU, ms per request",
        "GetObject 4 KiB",
        "HeadObject",
        "PutObject 4 KiB",
        "ListObjectsV2, 1 key",
        "ListObjectsV2, 20 keys",
        "tool: view a 4 KiB file (1.0 requests), per command",
        "tool: create a 4 KiB file (3.0 requests), per command",
        "tool: view a directory of 20 files (1.0 requests), per command",
        "per listed key (µs)",
    ]
    header = proc.stdout.splitlines()[0]
    assert header == "| client CPU, ms per request | botocore | fast | lean | fast / botocore | lean / fast |"
    tool_rows = [line for line in proc.stdout.splitlines() if line.startswith("| tool: ")]
    assert [line.split(" | ")[3] for line in tool_rows] == ["-"] * 3  # the lean prototype runs no tool
