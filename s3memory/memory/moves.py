"""Single-file rename: re-encrypt the file for its new path, then delete the old object.

The ciphertext is bound to its path, so a rename is a new sealed object plus a delete, not an
S3 copy. There is no intent record (it would cost two more requests than the five a rename
may take): a failure between the PUT and the DELETE is undone when it can be (the new copy
is deleted in the version we wrote), and otherwise reported with both copies kept, so no
content is ever lost.

The rule (docs/contract.md, SECURITY.md): a rename either moves the source's current content,
with every edit acknowledged before it, or changes nothing (`SourceChanged`: the caller reads
the source again) or answers that it did not confirm the change; never success with the source
left behind, never both copies gone. So the source is deleted only in the version that was
copied (If-Match); refused, the copy is deleted again in the version we wrote.

Both writes carry the ambiguity handling of `outcomes`: the new copy carries a write id, so a
PUT whose answer was lost is recognised by one HEAD; a DELETE of the source whose answer was
lost (botocore's retry then meets 404, or 412 if the path was written again since) is settled
by one HEAD of the source: gone → the rename is done; still the copied version → nothing was
deleted; another object there → the copy is kept and the answer says the change may have been
applied (our delete may have landed before that object was written).
"""

from __future__ import annotations

import logging

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
from .outcomes import ReadBack, Verdict

log = logging.getLogger("s3memory")

_REFUSED = (PreconditionFailed, ConditionalConflict, NotFound)


class SourceChanged(Exception):
    """The source was changed or deleted by another writer after it was read; the copy was
    deleted again, so nothing was changed: read the source again and start over."""


def move_file(vault: Vault, old: MemoryPath, new: MemoryPath, text: str, etag: str) -> str:
    """Move the file at `old` (read as `text` with `etag`) to `new`, which must not exist; the new
    copy's ETag. `SourceChanged` if `old` is no longer that version (nothing was changed)."""
    new_etag = _copy(vault, old, new, text)
    try:
        vault.store.delete(vault.key(old), if_match=etag, missing_ok=False)
    except _REFUSED as err:
        if outcomes.ambiguous(err):
            _settle_failed_move(vault, old, new, etag, new_etag, err)
        else:  # refused at its first attempt: the source is another version, or gone
            _undo_changed(vault, old, new, new_etag, err)
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


def _undo_changed(vault: Vault, old: MemoryPath, new: MemoryPath, new_etag: str, err: StorageError) -> None:
    """The source changed since it was read: delete the copy in our version, then `SourceChanged`;
    a copy that cannot be deleted is kept, and the answer says the change may have been applied."""
    undo = _undo_copy(vault, new, new_etag)
    if undo.verdict is Verdict.LANDED:
        raise SourceChanged()
    log.warning("s3memory: the source of a rename changed and its copy could not be deleted (%s)", err.code)
    raise outcomes.unknown(err, [old, new])


def _settle_failed_move(
    vault: Vault, old: MemoryPath, new: MemoryPath, old_etag: str, new_etag: str, err: StorageError
) -> None:
    """The old copy's delete failed with `err`, maybe after it landed: return if it did (gone);
    undo the new copy if it certainly did not, so that nothing changed; otherwise keep both."""
    source = outcomes.delete_outcome(vault, vault.key(old), old_etag)
    if source.verdict is Verdict.LANDED:
        return
    if source.verdict is Verdict.NOT_LANDED:
        undo = _undo_copy(vault, new, new_etag)
        if undo.verdict is Verdict.LANDED:
            if isinstance(err, _REFUSED):
                raise SourceChanged()  # a conflicting write was in flight: read it again
            raise err  # both copies as before the rename: nothing was changed
        if undo.verdict is Verdict.UNKNOWN:
            raise outcomes.unknown(err, [old, new]) from None
    elif outcomes.ambiguous(err):
        # Another object at the source (our delete may have landed before it was written), or the
        # read-back failed: the copy may be the only one of the moved text; it is kept.
        failed = err if source.verdict is Verdict.OTHER else StorageUnavailable(source.code or err.code, "HeadObject")
        raise outcomes.unknown(failed, [old, new]) from None
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
