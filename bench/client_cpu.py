"""Client CPU per S3 request and per listed key, with moto in another process.

moto's server runs in a process of its own (tests/support/moto_server.py), so the CPU time of
each measuring process (`time.process_time`: every thread of it, the tool's workers included) is
the client's alone: botocore, s3memory, urllib3 and the standard library, none of the server.
Each variant runs in a fresh process, the variants interleaved rep by rep; the table shows the
median over reps and the spread (lowest to highest).

Variants:
- `botocore`: a boto3 client with botocore's stock timestamp parser (dateutil): s3memory before.
- `fast`: the same client as `ObjectStore` leaves it (`s3memory/storage/timestamps.py`).
- `crt`: `fast` with `awscrt` importable (`--crt-path`, a directory holding it, e.g. from
  `pip install --target DIR awscrt`): botocore then signs and computes CRC32 with the AWS CRT.
- `lean`: `bench/lean_transport.py`, botocore's signer over urllib3 with retries, timeouts and
  checksums kept (raw requests only: no tool runs on it).

    python bench/client_cpu.py                                  # 5 reps, prints the table
    python bench/client_cpu.py --reps 7 --crt-path /tmp/crt --write   # also into bench/RESULTS.md
    python bench/client_cpu.py --variants botocore,fast --reps 3
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT_DIR = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT_DIR / "bench"]
sys.path.insert(0, str(ROOT_DIR))

RESULTS = ROOT_DIR / "bench" / "RESULTS.md"
START, END = "<!-- client_cpu:start -->", "<!-- client_cpu:end -->"
VARIANTS = ("botocore", "fast", "crt", "lean")
BUCKET = "client-cpu"
AGENT_ROOT = "agents/cpu/"
PAGE_KEYS = 1000  # keys of the listed page, and files of the viewed directory (--page-keys)
BODY = b"x" * 4096


def _serve(conn: Any) -> None:
    """The moto server's process: its URL out, then its own CPU time when told to stop."""
    from tests.support.moto_server import running_moto_server

    with running_moto_server() as url:
        conn.send(url)
        conn.recv()
        conn.send(time.process_time())


def _seed(url: str, keys: int) -> None:
    from tests.support.moto_server import s3_client

    s3 = s3_client(url)
    s3.create_bucket(Bucket=BUCKET)
    s3.put_object(Bucket=BUCKET, Key="one/f", Body=BODY)
    for i in range(keys):
        s3.put_object(Bucket=BUCKET, Key=f"page/k{i:04d}", Body=b"x")
        s3.put_object(Bucket=BUCKET, Key=f"{AGENT_ROOT}big/f{i:04d}.md", Body=b"x" * 40)


# --- one variant, in its own process ---------------------------------------------------------


def _per_op(fn: Callable[[], Any], n: int, warm: int = 5) -> float:
    """Client CPU ms per call of `fn` (after `warm` calls that load and connect)."""
    for _ in range(warm):
        fn()
    start = time.process_time()
    for _ in range(n):
        fn()
    return 1000 * (time.process_time() - start) / n


def _boto3_client(url: str, variant: str) -> Any:
    import boto3
    from botocore.parsers import ResponseParserFactory
    from botocore.utils import parse_timestamp

    from s3memory.storage.clients import botocore_config
    from s3memory.storage.timestamps import parse_fast
    from tests.support import REGION
    from tests.support.moto_server import CREDENTIALS

    s3 = boto3.client("s3", endpoint_url=url, region_name=REGION, config=botocore_config(), **CREDENTIALS)
    if variant == "botocore":  # pinned, so that ObjectStore leaves the stock parser in place
        stock = ResponseParserFactory()
        stock.set_parser_defaults(timestamp_parser=parse_timestamp)
        s3._endpoint._response_parser_factory = stock
    else:
        parse_fast(s3)
    return s3


