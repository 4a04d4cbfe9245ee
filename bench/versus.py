"""s3memory against its baselines on the session trace, interleaved over several reps.

Each rep runs every backend once, in a rotating order, each on a fresh in-process moto with the
same injected latency (20 ms per S3 request, 15 ms per KMS request, `bench/latency.py`): a seed of
40 files written by an earlier process, then the 240-command trace (`bench/trace.py`) replayed by a
fresh instance (a cold process). Reported per backend: the median wall time and its range, the
ratio to s3memory, the deterministic S3 and KMS request counts, and CPU split into the client's and
moto's (moto answers in the calling thread, so the thread CPU spent inside moto's handler is
measured apart and subtracted). Every backend must return s3memory's strings for every command.

    python bench/versus.py                # 5 reps
    python bench/versus.py --reps 7 --json out.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from anthropic.lib.tools import ToolError  # noqa: E402

from bench import trace  # noqa: E402
from bench.competent import CompetentMemory  # noqa: E402
from bench.latency import S3_DELAY, Meter, Phase, round_trips  # noqa: E402
from bench.naive import NaiveError  # noqa: E402
from bench.scenarios import BUCKET, PREFIX, SEED, aws, make_tool  # noqa: E402
from bench.strong import StrongMemory  # noqa: E402

BACKENDS = ("s3memory", "strong", "competent")
GUARANTEES = """What each gives for its time:

- **s3memory**: conditional creates and edits, crash-consistent directory changes (intent records,
  completed by the next command), the secret guard, quotas, attribution, branch-key rotation, the
  integrity commitment. Its lead comes from what the strong baseline does not do: an edit, delete
  or rename of a file the tool has just read or written writes If-Match on the version it holds
  without reading it again (`s3memory/memory/recent.py`). That is answered by S3's conditions,
  never by what the tool remembers; a baseline that did the same would close most of the gap.
  A create checks, then PUTs, as the strong baseline does (`s3memory/memory/creates.py`).
- **strong** (`bench/strong.py`): checks sent together, If-None-Match creates and If-Match edits,
  directory-first lookups, parallel directory copies, one data key per process. No intent records
  (a crash mid-rename leaves a half-moved directory for good), no guard, quotas, attribution or
  rotation.
- **competent** (`bench/competent.py`): one cached data key, sizes from listings, batched deletes,
  parallel copies; no conditional writes (a concurrent edit can be lost), no intent records, guard
  or quotas."""
START, END = "<!-- versus:start -->", "<!-- versus:end -->"


class MotoCpu:
    """Thread CPU spent inside moto's handler (between the first and the last `before-send`)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._lock = threading.Lock()
        self._local = threading.local()

    def attach(self, client: Any) -> None:
        client.meta.events.register_first("before-send", self._start)
        client.meta.events.register_last("before-send", self._stop)

    def _start(self, **_: Any) -> None:
        self._local.started = time.thread_time()

    def _stop(self, **_: Any) -> None:
        spent = time.thread_time() - getattr(self._local, "started", time.thread_time())
        with self._lock:
            self.seconds += spent


def _backend(name: str, s3: Any, kms: Any, key_id: str) -> tuple[Callable[[dict[str, Any]], str], Any]:
    """(call, closer) of a fresh instance of `name` for agent `versus`."""
    if name == "s3memory":
        tool = make_tool(s3, kms, key_id, "versus")
        return tool.call, tool.close
    kind = StrongMemory if name == "strong" else CompetentMemory
    memory = kind(s3, kms, BUCKET, key_id, "versus", prefix=PREFIX)
    return memory.call, memory._pool.shutdown


def one_run(name: str, seed_steps: list[trace.Step], steps: list[trace.Step]) -> dict[str, Any]:
    meter, moto = Meter(), MotoCpu()
    with aws(meter) as (s3, kms, key_id):
        moto.attach(s3)
        moto.attach(kms)
        call, close = _backend(name, s3, kms, key_id)
        for step in seed_steps:
            call(step.command)
        close()
        call, close = _backend(name, s3, kms, key_id)  # a cold process replays the trace
        outputs = []
        marks: list[int] = []  # the meter's flight count before each command
        moto.seconds = 0.0
        with Phase(meter) as phase:
            for step in steps:
                marks.append(meter.flight_count())
                try:
                    outputs.append(call(step.command))
                except (ToolError, NaiveError) as exc:
                    outputs.append(str(getattr(exc, "message", None) or exc))
        close()
        flights = meter.flights()
        bounds = [*marks, len(flights)]
        # A command's requests are those sent between its start and the next one's (an intent
        # record released after an answer counts for the command after it, as the model waits).
        trips = [round_trips(flights[a:b], S3_DELAY) for a, b in itertools.pairwise(bounds)]
    return {
        "seconds": phase.seconds, "cpu": phase.cpu_seconds, "moto_cpu": moto.seconds,
        "s3": phase.count("s3"), "kms": phase.count("kms"), "outputs": outputs,
        "round_trips": trips,
    }  # fmt: skip


