"""`rewrap --objects`: move the data key of every format-1 object under another KMS key, without
touching the ciphertext. (Format-2 objects carry no key: `branch_keys.rewrap_keys` moves the
agent's branch keys instead, and this skips them after one HEAD each.)

Per object: HeadObject for the envelope header, KMS `ReEncrypt` of the wrapped data key (the
plaintext key never leaves KMS; one call per distinct wrapped key and agent, since one data
key serves many objects), then CopyObject of the object onto itself with the new header as its
metadata, conditional on the ETag just read, so a concurrent write is never clobbered: on 412
the object is read again and retried. An object whose key is already under the destination
key (ReEncrypt reports the same source and destination) is left alone, so an interrupted
migration is resumed by running it again.

In a versioned bucket the earlier versions keep their old headers; `purge` or a lifecycle rule
removes them. The operator needs s3:GetObject and s3:PutObject on the prefix and
kms:ReEncryptFrom / kms:ReEncryptTo on the two keys.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Literal

from s3memory.core.envelope import Header
from s3memory.errors import (
    CommandError,
    IntegrityError,
    KeyMisconfigured,
    KeyUnavailable,
    PreconditionFailed,
    StorageError,
)
from s3memory.memory.explain import for_report
from s3memory.storage.admin_store import AdminStore
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.kms import KmsKeys

from .common import Problem, Tracker, is_folder_marker

ATTEMPTS = 5
Outcome = Literal["rewrapped", "already", "gone", "format2"]


@dataclass
class RewrapReport:
    rewrapped: int = 0
    already: int = 0  # already under the destination key
    format2: int = 0  # objects sealed under a branch key (nothing to rewrap in them)
    kms_calls: int = 0
    problems: list[Problem] = field(default_factory=list)


class _Rewrapper:
    """ReEncrypt once per (agent, wrapped key), shared by the worker threads."""

    def __init__(self, keys: KmsKeys, destination: str, source: str | None) -> None:
        self.keys = keys
        self.destination = destination
        self.source = source
        self.calls = 0
        self._lock = threading.Lock()
        self._results: dict[tuple[str, bytes], Future[tuple[bytes, str, str]]] = {}

    def __call__(self, agent_id: str, wrapped: bytes) -> tuple[bytes, str, str]:
        with self._lock:
            future = self._results.get((agent_id, wrapped))
            mine = future is None
            if future is None:
                future = self._results[(agent_id, wrapped)] = Future()
                self.calls += 1
        if mine:
            try:
                future.set_result(self.keys.rewrap_with_ids(agent_id, wrapped, self.destination, self.source))
            except (KeyUnavailable, IntegrityError) as err:
                future.set_exception(err)
        return future.result()


def _rewrap_one(store: AdminStore, space: AgentKeyspace, key: str, rewrapper: _Rewrapper) -> Outcome:
    for _ in range(ATTEMPTS):
        head = store.head_metadata(key)
        if head is None:
            return "gone"
        header = Header.from_metadata(head.metadata)
        if header.version != 1:
            return "format2"
        if header.provider != KmsKeys.provider_id:
            raise CommandError(f"its data key is not wrapped by KMS ({header.provider}); export and import it instead")
        blob, source, destination = rewrapper(space.agent_id, header.wrapped_key)
        if source and source == destination:
            return "already"
        others = {k: v for k, v in head.metadata.items() if not k.lower().startswith("s3m-")}
        metadata = {**others, **dataclasses.replace(header, wrapped_key=blob).to_metadata()}
        try:
            store.replace_metadata(key, metadata, if_match=head.etag)
            return "rewrapped"
        except PreconditionFailed:
            continue  # written meanwhile (maybe with a new data key): read it again
    raise CommandError("it kept changing while it was being rewrapped; run rewrap again")


def rewrap(
    store: AdminStore,
    spaces: Sequence[AgentKeyspace],
    keys: KmsKeys,
    destination: str,
    pool: Pool,
    tracker: Tracker,
    *,
    source: str | None = None,
) -> RewrapReport:
    """Rewrap every object (bookkeeping records included) of each agent under `destination`.

    `source`: the KMS key the data keys are under now, sent as ReEncrypt's `SourceKeyId`.
    The first object is done alone: if KMS refuses the keys themselves (`KeyMisconfigured`: the
    destination does not exist, is disabled, or may not be used), that one configuration error
    is raised before any other object is touched.
    """
    items = [
        (s, obj.key)
        for s in spaces
        for obj in store.list_all(s.root)
        if not is_folder_marker(obj) and not s.is_keystore(obj.key)
    ]
    tracker.start(len(items))
    rewrapper = _Rewrapper(keys, destination, source)
    report = RewrapReport()

    def one(item: tuple[AgentKeyspace, str]) -> Outcome:
        return _rewrap_one(store, item[0], item[1], rewrapper)

    def record(item: tuple[AgentKeyspace, str], outcome: Callable[[], Outcome]) -> None:
        space, key = item
        try:
            result = outcome()
        except (StorageError, IntegrityError, CommandError) as err:
            report.problems.append(Problem(space.agent_id, space.shown(key), for_report(err)))
        except KeyUnavailable as err:
            if isinstance(err, KeyMisconfigured) and item is items[0]:
                raise
            report.problems.append(Problem(space.agent_id, space.shown(key), for_report(err)))
        else:
            report.rewrapped += result == "rewrapped"
            report.already += result == "already"
            report.format2 += result == "format2"
        tracker.advance()

    if items:
        record(items[0], lambda: one(items[0]))
    for item, future in pool.completed(one, items[1:]):
        record(item, future.result)
    report.kms_calls = rewrapper.calls
    report.problems.sort()
    return report