def _measure_boto3(url: str, variant: str, n: int, pages: int, keys: int) -> dict[str, float]:
    from s3memory import LocalKeys, S3MemoryTool
    from tests.support import LOCAL_KEY

    s3 = _boto3_client(url, variant)
    puts = iter(range(10**9))
    out = {
        "GetObject 4 KiB": _per_op(lambda: s3.get_object(Bucket=BUCKET, Key="one/f")["Body"].read(), n),
        "HeadObject": _per_op(lambda: s3.head_object(Bucket=BUCKET, Key="one/f"), n),
        "PutObject 4 KiB": _per_op(lambda: s3.put_object(Bucket=BUCKET, Key=f"w/{next(puts)}", Body=BODY), n),
        "ListObjectsV2, 1 key": _per_op(lambda: s3.list_objects_v2(Bucket=BUCKET, Prefix="one/"), n),
        f"ListObjectsV2, {keys:,} keys": _per_op(lambda: s3.list_objects_v2(Bucket=BUCKET, Prefix="page/"), pages, 2),
    }
    sent = [0]
    s3.meta.events.register("before-send.s3", lambda **_: sent.__setitem__(0, sent[0] + 1))
    with S3MemoryTool(
        bucket=BUCKET, agent_id="cpu", keys=LocalKeys(LOCAL_KEY), s3_client=s3, prefix=AGENT_ROOT.removesuffix("cpu/")
    ) as tool:
        own = f"/memories/{os.getpid()}"  # every process its own files
        tool.call({"command": "create", "path": f"{own}/f.md", "file_text": "x" * 4096})
        files = iter(range(10**9))
        commands = {
            "tool: view a 4 KiB file": (lambda: tool.call({"command": "view", "path": f"{own}/f.md"}), n),
            "tool: create a 4 KiB file": (
                lambda: tool.call({"command": "create", "path": f"{own}/c{next(files)}.md", "file_text": "y" * 4096}),
                n // 2,
            ),
            f"tool: view a directory of {keys:,} files": (
                lambda: tool.call({"command": "view", "path": "/memories/big"}),
                pages,
            ),
        }  # fmt: skip
        for name, (fn, count) in commands.items():
            fn()
            before = sent[0]
            out[name] = _per_op(fn, count, warm=0)
            out[name + " (requests)"] = (sent[0] - before) / count
    return out


def _measure_lean(url: str, n: int, pages: int, keys: int) -> dict[str, float]:
    from bench.lean_transport import LeanS3
    from s3memory.core.limits import DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_WORKERS
    from s3memory.storage.clients import SPARE_CONNECTIONS
    from tests.support import REGION
    from tests.support.moto_server import CREDENTIALS

    s3 = LeanS3(
        url,
        region=REGION,
        access_key=CREDENTIALS["aws_access_key_id"],
        secret_key=CREDENTIALS["aws_secret_access_key"],
        max_attempts=DEFAULT_MAX_ATTEMPTS,
        pool_size=DEFAULT_MAX_WORKERS + SPARE_CONNECTIONS,
    )
    puts = iter(range(10**9))
    listed, _ = s3.list(BUCKET, "page/")
    assert len(listed) == keys, len(listed)
    return {
        "GetObject 4 KiB": _per_op(lambda: s3.get(BUCKET, "one/f"), n),
        "HeadObject": _per_op(lambda: s3.head(BUCKET, "one/f"), n),
        "PutObject 4 KiB": _per_op(lambda: s3.put(BUCKET, f"w/{next(puts)}", BODY, {}), n),
        "ListObjectsV2, 1 key": _per_op(lambda: s3.list(BUCKET, "one/"), n),
        f"ListObjectsV2, {keys:,} keys": _per_op(lambda: s3.list(BUCKET, "page/"), pages, 2),
    }


def _worker(variant: str, url: str, n: int, pages: int, keys: int) -> None:
    os.environ.update(AWS_EC2_METADATA_DISABLED="true")
    measure = _measure_lean if variant == "lean" else partial(_measure_boto3, variant=variant)
    results = measure(url, n=n, pages=pages, keys=keys)
    if variant == "crt":
        from botocore.compat import HAS_CRT

        assert HAS_CRT, "awscrt is not importable: pass --crt-path"
    print(json.dumps(results))


# --- the runner ------------------------------------------------------------------------------


