"""Where a run keeps its results: `{prefix}{run_id}/manifest.jsonl` (the items), `done/{kind}/{id}`
(each finished agent's result: a redrive skips it) and `failed/{kind}/{id}` (the last failure of
an agent not done yet). A result is a small JSON object: id, kind, outcome, counts and a reason
code, never a path, a content or a secret.

The markers' keys end with the id (no suffix), so they sort as the ids do: the worker reads which
agents of a batch are done with one LIST from the batch's first id to its last (items are sorted,
and a batch is a run of consecutive items)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

OUTCOMES = ("ok", "dry_run", "failed", "deadline", "skipped")
FINISHED = ("ok", "dry_run")  # what is written under done/ (and skipped by a rerun)


@dataclass(frozen=True, order=True)
class Item:
    id: str
    kind: str  # agent or store

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "kind": self.kind}

    @classmethod
    def parse(cls, raw: Any) -> Item:
        if not isinstance(raw, dict) or raw.get("kind") not in ("agent", "store") or not isinstance(raw.get("id"), str):
            raise ValueError('an item is {"id": ID, "kind": "agent" | "store"}')
        from s3memory.core.paths import validate_agent_id

        return cls(validate_agent_id(raw["id"]), raw["kind"])


@dataclass(frozen=True)
class Location:
    bucket: str
    prefix: str  # "" or ending with "/"

    @classmethod
    def parse(cls, raw: Any) -> Location:
        if not isinstance(raw, dict) or not isinstance(raw.get("bucket"), str) or not raw["bucket"]:
            raise ValueError('results must be {"bucket": NAME, "prefix": PREFIX}')
        prefix = str(raw.get("prefix", ""))
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        return cls(raw["bucket"], prefix)

    @classmethod
    def from_url(cls, url: str) -> Location:
        """`s3://bucket/prefix/`."""
        if not url.startswith("s3://") or not url[5:].split("/", 1)[0]:
            raise ValueError(f"not an S3 location (s3://BUCKET/PREFIX/): {url!r}")
        bucket, _, prefix = url[5:].partition("/")
        return cls.parse({"bucket": bucket, "prefix": prefix})

    def run(self, run_id: str) -> str:
        return f"{self.prefix}{run_id}/"

    def manifest(self, run_id: str) -> str:
        return f"{self.run(run_id)}manifest.jsonl"

    def item_array(self, run_id: str) -> str:
        """The same items as one JSON array: what the state machine's ItemReader reads (`InputType: JSON`)."""
        return f"{self.run(run_id)}manifest.json"

    def marker(self, run_id: str, state: str, item: Item) -> str:
        return f"{self.run(run_id)}{state}/{item.kind}/{item.id}"


def result(item: Item, outcome: str, counts: dict[str, int] | None = None, reason: str = "") -> dict[str, Any]:
    assert outcome in OUTCOMES, outcome
    return {"id": item.id, "kind": item.kind, "outcome": outcome, "counts": dict(counts or {}), "reason": reason}


def write(s3: Any, where: Location, run_id: str, state: str, record: dict[str, Any]) -> None:
    item = Item(record["id"], record["kind"])
    body = json.dumps(record, sort_keys=True).encode()
    s3.put_object(Bucket=where.bucket, Key=where.marker(run_id, state, item), Body=body,
                  ContentType="application/json")  # fmt: skip


def _keys(s3: Any, bucket: str, prefix: str, start_after: str = "", last: str | None = None) -> Iterator[str]:
    kwargs: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix}
    if start_after:
        kwargs["StartAfter"] = start_after
    while True:
        page = s3.list_objects_v2(**kwargs)
        for obj in page.get("Contents", []):
            if last is not None and obj["Key"] > last:
                return
            yield obj["Key"]
        if not page.get("IsTruncated"):
            return
        kwargs["ContinuationToken"] = page["NextContinuationToken"]


def _before(text: str) -> str:
    """A string just below `text`, above every key that sorts before it (ids are printable ASCII)."""
    return text[:-1] + chr(ord(text[-1]) - 1) + "\x7f" if text else ""


def _shared_start(a: str, b: str) -> str:
    """The characters `a` and `b` begin with alike (S3 keys: strings, not paths)."""
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return a[:n]


def done_ids(s3: Any, where: Location, run_id: str, items: Sequence[Item]) -> set[Item]:
    """Those of `items` already done in this run: one LIST per kind and 1,000 markers of the range.
    The LIST's prefix is what the range's first and last keys share (every key between two strings
    starts with their common prefix), so a page holds the range's markers, not every later one."""
    found: set[Item] = set()
    for kind in sorted({i.kind for i in items}):
        ids = sorted(i.id for i in items if i.kind == kind)
        folder = f"{where.run(run_id)}done/{kind}/"
        first, last = folder + ids[0], folder + ids[-1]
        wanted = set(ids)
        for key in _keys(s3, where.bucket, _shared_start(first, last), _before(first), last):
            if key[len(folder) :] in wanted:
                found.add(Item(key[len(folder) :], kind))
    return found


def read(s3: Any, where: Location, key: str) -> dict[str, Any]:
    body = s3.get_object(Bucket=where.bucket, Key=key)["Body"].read()
    record: dict[str, Any] = json.loads(body)
    return record


def markers(s3: Any, where: Location, run_id: str, state: str) -> Iterator[str]:
    """The keys of every `state` (done, failed) marker of the run."""
    yield from _keys(s3, where.bucket, f"{where.run(run_id)}{state}/")
