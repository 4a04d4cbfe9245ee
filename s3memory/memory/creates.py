"""`create` in one round trip: the conditional PUT goes out with the placement checks.

The PUT (If-None-Match) answers whether a file is at the path; the checks (`Placement.check`)
whether the path is a directory or lies below a file. Sent one after the other they cost two
round trips; sent together, one. When the checks refuse (the model asked for a path that is a
directory, or below a file) or fail, the object the PUT stored is deleted again in the version
it wrote, and the command answers as if the PUT had never been sent. Meanwhile, a reader could
have seen the file for that moment, and a versioned bucket keeps it as a version followed by a
delete marker; a create that is not refused costs nothing of the kind.

Used only when the write needs no new branch key (`Keystore.sealing_is_quiet`): a refused create
must leave the keystore as it was too.
"""

from __future__ import annotations

import logging
from concurrent.futures import Executor, wait

from s3memory.core import messages as fmt
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError, OutcomeUnknown, S3MemoryError, StorageError
from s3memory.storage.concurrency import submit
from s3memory.storage.vault import Vault

from . import outcomes, writes
from .placement import Placement

log = logging.getLogger("s3memory")


def create_placed(vault: Vault, placement: Placement, executor: Executor, path: MemoryPath, text: str) -> str:
    """Create the file at `path` if it may go there; its ETag ("" if only a read-back saw it land)."""
    putting = submit(executor, writes.create, vault, path, text)
    try:
        placement.check(path, fmt.already_exists(path.display), mine=vault.key(path))
    except (CommandError, S3MemoryError):
        wait([putting])
        undo_put(vault, path, putting.exception(), None if putting.exception() else putting.result())
        raise
    return putting.result()


def undo_put(vault: Vault, path: MemoryPath, failed: BaseException | None, etag: str | None) -> None:
    """Delete what a PUT sent with checks stored (nothing if it failed: `failed`); raise
    `OutcomeUnknown` if that cannot be made certain."""
    if isinstance(failed, OutcomeUnknown):
        raise failed  # it may have landed: the model must look, whatever the checks said
    if failed is not None:
        return  # refused (a file is there) or certainly not stored: nothing of ours to delete
    try:
        vault.store.delete(vault.key(path), if_match=etag or None)
    except StorageError as err:
        log.warning("s3memory: a refused create could not be undone (%s)", err.code)
        raise outcomes.unknown(err, [path]) from None
