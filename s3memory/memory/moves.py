"""Single-file rename: re-encrypt the file for its new path, then delete the old object.

The ciphertext is bound to its path, so a rename is a new sealed object plus a delete, not an
S3 copy. There is no intent record (it would cost two more requests than the five a rename
may take): a failure between the PUT and the DELETE is undone when it can be (the new copy
is deleted in the version we wrote), and otherwise reported with both copies kept, so no
content is ever lost.
"""

from __future__ import annotations

import logging

from s3memory.core import messages as fmt
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError, PreconditionFailed, StorageError
from s3memory.storage.attribution import attributed
from s3memory.storage.vault import Vault

log = logging.getLogger("s3memory")


def move_file(vault: Vault, old: MemoryPath, new: MemoryPath, text: str, etag: str) -> None:
    """Move the file at `old` (read as `text` with `etag`) to `new`, which must not exist."""
    try:
        with attributed("rename", source=old.display):
            new_etag = vault.write(new, text, if_none_match=True)
    except PreconditionFailed:
        raise CommandError(fmt.destination_exists(new.display)) from None
    try:
        _delete_moved(vault, old, etag)
    except StorageError as err:
        _settle_failed_move(vault, old, new, etag, new_etag, err)


def _delete_moved(vault: Vault, old: MemoryPath, etag: str) -> None:
    """Delete the moved source only in the version that was copied; a newer edit is kept."""
    try:
        vault.store.delete(vault.key(old), if_match=etag)
    except PreconditionFailed:
        log.warning("s3memory: source changed during rename; both copies kept")


def _settle_failed_move(
    vault: Vault, old: MemoryPath, new: MemoryPath, old_etag: str, new_etag: str, err: StorageError
) -> None:
    """The old copy could not be deleted: undo the new copy so that nothing changed; return if the
    delete landed after all (only its answer was lost); otherwise say that both copies exist."""
    undone = False
    try:
        info = vault.store.head(vault.key(old))
        if info is None:
            return
        if info.etag == old_etag:
            vault.store.delete(vault.key(new), if_match=new_etag)
            undone = True
    except StorageError:
        pass
    if undone:
        raise err
    log.warning("s3memory: rename could be neither finished nor undone (%s); both copies kept", err.code)
    raise CommandError(fmt.rename_left_copy(err.code, old.display, new.display))
