"""The items of a fleet run: agent ids (and with `stores`, store ids) listed with one LIST per 1,000
(ListObjectsV2, Delimiter "/"), or read from a file of ids or an S3 Inventory report, sorted and
written as a JSONL manifest (`{"id": .., "kind": ..}` per line) under the run's results prefix."""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections.abc import Iterable, Sequence
from typing import Any

from s3memory.admin.agents import agent_ids, store_ids
from s3memory.core import paths
from s3memory.storage.store import ObjectStore

from .results import Item, Location


def listed(store: ObjectStore, prefix: str, *, agents: bool = True, stores: bool = False) -> list[Item]:
    """Every agent (and store) under `prefix`, sorted: one LIST per 1,000 of them."""
    items = [Item(a, "agent") for a in agent_ids(store, prefix)] if agents else []
    if stores:
        items += [Item(s, "store") for s in store_ids(store, prefix)]
    return sorted(items)


def from_lines(lines: Iterable[str], *, kind: str = "agent") -> list[Item]:
    """Ids one a line (`#` comments and blank lines skipped; `store:ID` names a store), sorted and
    without repeats. ValueError names the line of an id that is not valid."""
    found: set[Item] = set()
    for number, raw in enumerate(lines, 1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        which, ident = ("store", text[6:]) if text.startswith("store:") else (kind, text)
        try:
            found.add(Item(paths.validate_agent_id(ident), which))
        except ValueError as err:
            raise ValueError(f"line {number}: {err}") from None
    return sorted(found)


def from_inventory(s3: Any, manifest_url: str, prefix: str, *, stores: bool = False) -> list[Item]:
    """The agents (and stores) of an S3 Inventory report (CSV): its `manifest.json`, then each
    listed data file; an id is the first segment of a key below `prefix`."""
    where = Location.from_url(manifest_url.rsplit("/", 1)[0] + "/")
    key = manifest_url[5:].split("/", 1)[1]
    manifest = json.loads(s3.get_object(Bucket=where.bucket, Key=key)["Body"].read())
    if manifest.get("fileFormat", "CSV").upper() != "CSV":
        raise ValueError("only CSV inventory reports can be read; configure the inventory with format CSV")
    columns = [c.strip() for c in str(manifest.get("fileSchema", "Bucket, Key")).split(",")]
    at = columns.index("Key")
    found: set[Item] = set()
    folder = f"{prefix}{paths.STORES_FOLDER}/"
    for entry in manifest.get("files", []):
        body = s3.get_object(Bucket=where.bucket, Key=entry["key"])["Body"].read()
        text = gzip.decompress(body).decode() if entry["key"].endswith(".gz") else body.decode()
        for row in csv.reader(io.StringIO(text)):
            name = _unquote(row[at])
            if not name.startswith(prefix):
                continue
            kind, rest = ("store", name[len(folder) :]) if name.startswith(folder) else ("agent", name[len(prefix) :])
            if kind == "store" and not stores:
                continue
            ident, slash, _ = rest.partition("/")
            try:
                if slash:
                    found.add(Item(paths.validate_agent_id(ident), kind))
            except ValueError:
                continue
    return sorted(found)


def _unquote(key: str) -> str:
    from urllib.parse import unquote_plus

    return unquote_plus(key)  # inventory reports URL-encode keys


def to_jsonl(items: Sequence[Item]) -> bytes:
    return "".join(json.dumps(i.to_json(), sort_keys=True) + "\n" for i in items).encode()


def write(s3: Any, where: Location, run_id: str, items: Sequence[Item], *, array: bool = False) -> str:
    """The JSONL manifest (the run's record of its items); with `array`, also the JSON array the state
    machine's ItemReader reads, whose key is returned then."""
    key = where.manifest(run_id)
    s3.put_object(Bucket=where.bucket, Key=key, Body=to_jsonl(items), ContentType="application/x-ndjson")
    return write_array(s3, where, run_id, items) if array else key


def write_array(s3: Any, where: Location, run_id: str, items: Sequence[Item]) -> str:
    """The items as one JSON array of `{"id", "kind"}` (the state machine's ItemReader reads
    `InputType: JSON`) at `{prefix}{run_id}/manifest.json`; returns its key."""
    key = where.item_array(run_id)
    body = json.dumps([i.to_json() for i in items], sort_keys=True).encode()
    s3.put_object(Bucket=where.bucket, Key=key, Body=body, ContentType="application/json")
    return key


def read(s3: Any, where: Location, run_id: str) -> list[Item]:
    body = s3.get_object(Bucket=where.bucket, Key=where.manifest(run_id))["Body"].read().decode()
    return [Item.parse(json.loads(line)) for line in body.splitlines() if line.strip()]
