"""Cold start (fresh interpreters) and per-command crypto overhead (timeit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import timeit
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

# Appended to every snippet: which heavy packages the snippet ended up importing.
_REPORT = (
    "import sys as _s, json as _j\n"
    "_r = {m: m in _s.modules for m in ('anthropic', 'boto3', 'botocore')}\n"
    "_r['construct_ms'] = globals().get('_construct_ms')\n"
    "print(_j.dumps(_r))"
)
# Prepended to the construction snippets: any socket connection (IMDS, STS, S3...) fails loudly.
_NO_NETWORK = (
    "import socket as _so\n"
    "def _refuse(*a, **k):\n"
    "    raise SystemExit('network call during construction')\n"
    "_so.socket.connect = _refuse; _so.create_connection = _refuse\n"
)
STORAGE = "import s3memory storage (store, keys, vault, commands)"
LAZY = ("import s3memory", "import s3memory.cli", STORAGE)
SNIPPETS: dict[str, str] = {
    "python -c pass (interpreter)": "pass",
    "import boto3": "import boto3",
    "import anthropic": "import anthropic",
    "import s3memory": "import s3memory",
    "import s3memory.cli": "import s3memory.cli",
    STORAGE: "import s3memory.storage.store, s3memory.storage.keys, s3memory.storage.vault, s3memory.memory.engine",
    "construct S3MemoryTool (LocalKeys, default S3 client)": _NO_NETWORK
    + "import time\nfrom s3memory import S3MemoryTool, LocalKeys\n_t = time.perf_counter()\n"
    "S3MemoryTool(bucket='s3memory-bench', agent_id='a', keys=LocalKeys(bytes(32))).close()\n"
    "_construct_ms = 1000 * (time.perf_counter() - _t)",
    "construct S3MemoryTool (KmsKeys, default clients)": _NO_NETWORK
    + "import time\nfrom s3memory import S3MemoryTool, KmsKeys\n_t = time.perf_counter()\n"
    "S3MemoryTool(bucket='s3memory-bench', agent_id='a', keys=KmsKeys('alias/bench')).close()\n"
    "_construct_ms = 1000 * (time.perf_counter() - _t)",
}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "S3MEMORY_"))}
    env.update({
        "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true", "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1",
    })  # fmt: skip
    return env


def _run(code: str, *flags: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = timeit.default_timer()
    proc = subprocess.run([sys.executable, *flags, "-c", code], env=_env(), capture_output=True, text=True,
                          cwd=REPO, check=False)  # fmt: skip
    elapsed = timeit.default_timer() - start
    if proc.returncode != 0:
        raise RuntimeError(f"snippet failed ({proc.returncode}): {code!r}\n{proc.stderr[-2000:]}")
    return elapsed, proc


def importtime_us(code: str) -> int:
    """Sum of the top-level cumulative times in `python -X importtime -c code` (µs)."""
    _, proc = _run(code, "-X", "importtime")
    total = 0
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if cumulative.strip().isdigit() and name.startswith(" ") and not name.startswith("  "):
            total += int(cumulative)
    return total


def cold_start(runs: int, *, with_anthropic: bool = True) -> dict[str, Any]:
    """Best-of-`runs` wall time of each snippet in a fresh interpreter, and its -X importtime.

    Without `with_anthropic`, the snippets that import anthropic (seconds each) are left out.
    """
    snippets = {
        label: code
        for label, code in SNIPPETS.items()
        if with_anthropic or not ("anthropic" in label or "S3MemoryTool" in label)
    }
    walls: dict[str, list[float]] = {label: [] for label in snippets}
    construct: dict[str, list[float]] = {label: [] for label in snippets}
    reports: dict[str, dict[str, Any]] = {}
    for _ in range(runs):  # round robin, so a burst of load on the shared machine hits every snippet alike
        for label, code in snippets.items():
            elapsed, proc = _run(code + "\n" + _REPORT)
            walls[label].append(elapsed)
            reports[label] = json.loads(proc.stdout.strip().splitlines()[-1])
            if reports[label]["construct_ms"] is not None:
                construct[label].append(reports[label]["construct_ms"])
    base_importtime = min(importtime_us("pass") for _ in range(3))
    rows: dict[str, Any] = {}
    for label, code in snippets.items():
        rows[label] = {
            "wall_ms": 1000 * min(walls[label]),
            "importtime_ms": max(0, min(importtime_us(code) for _ in range(2)) - base_importtime) / 1000,
            "loaded": {m: reports[label][m] for m in ("anthropic", "boto3", "botocore")},
            "construct_ms": min(construct[label]) if construct[label] else None,
        }
    base = rows["python -c pass (interpreter)"]["wall_ms"]
    for row in rows.values():
        row["over_interpreter_ms"] = row["wall_ms"] - base
    boto3_ms = rows["import boto3"]["over_interpreter_ms"]
    storage = rows[STORAGE]
    cli = rows["import s3memory.cli"]
    return {
        "runs": runs,
        "rows": rows,
        "boto3_ms": boto3_ms,
        "storage_ms": storage["over_interpreter_ms"],
        "cli_ms": cli["over_interpreter_ms"],
        "storage_within_target": storage["over_interpreter_ms"] <= boto3_ms + 50,
        "cli_within_target": cli["over_interpreter_ms"] <= boto3_ms + 50,
        "anthropic_lazy": not any(rows[k]["loaded"]["anthropic"] for k in LAZY),
    }


class _MemoryS3:
    """Just enough of an S3 client, in memory, for `crypto`'s vault: its keystore's listing and the two
    creates of the agent's first branch key. No network, no moto: the first seal makes the key, every
    later one takes it from the provider's cache (what is measured is the warm path)."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def list_objects_v2(self, **params: Any) -> dict[str, Any]:
        keys = sorted(k for k in self.objects if k.startswith(params.get("Prefix", "")))
        return {"Contents": [{"Key": k, "Size": len(self.objects[k]), "ETag": f'"{k}"'} for k in keys]}

    def put_object(self, **params: Any) -> dict[str, Any]:
        from botocore.exceptions import ClientError

        key = params["Key"]
        if params.get("IfNoneMatch") == "*" and key in self.objects:
            answer = {"Error": {"Code": "PreconditionFailed"}, "ResponseMetadata": {"HTTPStatusCode": 412}}
            raise ClientError(answer, "PutObject")  # type: ignore[arg-type]
        self.objects[key] = bytes(params["Body"])
        return {"ETag": f'"{key}"'}