def _run_variant(variant: str, url: str, args: argparse.Namespace) -> dict[str, float]:
    env = dict(os.environ)
    paths = [str(ROOT_DIR)] + ([args.crt_path] if variant == "crt" else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    sizes = ["-n", str(args.n), "--pages", str(args.pages), "--page-keys", str(args.page_keys)]
    cmd = [sys.executable, __file__, "--worker", variant, "--url", url, *sizes]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"client_cpu: the {variant} run failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _derive(row: dict[str, float], keys: int) -> dict[str, float]:
    """Per listed key: what a full page costs beyond a 1-key one, per key (µs)."""
    page, one = row[f"ListObjectsV2, {keys:,} keys"], row["ListObjectsV2, 1 key"]
    return row | {"per listed key (µs)": 1000 * (page - one) / (keys - 1)}


RATIOS = (("fast", "botocore"), ("crt", "fast"), ("lean", "fast"))


def table(runs: dict[str, list[dict[str, float]]], variants: list[str]) -> str:
    metrics = list(dict.fromkeys(m for v in variants for row in runs[v] for m in row if not m.endswith("(requests)")))
    ratios = [(a, b) for a, b in RATIOS if a in variants and b in variants]
    lines = [
        "| client CPU, ms per request | " + " | ".join(variants) + "".join(f" | {a} / {b}" for a, b in ratios) + " |",
        "|---|" + "---|" * (len(variants) + len(ratios)),
    ]
    for metric in metrics:
        cells, medians = [], {}
        for v in variants:
            values = [row[metric] for row in runs[v] if metric in row]
            if not values:
                cells.append("-")
                continue
            medians[v] = statistics.median(values)
            digits = 0 if "µs" in metric else 2
            cells.append(f"{medians[v]:.{digits}f} ({min(values):.{digits}f} to {max(values):.{digits}f})")
        cells += [f"{medians[a] / medians[b]:.2f}" if a in medians and b in medians else "-" for a, b in ratios]
        requests = next(
            (row[metric + " (requests)"] for v in variants for row in runs[v] if metric + " (requests)" in row), 0
        )
        label = metric + (f" ({requests:.1f} requests), per command" if requests else "")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_results(text: str, start: str = START, end: str = END) -> None:
    """Put `text` between the markers `start` and `end` of bench/RESULTS.md (appended if absent)."""
    old = RESULTS.read_text(encoding="utf-8")
    block = f"{start}\n{text}\n{end}"
    if start in old:
        new = old[: old.index(start)] + block + old[old.index(end) + len(end) :]
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    RESULTS.write_text(new, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("-n", type=int, default=200, help="requests (and tool commands) per small measurement")
    parser.add_argument("--pages", type=int, default=20, help="full pages listed (and directories viewed) per rep")
    parser.add_argument("--page-keys", type=int, default=PAGE_KEYS, help="keys of the listed page (at most 1,000)")
    parser.add_argument("--variants", default="botocore,fast,lean", help=f"comma-separated, of {', '.join(VARIANTS)}")
    parser.add_argument("--crt-path", help="a directory holding awscrt (adds the crt variant)")
    parser.add_argument("--write", action="store_true", help=f"also write the table into {RESULTS.name}")
    parser.add_argument("--worker", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args.worker, args.url, args.n, args.pages, args.page_keys)
        return 0
    variants = args.variants.split(",")
    if args.crt_path and "crt" not in variants:
        variants.insert(-1 if "lean" in variants else len(variants), "crt")
    os.environ.update(AWS_EC2_METADATA_DISABLED="true")

    context = multiprocessing.get_context("spawn")
    here, there = context.Pipe()
    server = context.Process(target=_serve, args=(there,), daemon=True)
    server.start()
    url = here.recv()
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    start = time.perf_counter()
    try:
        _seed(url, args.page_keys)
        for rep in range(args.reps):
            order = variants[rep % len(variants) :] + variants[: rep % len(variants)]
            for variant in order:
                runs[variant].append(_derive(_run_variant(variant, url, args), args.page_keys))
            print(f"[client_cpu] rep {rep + 1}/{args.reps}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
        here.send("stop")
        server_cpu = here.recv()
    finally:
        server.join(timeout=10)
        if server.is_alive():
            server.terminate()
    text = "\n".join([
        table(runs, variants),
        "",
        f"Median (lowest to highest) of {args.reps} reps, variants interleaved, each in a fresh process; "
        f"{args.n} requests per row ({args.pages} pages and directory views); moto's server, in its own "
        f"process, used {server_cpu:.1f} s of CPU, "
        "counted in no row. Command: `python bench/client_cpu.py "
        + " ".join(a for a in (argv if argv is not None else sys.argv[1:]) if a != "--write") + "`.",
    ])  # fmt: skip
    print(text)
    if args.write:
        write_results(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