def run(reps: int, commands: int = 240, seed_files: int = 40) -> dict[str, Any]:
    seed_steps, steps = trace.build(SEED, seed_files, commands)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in BACKENDS}
    for rep in range(reps):
        order = BACKENDS[rep % len(BACKENDS) :] + BACKENDS[: rep % len(BACKENDS)]
        for name in order:
            runs[name].append(one_run(name, seed_steps, steps))
        print(f"[versus] rep {rep + 1}/{reps} done", file=sys.stderr)
    reference = runs["s3memory"][0]["outputs"]
    result: dict[str, Any] = {"reps": reps, "commands": commands, "backends": {}, "kinds": {}}
    for kind in dict.fromkeys(step.kind for step in steps):  # round trips: the same in every rep
        at = [i for i, step in enumerate(steps) if step.kind == kind]
        result["kinds"][kind] = {"n": len(at)} | {
            name: statistics.fmean(mine[0]["round_trips"][i] for i in at) for name, mine in runs.items()
        }
    for name, mine in runs.items():
        walls = [r["seconds"] for r in mine]
        result["backends"][name] = {
            "median_s": statistics.median(walls), "min_s": min(walls), "max_s": max(walls),
            "client_cpu_s": statistics.median(r["cpu"] - r["moto_cpu"] for r in mine),
            "moto_cpu_s": statistics.median(r["moto_cpu"] for r in mine),
            "s3": sorted({r["s3"] for r in mine}), "kms": sorted({r["kms"] for r in mine}),
            "identical": min(sum(a == b for a, b in zip(r["outputs"], reference, strict=True)) for r in mine),
        }  # fmt: skip
    base = result["backends"]["s3memory"]["median_s"]
    for row in result["backends"].values():
        row["vs_s3memory"] = row["median_s"] / base  # > 1: slower than s3memory
    return result


def table(result: dict[str, Any]) -> str:
    lines = [
        "| backend | wall s, median (min-max) | vs s3memory | client CPU s | moto CPU s | S3 requests | KMS requests "
        "| identical outputs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in result["backends"].items():
        lines.append(
            f"| {name} | {r['median_s']:.2f} ({r['min_s']:.2f}-{r['max_s']:.2f}) | {r['vs_s3memory']:.2f}x "
            f"| {r['client_cpu_s']:.2f} | {r['moto_cpu_s']:.2f} | {'/'.join(map(str, r['s3']))} "
            f"| {'/'.join(map(str, r['kms']))} | {r['identical']}/{result['commands']} |"
        )
    return "\n".join(lines)


def kinds_table(result: dict[str, Any]) -> str:
    """Mean round trips per command kind (the requests a command waits for one after another)."""
    lines = ["| command kind | n | " + " | ".join(BACKENDS) + " |", "|---|---|" + "---|" * len(BACKENDS)]
    total = dict.fromkeys(BACKENDS, 0.0)
    for kind, row in result["kinds"].items():
        lines.append(f"| {kind} | {row['n']} | " + " | ".join(f"{row[name]:.2f}" for name in BACKENDS) + " |")
        for name in BACKENDS:
            total[name] += row[name] * row["n"]
    lines.append(f"| all, in sum | {result['commands']} | " + " | ".join(f"{total[n]:.1f}" for n in BACKENDS) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=5, help="reps, each running every backend once (default 5)")
    parser.add_argument("--commands", type=int, default=240, help="trace length (default 240)")
    parser.add_argument("--json", metavar="FILE", help="also write the raw results")
    parser.add_argument("--write", action="store_true", help="put the table into bench/RESULTS.md (its own section)")
    args = parser.parse_args(argv)
    result = run(args.reps, args.commands)
    print(table(result))
    print("\nRound trips per command kind (mean; 20 ms each on a clock where CPU takes no time):\n")
    print(kinds_table(result))
    print(
        f"\n{args.reps} reps, backends interleaved in a rotating order; `vs s3memory` > 1 means slower than s3memory."
    )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2), encoding="utf-8")
    if args.write:
        from bench.client_cpu import write_results

        note = (f"Median (lowest to highest) of {args.reps} reps of the {args.commands}-command session trace, "
                "backends interleaved in a rotating order, each on a fresh in-process moto (20 ms per S3 request, "
                "15 ms per KMS request); moto's CPU is the thread CPU inside its handler, counted apart. "
                f"Command: `python bench/versus.py --reps {args.reps} --write`.")  # fmt: skip
        kinds = ("Round trips per command kind, mean over the trace (the requests a command waits for one after "
                 "another, on a clock where CPU takes no time: `bench/latency.py`):")  # fmt: skip
        write_results(
            "## Against a strong baseline\n\n" + table(result) + "\n\n" + note + "\n\n" + kinds + "\n\n"
            + kinds_table(result) + "\n\n" + GUARANTEES, START, END,
        )  # fmt: skip
    identical = all(r["identical"] == result["commands"] for r in result["backends"].values())
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
