"""Run every benchmark and write bench/RESULTS.md (`make bench`).

python bench/run.py                 # full run (a few minutes), writes bench/RESULTS.md
python bench/run.py --quick         # reduced sizes (< 60 s), for the smoke test
python bench/run.py --no-write      # print the report, leave RESULTS.md alone
python bench/run.py --json out.json # also dump the raw results
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Run as a script, sys.path[0] is bench/, where bench/requests.py would shadow the `requests`
# package that moto imports: search the repository root instead, and import bench as a package.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from dataclasses import asdict, dataclass  # noqa: E402
from typing import Any  # noqa: E402

RESULTS = _HERE / "RESULTS.md"


@dataclass(frozen=True)
class Sizes:
    commands: int
    seed_files: int
    bulk_files: int
    objects: int
    import_runs: int
    crypto_number: int
    crypto_repeat: int
    quick: bool = False  # quick: no naive-copy rename, no cold start of the anthropic-importing snippets


FULL = Sizes(commands=240, seed_files=40, bulk_files=1000, objects=100_000, import_runs=5, crypto_number=200,
             crypto_repeat=200)  # fmt: skip
QUICK = Sizes(commands=50, seed_files=20, bulk_files=100, objects=10_000, import_runs=1, crypto_number=200,
              crypto_repeat=20, quick=True)  # fmt: skip


def _isolate_from_aws() -> None:
    """Fake credentials and no endpoints or profiles: nothing here can reach real AWS."""
    for name in [n for n in os.environ if n.startswith(("AWS_", "S3MEMORY_"))]:
        del os.environ[name]
    fake = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"}  # moto's; not a secret
    os.environ.update(fake, AWS_DEFAULT_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true")


def run(sizes: Sizes, log: Any = print) -> dict[str, Any]:
    from bench import report, scenarios, startup
    from bench import requests as budgets

    _isolate_from_aws()
    results: dict[str, Any] = {"sizes": asdict(sizes), "machine": report.machine(), "load_start": os.getloadavg()}
    start = time.perf_counter()
    steps = [
        ("session", lambda: scenarios.session(sizes.commands, sizes.seed_files)),
        ("bulk", lambda: scenarios.bulk(sizes.bulk_files, with_copy=not sizes.quick)),
        ("listing", lambda: scenarios.listing(sizes.objects)),
        ("cold_start", lambda: startup.cold_start(sizes.import_runs, with_anthropic=not sizes.quick)),
        ("crypto", lambda: startup.crypto(sizes.crypto_number, sizes.crypto_repeat)),
        ("budgets", lambda: [asdict(row) | {"ok": row.ok} for row in budgets.measure()]),
    ]
    for name, fn in steps:
        t = time.perf_counter()
        results[name] = fn()
        log(f"[bench] {name}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
    results["total_seconds"] = time.perf_counter() - start
    results["load_end"] = os.getloadavg()
    results["targets"] = report.targets(results)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="reduced sizes (about a minute)")
    parser.add_argument("--no-write", action="store_true", help=f"do not write {RESULTS.name}")
    parser.add_argument("--json", type=Path, help="also write the raw results to this file")
    parser.add_argument("--from-json", type=Path, help="render the report from a --json file instead of running")
    parser.add_argument("--latency-scale", type=float, default=1.0, metavar="F",
                        help="multiply the injected round trips (20 ms per S3, 15 ms per KMS request) by F; below 1 "
                             "the request counts stay exact but times and round trips do not (the smoke test's "
                             "0.1 spends less of its minute asleep)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.latency_scale <= 0:
        parser.error("--latency-scale must be above 0 (round trips are counted in units of the delay)")
    from bench import latency

    latency.DEFAULT_SCALE[0] = args.latency_scale

    from bench import report

    if args.from_json is not None:
        results = json.loads(args.from_json.read_text(encoding="utf-8"))
        args.quick = bool(results["sizes"]["quick"])
    else:
        results = run(QUICK if args.quick else FULL)
    text = report.render(results, quick=args.quick)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    if not args.no_write:
        old = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
        RESULTS.write_text(report.with_kept(text, old), encoding="utf-8")
        print(f"[bench] wrote {RESULTS}", file=sys.stderr)
        if not args.quick:
            report.update_docs(text, _HERE.parent / "docs" / "performance.md")
            print("[bench] updated docs/performance.md", file=sys.stderr)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
