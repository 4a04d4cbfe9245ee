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
from collections.abc import Callable
from concurrent.futures import Executor, Future, wait

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
    return put_placed(vault, placement, executor, path, fmt.already_exists(path.display), writes.create, vault, path,
                      text).result()  # fmt: skip


def put_placed(
    vault: Vault,
    placement: Placement,
    executor: Executor,
    path: MemoryPath,
    exists_message: str,
    put: Callable[..., str],
    *args: object,
) -> Future[str]:
    """Send `put(*args)`, a conditional PUT of `path` returning its ETag, with the placement checks
    of `path`; its answer, once the checks passed. A check that refuses or fails raises, after the
    object the PUT stored (if any) is deleted again in its version."""
    putting = submit(executor, put, *args)
    try:
        placement.check(path, exists_message, mine=vault.key(path))
    except (CommandError, S3MemoryError):
        wait([putting])
        _undo(vault, path, putting)
        raise
    return putting


def _undo(vault: Vault, path: MemoryPath, putting: Future[str]) -> None:
    """Delete what the PUT stored (nothing if it failed); raise `OutcomeUnknown` if that cannot be made certain."""
    failed = putting.exception()
    if isinstance(failed, OutcomeUnknown):
        raise failed  # it may have landed: the model must look, whatever the checks said
    if failed is not None:
        return  # refused (a file is there) or certainly not stored: nothing of ours to delete
    try:
        vault.store.delete(vault.key(path), if_match=putting.result() or None)
    except StorageError as err:
        log.warning("s3memory: a refused create could not be undone (%s)", err.code)
        raise outcomes.unknown(err, [path]) from None
