"""`doctor --conformance`: the conformance kit against the configured bucket, under a scratch prefix.

Each case gets a fresh agent below `{prefix}.s3memory-conformance/<random>/` (no agent id can
start with ".", so `agents` never lists them), written with the configured key source and name
mode, exactly as the tool writes. The scratch prefix must be empty when the run starts: afterwards
every object version and delete marker under it is removed, so it never runs where agents live.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from s3memory.conformance import CASES, Result, run
from s3memory.core.options import AgentOptions, MemoryOptions
from s3memory.memory.commands import Commands, answer
from s3memory.memory.open import open_memory
from s3memory.storage.errors_table import translate
from s3memory.storage.keys import Keys


class ScratchNotEmpty(Exception):
    """The scratch prefix holds objects: the kit would delete them afterwards, so it does not start."""

    def __init__(self, prefix: str, count: int) -> None:
        super().__init__(
            f"the scratch prefix {prefix} holds {count} object(s), e.g. agents' files; the conformance run removes "
            "everything under it afterwards, so it runs only under an empty prefix (--scratch-prefix)"
        )


class _Refused(Exception):
    """An error answer, as the SDK's ToolError carries it (`content`)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.content = text


class _Tool:
    """One agent's memory driven as the SDK's tool runner drives a tool: `call(input)`."""

    def __init__(self, commands: Commands, executor: ThreadPoolExecutor) -> None:
        self.commands, self.executor = commands, executor

    def call(self, input: object) -> str:
        text, is_error = answer(self.commands, input)
        if is_error:
            raise _Refused(text)
        return text

    def close(self) -> None:
        self.executor.shutdown(wait=True)


@dataclass
class KitRun:
    scratch: str
    results: list[Result] = field(default_factory=list)
    created: int = 0  # objects the run wrote (successful PUTs: files, branch keys, bookkeeping records)
    found: int = 0  # object versions and delete markers under the scratch prefix once the cases ran
    removed: int = 0
    left: int = 0  # what could not be removed (0 unless S3 refused a delete)


def _versions(s3: Any, bucket: str, prefix: str) -> list[dict[str, str]]:
    found: list[dict[str, str]] = []
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix):
        found += [{"Key": v["Key"], "VersionId": v["VersionId"]} for v in page.get("Versions", [])]
        found += [{"Key": m["Key"], "VersionId": m["VersionId"]} for m in page.get("DeleteMarkers", [])]
    return found


def _remove(s3: Any, bucket: str, entries: list[dict[str, str]]) -> int:
    removed = 0
    for start in range(0, len(entries), 1000):
        batch = entries[start : start + 1000]
        resp = s3.delete_objects(Bucket=bucket, Delete={"Objects": batch, "Quiet": True})
        removed += len(batch) - len(resp.get("Errors", []))
    return removed


def run_kit(
    s3: Any,
    bucket: str,
    keys: Keys,
    agent: AgentOptions,
    memory: MemoryOptions,
    *,
    scratch: str | None = None,
    claims: tuple[str, ...] = (),
) -> KitRun:
    """Every case of the kit, a fresh agent each, under `scratch` (default: a new random prefix);
    then every version under it is removed and counted. Raises `ScratchNotEmpty` before any write."""
    scratch = scratch if scratch is not None else f"{agent.prefix}.s3memory-conformance/{uuid.uuid4().hex}/"
    try:
        held = s3.list_objects_v2(Bucket=bucket, Prefix=scratch, MaxKeys=1000).get("KeyCount", 0)
        held = held or len(_versions(s3, bucket, scratch))
    except (ClientError, BotoCoreError) as err:
        raise translate(err, "ListObjectsV2") from None
    if held:
        raise ScratchNotEmpty(scratch, held)
    report = KitRun(scratch)
    options = dataclasses.replace(agent, prefix=scratch)
    plain = dataclasses.replace(memory, mounts={})  # a mount would be one more entry in every listing of /memories
    ids = itertools.count(1)

    def fresh() -> _Tool:
        commands, executor = open_memory(bucket, f"case-{next(ids)}", keys, options, plain, s3_client=s3)
        return _Tool(commands, executor)

    def written(http_response: Any, **_: Any) -> None:
        if 200 <= http_response.status_code < 300:
            report.created += 1

    hook = f"s3memory-conformance-{uuid.uuid4().hex}"
    s3.meta.events.register("after-call.s3.PutObject", written, unique_id=hook)
    try:
        report.results = run(fresh, CASES, claims)
    finally:
        s3.meta.events.unregister("after-call.s3.PutObject", unique_id=hook)
        with contextlib.suppress(ClientError, BotoCoreError):
            entries = _versions(s3, bucket, scratch)
            report.found = len(entries)
            report.removed = _remove(s3, bucket, entries)
            report.left = len(_versions(s3, bucket, scratch))
    return report
