"""A fleet run as the engines share it: its plan (job, options, items, where its results go), the
`run.json` that records it next to the manifest, and its report read back from the markers:
which agents finished, which failed and why, and which were not reached."""

from __future__ import annotations

import json
import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from . import manifest
from .results import Item, Location, markers, read

RUN_FILE = "run.json"


def new_run_id(now: datetime | None = None) -> str:
    """`20261127T181100Z-3f9a1c`: sortable by start time, unique."""
    return f"{(now or datetime.now(timezone.utc)):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


@dataclass
class Plan:
    job: str
    options: dict[str, Any]
    run_id: str
    where: Location
    items: list[Item] = field(default_factory=list)

    def batch_input(self) -> dict[str, Any]:
        """What every batch of the run carries (the Distributed Map's BatchInput)."""
        results = {"bucket": self.where.bucket, "prefix": self.where.prefix}
        return {"job": self.job, "options": self.options, "run_id": self.run_id, "results": results}

    def save(self, s3: Any, engine: str) -> str:
        """Write the manifest and `run.json`; returns the key of the manifest the engine reads."""
        key = manifest.write(s3, self.where, self.run_id, self.items, array=engine == "stepfunctions")
        record = {**self.batch_input(), "engine": engine, "items": len(self.items)}
        s3.put_object(Bucket=self.where.bucket, Key=self.where.run(self.run_id) + RUN_FILE,
                      Body=json.dumps(record, sort_keys=True).encode(), ContentType="application/json")  # fmt: skip
        return key

    @classmethod
    def load(cls, s3: Any, where: Location, run_id: str) -> Plan:
        record = json.loads(s3.get_object(Bucket=where.bucket, Key=where.run(run_id) + RUN_FILE)["Body"].read())
        return cls(record["job"], record["options"], run_id, where, manifest.read(s3, where, run_id))


@dataclass
class Report:
    items: int
    finished: dict[Item, dict[str, Any]]  # the result of each (empty when only listed: see `report`)
    failed: dict[Item, dict[str, Any]]  # not finished, with its last failure
    missing: list[Item]  # neither finished nor failed: not reached (yet)

    @property
    def complete(self) -> bool:
        return not self.failed and not self.missing

    def totals(self) -> dict[str, int]:
        """The finished agents' counts, summed."""
        total: Counter[str] = Counter()
        for record in self.finished.values():
            total.update(record.get("counts", {}) if record.get("outcome") != "skipped" else {})
        return dict(sorted(total.items()))

    def reasons(self) -> dict[str, int]:
        return dict(sorted(Counter(r.get("reason") or r["outcome"] for r in self.failed.values()).items()))

    def to_json(self) -> dict[str, Any]:
        failed = [self.failed[i] for i in sorted(self.failed)]
        return {"items": self.items, "finished": len(self.finished), "failed": failed,
                "not_reached": [i.to_json() for i in self.missing], "totals": self.totals(),
                "reasons": self.reasons(), "complete": self.complete}  # fmt: skip


def _item(where: Location, run_id: str, state: str, key: str) -> Item:
    kind, _, ident = key[len(where.run(run_id)) + len(state) + 1 :].partition("/")
    return Item(ident, kind)


def report(
    s3: Any, where: Location, run_id: str, items: Sequence[Item] | None = None, results: Sequence[dict[str, Any]] = ()
) -> Report:
    """What the markers say of the run's items (`items`: the manifest, read if not given). Finished
    agents are known from one LIST per 1,000 markers (their records are not read: `results`, the
    records an engine got back, give the totals); each failed agent's record is read."""
    items = manifest.read(s3, where, run_id) if items is None else list(items)
    wanted = set(items)
    returned = {Item(r["id"], r["kind"]): r for r in results}
    finished: dict[Item, dict[str, Any]] = {}
    for key in markers(s3, where, run_id, "done"):
        item = _item(where, run_id, "done", key)
        if item in wanted:
            finished[item] = returned.get(item, {})
    failed = {}
    for key in markers(s3, where, run_id, "failed"):
        item = _item(where, run_id, "failed", key)
        if item in wanted and item not in finished:
            failed[item] = read(s3, where, key)
    missing = [i for i in items if i not in finished and i not in failed]
    return Report(len(items), finished, failed, missing)
