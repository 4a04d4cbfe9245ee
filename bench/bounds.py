"""What one hostile command can cost: `python bench/bounds.py` prints the figures for the current code.

- str_replace of a 1 MiB file with a one-character old_str (every character matches): CPU time
  and the size of the error message;
- str_replace of 1 MiB of "a" with an old_str of 1,000, 10,000 and 30,000 "a"s (every position
  matches and the needle overlaps itself): CPU time. Counted by Knuth-Morris-Pratt now; before,
  searching again from each match plus one took 2.7 s, 43 s and 125 s of CPU;
- create at depth 100 (refused before any request now) and at the deepest allowed path: requests;
- view of a 999,999-line file: peak Python memory while rendering;
- import of a 10 MiB tarball of 20 members: peak Python memory while listing and reading it;
- create of 64 MiB with the guard on: time until the size refusal (the guard no longer scans first).
"""

from __future__ import annotations

import contextlib
import io
import sys
import tarfile
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MIB = 1024 * 1024


def str_replace_worst() -> str:
    from s3memory.core import edit
    from s3memory.errors import CommandError

    started = time.process_time()
    try:
        edit.replace_unique("a" * MIB, "a", "b", "/memories/f.md")
    except CommandError as err:
        message = err.message
    seconds = time.process_time() - started
    return f"str_replace, 1 MiB of 'a', old_str 'a': {seconds:.3f} s CPU, message {len(message):,} chars"


def str_replace_overlapping() -> list[str]:
    from s3memory.core import edit
    from s3memory.errors import CommandError

    lines = []
    for size in (1_000, 10_000, 30_000):
        started = time.process_time()
        with contextlib.suppress(CommandError):
            edit.replace_unique("a" * MIB, "a" * size, "b", "/memories/f.md")
        seconds = time.process_time() - started
        lines.append(f"str_replace, 1 MiB of 'a', old_str of {size:,} 'a': {seconds:.3f} s CPU")
    return lines


def view_memory() -> str:
    from s3memory.core import render

    text = "x\n" * 999_999
    tracemalloc.start()
    render.file_view("/memories/big.md", text, None, 100_000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return f"view of a 999,999-line file: peak {peak / MIB:.1f} MiB while rendering"


def import_memory() -> str:
    from s3memory.admin.transfer import local_source

    with tempfile.TemporaryDirectory() as tmp:
        tarball = Path(tmp) / "backup.tar.gz"
        with tarfile.open(tarball, "w:gz") as tar:
            for i in range(20):
                data = bytes([65 + i % 26]) * (MIB // 2)
                info = tarfile.TarInfo(f"memories/m{i}.md")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        spool = Path(tmp) / "spool"
        spool.mkdir()
        tracemalloc.start()
        files, _ = local_source(tarball, MIB, spool)
        for file in files:
            file.load()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return f"import of a 10 MiB tarball (20 members): peak {peak / MIB:.1f} MiB"


def deep_create_and_big_create() -> list[str]:
    import boto3
    from moto import mock_aws

    from s3memory import LocalKeys, S3MemoryTool

    lines = []
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")  # noqa: S106 - moto
        s3.create_bucket(Bucket="bounds")
        calls: list[str] = []
        s3.meta.events.register("before-call.s3.*", lambda model, **_: calls.append(model.name))
        with S3MemoryTool(bucket="bounds", agent_id="a", keys=LocalKeys(bytes(32)), s3_client=s3) as tool:
            tool.memory.view("/memories")
            for depth in (100, 32):
                calls.clear()
                path = "/memories/" + "/".join(["d"] * (depth - 1)) + "/f.md"
                outcome = _call(tool, path, "x")
                lines.append(f"create at depth {depth}: {len(calls)} S3 requests ({outcome})")
            calls.clear()
            started = time.perf_counter()
            outcome = _call(tool, "/memories/huge.md", "AKIAIOSFODNN7EXAMPLE " * (64 * MIB // 21))
            lines.append(f"create of 64 MiB: refused in {time.perf_counter() - started:.3f} s, "
                         f"{len(calls)} S3 requests ({outcome})")  # fmt: skip
    return lines


def _call(tool: Any, path: str, text: str) -> str:
    from anthropic.lib.tools import ToolError

    try:
        tool.call({"command": "create", "path": path, "file_text": text})
    except ToolError as err:
        return str(err.content)[:60] + "..."
    return "created"


def main() -> None:
    figures = [str_replace_worst(), *str_replace_overlapping(), view_memory(), import_memory()]
    for line in [*figures, *deep_create_and_big_create()]:
        print(line)


if __name__ == "__main__":
    main()
