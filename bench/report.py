"""The machine, the targets, and bench/RESULTS.md as Markdown."""

from __future__ import annotations

import datetime
import math
import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from bench import trace
from bench.latency import KMS_DELAY, S3_DELAY
from bench.scenarios import BUDGETS, SEED


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    versions = {}
    for dist in ("boto3", "botocore", "moto", "anthropic", "cryptography"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "-"
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "versions": versions,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("inf")


def targets(r: dict[str, Any]) -> list[dict[str, Any]]:
    s, b, lst, cold, cr = r["session"], r["bulk"], r["listing"], r["cold_start"], r["crypto"]
    mine = s["s3memory"]
    gdk, dec = mine["kms_ops"]["GenerateDataKey"], mine["kms_ops"]["Decrypt"]
    speedup = _ratio(b["naive_rename"]["seconds"], b["s3memory_rename"]["seconds"])
    over_budget = [row for row in r["budgets"] if not row["ok"]]
    return [
        {"target": "Session: S3 calls per command within the budgets (warm tool)",
         "measured": f"{len(s['budget_failures'])} of {s['commands'] - 1} warm commands over budget",
         "met": not s["budget_failures"]},
        {"target": "Session: KMS calls ≤ 1 per process per branch key",
         "measured": f"{gdk} GenerateDataKey, {dec} Decrypt (the agent's branch key, made by an earlier process) "
                     f"in {s['commands']} commands",
         "met": gdk + dec <= 1},
        {"target": "Per-command budgets (bench/requests.py)",
         "measured": f"{len(r['budgets']) - len(over_budget)} of {len(r['budgets'])} rows within budget",
         "met": not over_budget},
        {"target": f"Rename of a {b['files']:,}-file directory: parallel copies ≥ 10x faster than one by one",
         "measured": f"{speedup:.1f}x ({b['naive_rename']['seconds']:.2f} s → {b['s3memory_rename']['seconds']:.2f} s)",
         "met": speedup >= 10 and b["s3memory_rename"]["verified"]},
        {"target": f"view /memories of {lst['objects']:,} objects: ≤ 1 + (directories shown) list requests",
         "measured": f"{lst['s3memory']['lists']} requests, {lst['dirs_shown']} directories shown "
                     f"(a flat listing: {lst['pages_if_flat']})",
         "met": lst["s3memory"]["lists"] <= 1 + lst["dirs_shown"] and lst["identical_outputs"]},
        {"target": "import s3memory (and its storage and CLI modules) does not import anthropic",
         "measured": "anthropic not loaded" if cold["anthropic_lazy"] else "anthropic loaded",
         "met": cold["anthropic_lazy"]},
        {"target": "CLI and storage code start in ≤ import boto3 + 50 ms",
         "measured": f"storage {_ms(cold['storage_ms'])} ms, CLI {_ms(cold['cli_ms'])} ms; "
                     f"boto3 {cold['boto3_ms']:.0f} ms (+ 50 = {cold['boto3_ms'] + 50:.0f} ms)",
         "met": cold["storage_within_target"] and cold["cli_within_target"]},
        {"target": "Crypto per command ≤ 50 µs (4 KiB, key cached)",
         "measured": f"seal {cr['seal_us']:.1f} µs, open {cr['open_us']:.1f} µs",
         "met": cr["seal_us"] <= 50 and cr["open_us"] <= 50},
    ]  # fmt: skip


def _table(head: list[str], rows: list[list[Any]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _ms(value: float) -> str:
    """Milliseconds; a start-up difference below 1 ms (noise can make it negative) shows as ~0."""
    return f"{value:.0f}" if value >= 1 else "~0"


def _yes(ok: bool) -> str:
    return "**met**" if ok else "**missed**"


def render(r: dict[str, Any], *, quick: bool = False) -> str:
    m, sz = r["machine"], r["sizes"]
    out = [
        "# s3memory benchmark results",
        "",
        f"Command: `make bench` (runs `.venv/bin/python bench/run.py`){' with `--quick`' if quick else ''}. "
        f"Run {m['date']}; the whole run took **{r['total_seconds']:.0f} s**.",
        "",
        "## Machine",
        "",
        f"- CPU: {m['cpu']}, `nproc` = {m['nproc']}",
        f"- Python {m['python']} on {m['platform']}",
        "- " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()),
        f"- Load average at start / end: {r['load_start'][0]:.2f} / {r['load_end'][0]:.2f} "
        "(the machine is shared with other jobs: wall times vary between runs, by up to ~50 % in ours; "
        "call counts are deterministic)",
        "",
        "## Method",
        "",
        f"- S3 and KMS are moto (`mock_aws`) in this process. A botocore `before-send` hook sleeps "
        f"{S3_DELAY * 1000:.0f} ms per S3 request and {KMS_DELAY * 1000:.0f} ms per KMS request after moto has "
        "answered, standing for the network round trip; sleeps release the GIL, so parallel requests overlap as "
        "they would on S3. moto's own work does not overlap (it runs under this process's GIL), so *CPU s* "
        "(process CPU time: client, crypto and moto together) is shown beside wall time.",
        "- **s3memory**: `S3MemoryTool` with `KmsKeys` (default cache: 300 s) and 16 workers.",
        "- **naive**: `bench/naive.py`, same strings and the same security (KMS envelope, ciphertext bound to "
        "the path), done the plain way: `GenerateDataKey` on every write and `Decrypt` on every read, "
        "unconditional writes after HEAD/LIST checks, directory rename file by file (GET, Decrypt, "
        "GenerateDataKey, PUT, DELETE), recursive delete one `DeleteObject` at a time, directory view listing "
        "every page and HEADing each shown file for its size. *naive-copy* renames with server-side "
        "`CopyObject` + `DeleteObject` (its ciphertext is not bound to the path).",
        "- **competent**: `bench/competent.py`, what a capable user would write without s3memory's safety: "
        "one cached data key per process, sizes from listings, `DeleteObjects` batches, 16 parallel copies; "
        "no conditional writes, no intent records (a crash mid-rename leaves it half done), no guard or quotas.",
        "- **local**: the SDK's `BetaLocalFilesystemMemoryTool` in a temporary directory: no network, the lower bound.",
        "",
        "## Targets",
        "",
    ]
    out += _table(["target", "measured", ""], [[t["target"], t["measured"], _yes(t["met"])] for t in r["targets"]])

    s = r["session"]
    out += ["", f"## 1. Agent session trace ({s['commands']} commands)", "",
            f"A seeded session (`bench/trace.py`, seed {SEED}) over a memory of "
            f"{s['seed_files']} files written by an earlier process: views of directories and files, creates, "
            "str_replace, insert, renames and deletes of files and small directories, and a few commands that "
            "fail as agents' do. Every backend replays the same commands; s3memory starts as a fresh tool "
            "instance (a cold process), so its first command also pays the crash-recovery LIST and one KMS "
            f"Decrypt. s3memory and naive returned identical text for {s['identical_outputs']} of "
            f"{s['commands']} commands (s3memory and competent: {s['identical_competent']}); unexpected failures: "
            f"s3memory {s['s3memory']['unexpected']}, competent {s['competent']['unexpected']}, "
            f"naive {s['naive']['unexpected']}, local {s['local']['unexpected']}.", ""]  # fmt: skip
    base = s["s3memory"]["seconds"]
    rows = []
    for name in ("s3memory", "competent", "naive", "local"):
        x = s[name]
        n = x["commands"]
        rows.append([name, f"{x['seconds']:.2f}", f"{x['cpu_seconds']:.2f}", f"{1000 * x['seconds'] / n:.1f}",
                     x["s3"], f"{x['s3'] / n:.2f}", x["kms"], f"{x['kms'] / n:.3f}",
                     f"{x['seconds'] / base:.2f}x"])  # fmt: skip
    out += _table(["backend", "wall s", "CPU s", "ms / command", "S3 calls", "S3 / command", "KMS calls",
                   "KMS / command", "wall vs s3memory"], rows)  # fmt: skip
    out += ["", "Per command kind (warm: the session's first command is left out; S3 budget of the core issue):", ""]
    rows = []
    for kind in trace.KINDS:
        a, n = s["s3memory"]["by_kind"].get(kind), s["naive"]["by_kind"].get(kind)
        if a is None or n is None:
            continue
        budget = BUDGETS.get(kind)
        ok = "-" if budget is None else ("ok" if a["s3_max"] <= budget else "OVER")
        rows.append([kind, a["n"], f"{a['s3_mean']:.2f} / {a['s3_max']}", "-" if budget is None else f"≤ {budget}",
                     ok, f"{a['kms_mean']:.2f}", f"{a['ms_mean']:.0f}", f"{n['s3_mean']:.2f} / {n['s3_max']}",
                     f"{n['kms_mean']:.2f}", f"{n['ms_mean']:.0f}"])  # fmt: skip
    out += _table(["kind", "n", "s3memory S3 mean / max", "budget", "", "s3memory KMS mean", "s3memory ms",
                   "naive S3 mean / max", "naive KMS mean", "naive ms"], rows)  # fmt: skip
    out += ["", "Latency per command kind, p50 / p95 in ms (warm; the first command left out), and p50 in "
            f"round trips of {S3_DELAY * 1000:.0f} ms. The competent baseline (`bench/competent.py`) has no "
            "conditional writes, no intent records, no guard or quotas: what s3memory pays for those shows here.",
            ""]  # fmt: skip
    rows = []
    for kind in trace.KINDS:
        cells = [s[name]["by_kind"].get(kind) for name in ("s3memory", "competent", "naive")]
        if any(c is None for c in cells):
            continue
        rows.append([kind, *(f"{c['ms_p50']:.0f} / {c['ms_p95']:.0f} ({c['ms_p50'] / 1000 / S3_DELAY:.1f})"
                             for c in cells if c is not None)])  # fmt: skip
    out += _table(["kind", "s3memory", "competent", "naive"], rows)
    first = s["s3memory"]["rows"][0]
    out += ["", f"The first command (`view /memories`, cold tool): {first['s3']} S3 calls "
            f"({', '.join(f'{k} {v}' for k, v in sorted(first['ops'].items()))}). "
            "*create_new_nested* is a create whose parent is a new directory two or more levels deep: "
            "it checks each ancestor for a file (one HEAD each, in parallel), so it has no budget."]  # fmt: skip
    if s["budget_failures"]:
        out += ["", "Over budget: " + "; ".join(f"{f['kind']} {f['command']}: {f['s3']} ({f['ops']})"
                                                 for f in s["budget_failures"])]  # fmt: skip

    b = r["bulk"]
    out += ["", f"## 2. Directory rename and recursive delete ({b['files']:,} files)", "",
            f"`/memories/archive` holds {b['files']:,} files (~1 KiB each) in 10 subdirectories, written by an "
            "earlier process; a fresh tool renames it to `/memories/archive-2024`, then deletes that recursively. "
            "Every result was checked by listing the bucket afterwards.", ""]  # fmt: skip
    rows = []
    for op in ("rename", "delete"):
        mine = b[f"s3memory_{op}"]
        for label in ("s3memory", "competent", "naive", "naive_copy"):
            x = b.get(f"{label}_{op}")
            if x is None:
                continue
            ratio = f"{x['seconds'] / mine['seconds']:.1f}x"
            rows.append([op, label.replace("_", "-"), f"{x['seconds']:.2f}", f"{x['cpu_seconds']:.2f}", x["s3"],
                         x["kms"], ratio, "yes" if x["verified"] else "NO"])  # fmt: skip
    out += _table(["operation", "backend", "wall s", "CPU s", "S3 calls", "KMS calls", "wall vs s3memory",
                   "verified"], rows)  # fmt: skip
    ops = b["s3memory_rename"]["ops"]
    out += ["", "s3memory rename, calls by operation: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items()))
            + ". Its wall time is bound by CPU here (moto answers in this process), not by round trips: "
            f"{b['s3memory_rename']['s3']:,} requests at 20 ms over 16 workers would take "
            f"{b['s3memory_rename']['s3'] * S3_DELAY / 16:.1f} s."]  # fmt: skip

    lst = r["listing"]
    out += ["", f"## 3. `view /memories` of an agent with {lst['objects']:,} objects", "",
            f"Layout (`scenarios.listing_layout`): 2 root files, {lst['top_dirs_shown']} top-level directories of "
            "4 files and 24 subdirectories each, plus a hidden `.archive/` and a `node_modules/` (1 % of the objects "
            f"each) that are not descended into. Seeding {lst['seeded']:,} objects (both agents, plain bodies of "
            f"stored size; a view only lists) through the {lst['seed_method']} took {lst['seed_seconds']:.1f} s. "
            f"The view shows {lst['lines']:,} lines with {lst['dirs_shown']} directories (the root included); "
            f"s3memory and naive output identical: {'yes' if lst['identical_outputs'] else 'NO'}. The tool's "
            "once-per-instance recovery LIST was made before measuring.", ""]  # fmt: skip
    rows = []
    for name in ("s3memory", "naive"):
        x = lst[name]
        rows.append([name, x["lists"], x["heads"], f"{x['seconds']:.2f}", f"{x['cpu_seconds']:.2f}",
                     f"{x['seconds'] / lst['s3memory']['seconds']:.1f}x"])  # fmt: skip
    out += _table(["backend", "ListObjectsV2", "HeadObject", "wall s", "CPU s", "wall vs s3memory"], rows)
    out += ["", f"Target: ≤ 1 + {lst['dirs_shown']} list requests; a flat listing needs ⌈{lst['objects']:,} / "
            f"1,000⌉ = {lst['pages_if_flat']} pages. moto's `ListObjectsV2` costs CPU in proportion to the "
            "bucket's size, which is most of both wall times here; on S3 each request is one round trip."]  # fmt: skip
    mine, naive = lst["s3memory"], lst["naive"]
    rounds = 2 + math.ceil(max(0, mine["lists"] - 2) / 16) if mine["lists"] > 1 else mine["lists"]
    serial = naive["lists"] + naive["heads"]
    out += ["", f"Round trips on the critical path (counted from the requests above, not measured): s3memory "
            f"{rounds} (first page, root level, then {mine['lists'] - 2} directory levels over 16 workers), "
            f"naive {serial} (every page and HEAD in turn): at 20 ms, {rounds * S3_DELAY:.2f} s against "
            f"{serial * S3_DELAY:.1f} s."]  # fmt: skip

    c = r["cold_start"]
    out += ["", "## 4. Cold start", "",
            f"Fresh interpreter per run (`python -c ...`), best of {c['runs']}; *over interpreter* subtracts "
            "`python -c pass`. *importtime* is the sum of top-level cumulative times of `python -X importtime`. "
            "The construction snippets refuse every socket connection: constructing a tool makes no network call.",
            ""]  # fmt: skip
    rows = []
    for label, x in c["rows"].items():
        loaded = ", ".join(k for k in ("anthropic", "boto3", "botocore") if x["loaded"][k]) or "none"
        rows.append([f"`{label}`", f"{x['wall_ms']:.0f}", _ms(x["over_interpreter_ms"]),
                     f"{x['importtime_ms']:.0f}", "-" if x["construct_ms"] is None else f"{x['construct_ms']:.1f}",
                     loaded])  # fmt: skip
    out += _table(["snippet", "wall ms", "over interpreter ms", "importtime ms", "construction alone ms",
                   "heavy packages loaded"], rows)  # fmt: skip
    out += ["", f"Storage code: {_ms(c['storage_ms'])} ms and CLI: {_ms(c['cli_ms'])} ms, against `import boto3` "
            f"{c['boto3_ms']:.0f} ms + 50 ms. A tool class subclasses the SDK's `BetaAbstractMemoryTool`, so "
            "constructing one loads `anthropic`; that import is most of the construction time."]  # fmt: skip

    cr = r["crypto"]
    out += ["", "## 5. Crypto per command", "",
            f"`Vault.seal` / `Vault.open` of a 4 KiB file, branch key cached (HKDF-SHA256 per object + AES-256-GCM + "
            f"header), `timeit` best of {cr['repeat']} x {cr['number']:,}:", ""]  # fmt: skip
    out += _table(["operation", "µs / op", "target"], [["seal 4 KiB", f"{cr['seal_us']:.1f}", "<= 50"],
                                                       ["open 4 KiB", f"{cr['open_us']:.1f}", "<= 50"]])  # fmt: skip

    out += ["", "## Per-command request budgets (`bench/requests.py`)", ""]
    out += _table(["command", "S3", "KMS", "S3 budget", ""],
                  [[x["name"], x["s3"], x["kms"], "-" if x["budget"] is None else f"≤ {x['budget']}",
                    ("ok" if x["ok"] else "OVER") + (f" ({x['keystore']} of the S3 requests create the agent's "
                                                     "keystore, once)" if x.get("keystore") else "")]
                   for x in r["budgets"]])  # fmt: skip
    out += ["", f"Sizes: {sz}."]
    return "\n".join(out) + "\n"


DOC_START, DOC_END = "<!-- bench:start -->", "<!-- bench:end -->"
# What follows this line in bench/RESULTS.md is measured by hand (e.g. `bench/contention.py` on
# MiniStack) and carried over when `make bench` rewrites the rest.
KEPT = "<!-- kept by make bench: measured by hand, see each section's commands -->"


def with_kept(new_text: str, old_text: str) -> str:
    """`new_text` followed by the hand-measured part of `old_text` (from the `KEPT` line on), if any."""
    if KEPT not in old_text:
        return new_text
    return new_text.rstrip("\n") + "\n\n" + KEPT + old_text.split(KEPT, 1)[1]


def update_docs(results_text: str, doc: Path) -> None:
    """Copy the session's backend and latency tables of a run into `doc`, between the bench markers."""
    sections = results_text.split("\n\n")
    wanted = [
        i for i, part in enumerate(sections) if part.startswith(("| backend | wall s", "Latency per command kind"))
    ]
    keep: list[str] = []
    for i in wanted:
        keep.append(sections[i])
        if sections[i].startswith("Latency") and i + 1 < len(sections):
            keep.append(sections[i + 1])  # its table
    block = "\n\n".join(
        [DOC_START, "*Generated by `make bench` from its last run (bench/RESULTS.md).*", *keep, DOC_END]
    )
    text = doc.read_text(encoding="utf-8")
    if DOC_START in text and DOC_END in text:
        head, rest = text.split(DOC_START, 1)
        text = head + block + rest.split(DOC_END, 1)[1]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    doc.write_text(text, encoding="utf-8")
