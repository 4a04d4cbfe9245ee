"""Single-file rename: re-encrypt the file for its new path, then delete the old object.

The ciphertext is bound to its path, so a rename is a new sealed object plus a delete, not an
S3 copy. There is no intent record (it would cost two more requests than the five a rename
may take): a failure between the PUT and the DELETE is undone when it can be (the new copy
is deleted in the version we wrote), and otherwise reported with both copies kept, so no
content is ever lost.

The new copy carries a write id (see `outcomes`): a PUT whose answer was lost, then refused
by its own object (412 after a retry) or failed for good, is recognised by one HEAD and the
rename is finished, never answered "already exists" while both copies are stored.
"""

from __future__ import annotations

import logging
from concurrent.futures import Executor

from s3memory.core import messages as fmt
from s3memory.core import operational
from s3memory.core.paths import MemoryPath
from s3memory.errors import (
    CommandError,
    ConditionalConflict,
    NotFound,
    PreconditionFailed,
    StorageError,
    StorageUnavailable,
)
from s3memory.storage.attribution import attributed, new_write_id
from s3memory.storage.vault import Vault

from . import outcomes
from .creates import put_placed
from .outcomes import ReadBack, Verdict
from .placement import Placement

log = logging.getLogger("s3memory")


def move_file(vault: Vault, old: MemoryPath, new: MemoryPath, text: str, etag: str) -> str:
    """Move the file at `old` (read as `text` with `etag`) to `new`, which must not exist; the new copy's ETag."""
    new_etag = _copy(vault, old, new, text)
    try:
        _delete_moved(vault, old, etag)
    except NotFound:
        # Another writer deleted or renamed the source since it was read: this rename did not
        # happen (of two racing renames, one moves the file), so the copy goes again.
        undo = _undo_copy(vault, new, new_etag)
        if undo.verdict is not Verdict.LANDED:
            raise outcomes.unknown(StorageUnavailable("NoSuchKey", "DeleteObject"), [old, new]) from None
        raise CommandError(fmt.does_not_exist(old.display)) from None
    except StorageError as err:
        _settle_failed_move(vault, old, new, etag, new_etag, err)
    return new_etag


def move_held(
    vault: Vault, placement: Placement, executor: Executor, old: MemoryPath, new: MemoryPath, text: str, etag: str
) -> str | None:
    """Move a file this tool holds (`text` in the version `etag`, see `recent`) in two round trips:
    the copy's PUT goes with the destination's checks (as a create's, see `creates`), then the
    source is deleted in the held version. Returns the copy's ETag; None when a check refused, the
    copy was refused, or the source is no longer that version: nothing was changed (a copy stored
    is deleted again), and the caller renames as if nothing were held, which words any refusal.
    A check that S3 fails raises, after the copy is deleted again."""
    try:  # a check that S3 fails raises (nothing was changed: the copy is deleted again)
        copying = put_placed(vault, placement, executor, new, fmt.destination_exists(new.display), _copy, vault, old,
                             new, text)  # fmt: skip
    except CommandError:
        return None  # refused: the caller's path words it
    try:
        new_etag = copying.result()
    except (CommandError, ConditionalConflict):
        return None  # a file there, or a create of it under way: the caller's path answers
    try:
        _delete_source(vault, old, etag)
    except (PreconditionFailed, ConditionalConflict, NotFound):
        undo = _undo_copy(vault, new, new_etag)  # changed or gone since: the held text is not the source
        if undo.verdict is not Verdict.LANDED:
            raise outcomes.unknown(StorageUnavailable("PreconditionFailed", "DeleteObject"), [old, new]) from None
        return None
    except StorageError as err:
        _settle_failed_move(vault, old, new, etag, new_etag, err)
    return new_etag


def _copy(vault: Vault, old: MemoryPath, new: MemoryPath, text: str) -> str:
    """PUT the new copy (If-None-Match); its ETag, also when only its answer was lost."""
    write_id = new_write_id()
    try:
        with attributed("rename", source=old.display):
            return vault.write(new, text, if_none_match=True, write_id=write_id)
    except (PreconditionFailed, ConditionalConflict) as err:
        if outcomes.ambiguous(err):
            seen = outcomes.put_outcome(vault, new, write_id, None)
            if seen.verdict is Verdict.LANDED:
                return seen.etag  # our own copy met by botocore's retry
            if seen.verdict is Verdict.UNKNOWN:
                raise outcomes.unknown(StorageUnavailable(seen.code, "HeadObject"), [old, new]) from None
        if isinstance(err, ConditionalConflict):
            raise
        raise CommandError(fmt.destination_exists(new.display)) from None
    except StorageUnavailable as err:
        return outcomes.settle_put(vault, new, write_id, None, err, [old, new])


def _delete_source(vault: Vault, old: MemoryPath, etag: str) -> None:
    """DELETE the source If-Match `etag`; `NotFound` when it was already gone, unless botocore
    retried the request: then our own first attempt may have deleted it (its answer lost), and the
    delete counts as done (the copy is kept: no content can be lost)."""
    try:
        vault.store.delete(vault.key(old), if_match=etag, missing_ok=False)
    except NotFound as err:
        if err.retries == 0:
            raise


def _delete_moved(vault: Vault, old: MemoryPath, etag: str) -> None:
    """Delete the moved source only in the version that was copied; a newer edit is kept."""
    try:
        _delete_source(vault, old, etag)
    except PreconditionFailed:
        log.warning("s3memory: source changed during rename; both copies kept")


def _settle_failed_move(
    vault: Vault, old: MemoryPath, new: MemoryPath, old_etag: str, new_etag: str, err: StorageError
) -> None:
    """The old copy could not be deleted: undo the new copy so that nothing changed; return if the
    delete landed after all (only its answer was lost); otherwise say that both copies exist."""
    source = outcomes.delete_outcome(vault, vault.key(old), old_etag)
    if source.verdict is Verdict.LANDED:
        return
    if source.verdict is Verdict.NOT_LANDED:
        undo = _undo_copy(vault, new, new_etag)
        if undo.verdict is Verdict.LANDED:
            raise err  # both copies as before the rename: nothing was changed
        if undo.verdict is Verdict.UNKNOWN:
            raise outcomes.unknown(err, [old, new]) from None
    elif source.verdict is Verdict.UNKNOWN and outcomes.ambiguous(err):
        raise outcomes.unknown(err, [old, new]) from None  # the delete may have landed
    log.warning("s3memory: rename could be neither finished nor undone (%s); both copies kept", err.code)
    raise CommandError(operational.rename_left_copy(err.code, old.display, new.display))


def _undo_copy(vault: Vault, new: MemoryPath, new_etag: str) -> ReadBack:
    """Delete the new copy in the version we wrote: LANDED if it is gone, NOT_LANDED if it stays."""
    try:
        vault.store.delete(vault.key(new), if_match=new_etag)
    except PreconditionFailed:
        return ReadBack(Verdict.NOT_LANDED)  # changed since by another writer: it stays
    except StorageError as err:
        if not outcomes.ambiguous(err):
            return ReadBack(Verdict.NOT_LANDED)
        seen = outcomes.delete_outcome(vault, vault.key(new), new_etag)
        return ReadBack(Verdict.UNKNOWN) if seen.verdict is Verdict.OTHER else seen
    return ReadBack(Verdict.LANDED)
