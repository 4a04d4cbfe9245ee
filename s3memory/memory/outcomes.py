"""What an ambiguous write did: read the object back and recognise the tool's own write.

S3 may apply a request whose answer never arrives (the connection dropped after sending).
botocore then retries it. The outcome is *ambiguous* when the retries run out as well (a
transient error), or when the retried conditional request is refused by the very object its
first attempt wrote (412 or 409 after a retry). Every PUT of a memory command records a fresh
write id in its sealed attribution record (`storage.attribution`, FORMAT.md); only after an
ambiguous outcome is the object read back (one HEAD: the header is in its metadata), so the
common path costs not one request more.

A read-back gives one of four verdicts:

- `LANDED`: the object holds our write id (a delete: the object is gone): the command succeeded;
- `NOT_LANDED`: nothing was changed, for certain: a create's key is still empty, an update's or
  a delete's object is still the version it was conditioned on;
- `OTHER`: another writer's object is there, so ours may have landed and been replaced since;
- `UNKNOWN`: the read-back failed too.

Only `NOT_LANDED` lets a command answer "nothing was changed"; `OTHER` and `UNKNOWN` raise
`OutcomeUnknown`, whose message says the change may have been applied and what to view.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from s3memory.core.paths import MemoryPath
from s3memory.errors import (
    ConditionalConflict,
    IntegrityError,
    KeyUnavailable,
    NotFound,
    OutcomeUnknown,
    PreconditionFailed,
    StorageError,
    StorageUnavailable,
)
from s3memory.storage.vault import Vault

from . import explain


class Verdict(enum.Enum):
    LANDED = "landed"
    NOT_LANDED = "not landed"
    OTHER = "other"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class ReadBack:
    verdict: Verdict
    etag: str = ""  # the object's ETag when it is there
    code: str = ""  # why the read-back failed (UNKNOWN)


def ambiguous(err: StorageError) -> bool:
    """Whether a write that raised `err` may have been applied by S3 all the same."""
    if isinstance(err, StorageUnavailable):
        return True
    # A refusal after a retry may be the answer to the retry of a request that landed: a
    # conditional write met its own object (412, 409), a delete found its object gone (404).
    return isinstance(err, (PreconditionFailed, ConditionalConflict, NotFound)) and err.retries > 0


def put_outcome(vault: Vault, path: MemoryPath, write_id: str, before: str | None) -> ReadBack:
    """Whether the PUT that carried `write_id` to `path` landed; `before`: the ETag it was
    conditioned on (If-Match), None for a create (If-None-Match)."""
    try:
        info = vault.store.head(vault.key(path))
        ours = info is not None and vault.write_id_of(path, info.metadata) == write_id
    except (StorageError, KeyUnavailable) as err:
        return ReadBack(Verdict.UNKNOWN, code=err.code)
    if info is None:
        return ReadBack(Verdict.NOT_LANDED if before is None else Verdict.OTHER)
    if ours:
        return ReadBack(Verdict.LANDED, info.etag)
    if before is not None and info.etag == before:
        return ReadBack(Verdict.NOT_LANDED, info.etag)
    return ReadBack(Verdict.OTHER, info.etag)


def delete_outcome(vault: Vault, key: str, before: str) -> ReadBack:
    """Whether the delete of `key` (seen as ETag `before` just before it) landed."""
    try:
        info = vault.store.head(key)
    except StorageError as err:
        return ReadBack(Verdict.UNKNOWN, code=err.code)
    if info is None:
        return ReadBack(Verdict.LANDED)
    return ReadBack(Verdict.NOT_LANDED if info.etag == before else Verdict.OTHER, info.etag)


def unknown(err: StorageError | IntegrityError | KeyUnavailable, paths: Sequence[MemoryPath]) -> OutcomeUnknown:
    """The error that says a change to `paths` may have been applied (code: the write's failure)."""
    code = getattr(err, "code", "") or type(err).__name__
    return OutcomeUnknown(code, getattr(err, "operation", ""), paths=tuple(p.display for p in paths))


def settle_put(
    vault: Vault, path: MemoryPath, write_id: str, before: str | None, err: StorageError, paths: Sequence[MemoryPath]
) -> str:
    """After a PUT to `path` failed ambiguously with `err`: its ETag if it landed; `err` if it
    certainly did not (nothing was changed); otherwise `OutcomeUnknown` naming `paths`."""
    seen = put_outcome(vault, path, write_id, before)
    if seen.verdict is Verdict.LANDED:
        return seen.etag
    if seen.verdict is Verdict.NOT_LANDED:
        raise err
    raise unknown(err, paths) from None


def settle_delete(vault: Vault, path: MemoryPath, before: str, err: StorageError) -> None:
    """After the delete of the file at `path` (seen as ETag `before`) failed with `err`: return
    if it landed; `err` if it certainly did not; otherwise `OutcomeUnknown`."""
    if not ambiguous(err):
        raise err
    seen = delete_outcome(vault, vault.key(path), before)
    if seen.verdict is Verdict.LANDED:
        return
    if seen.verdict is Verdict.NOT_LANDED:
        raise err
    raise unknown(err, [path]) from None


def settle_claim(
    vault: Vault, record: MemoryPath, write_id: str, err: StorageError, paths: Sequence[MemoryPath]
) -> str | None:
    """An intent record's create failed with `err`, maybe after S3 stored it: our record's ETag
    if it landed (the change goes on), None if another record is there (the caller meets it);
    "nothing was changed" if no record is there, `OutcomeUnknown` if the read-back fails too."""
    seen = put_outcome(vault, record, write_id, None)
    if seen.verdict is Verdict.LANDED:
        return seen.etag
    if seen.verdict is Verdict.OTHER:
        return None
    if seen.verdict is Verdict.NOT_LANDED:  # said as for a single write, not as a change half done
        raise explain.as_command_error(err, paths[0].display) from None
    raise unknown(err, paths) from None