def crypto(number: int = 200, repeat: int = 200) -> dict[str, float]:
    """µs per seal and per open of a 4 KiB file through `Vault`, the agent's branch key already cached.

    Many short repeats, best kept: on a shared machine the minimum is the run nobody preempted.
    """
    from s3memory.core.paths import MemoryPath
    from s3memory.storage.keys import LocalKeys
    from s3memory.storage.store import ObjectStore, StoredObject
    from s3memory.storage.vault import Vault

    s3 = _MemoryS3()
    store = ObjectStore(s3, "s3memory-bench")  # type: ignore[arg-type]
    vault = Vault(store, LocalKeys(bytes(range(32))), "bench-agent", "agents/")
    path = MemoryPath(("projects", "alpha", "notes.md"))
    data = os.urandom(4096)
    sealed = vault.seal(path, data)  # the agent's first write: creates its keystore (claim, index entry)
    assert len(s3.objects) == 2
    obj = StoredObject(sealed.body, '"etag"', sealed.metadata)
    assert vault.open(path, obj) == data

    def best(fn: Any) -> float:
        return 1e6 * min(timeit.repeat(fn, number=number, repeat=repeat)) / number

    timings = {"seal_us": best(lambda: vault.seal(path, data)), "open_us": best(lambda: vault.open(path, obj)),
               "number": number, "repeat": repeat}  # fmt: skip
    assert len(s3.objects) == 2  # every later seal used the same branch key: no request, no new key
    return timings
