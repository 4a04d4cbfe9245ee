"""A PUT sent with its placement checks, undone if they refuse; and why `create` does not do that.

`create` (memory.engine) makes the placement checks first, then the conditional PUT: two round
trips (a new tool's first create sends its checks with its root listing).

The PUT (If-None-Match) answers whether a file is at the path; the checks (`Placement.check`)
whether the path is a directory or lies below a file. No S3 condition can tell that no key lies
below a prefix, so a PUT sent before its checks answered would have to be deleted again when
they refuse, and meanwhile another tool could read, edit or rename the refused file (its edit
then acknowledged and lost, or kept as a file beside the directory), a crash before the delete
would leave it for good, and a bucket with Object Lock would keep its version. So a create sends
its PUT only once the checks passed: a refused create stores nothing, anywhere, ever.

`put_placed` is the one-wave form (the PUT with the checks, deleted again on a refusal), kept for
callers that can undo what they stored; its undo is conditional on the ETag it wrote.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Executor, Future, wait

from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError, OutcomeUnknown, PreconditionFailed, S3MemoryError, StorageError
from s3memory.storage.concurrency import submit
from s3memory.storage.vault import Vault

from . import outcomes
from .placement import Placement

log = logging.getLogger("s3memory")


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
    object the PUT stored (if any) is deleted again in the version it wrote (`OutcomeUnknown` if
    that cannot be made certain)."""
    putting = submit(executor, put, *args)
    try:
        placement.check(path, exists_message, mine=vault.key(path))
    except (CommandError, S3MemoryError):
        wait([putting])
        _undo(vault, path, putting)
        raise
    return putting


def _undo(vault: Vault, path: MemoryPath, putting: Future[str]) -> None:
    """Delete what the PUT stored (nothing if it failed) only in the version it wrote; raise
    `OutcomeUnknown` if that cannot be made certain."""
    failed = putting.exception()
    if isinstance(failed, OutcomeUnknown):
        raise failed  # it may have landed: the model must look, whatever the checks said
    if failed is not None:
        return  # refused (a file is there) or certainly not stored: nothing of ours to delete
    etag = putting.result()
    if not etag:  # never an unconditional DELETE: it could remove another writer's version
        raise outcomes.unknown(PreconditionFailed("PreconditionFailed", "DeleteObject"), [path])
    try:
        vault.store.delete(vault.key(path), if_match=etag)
    except StorageError as err:
        log.warning("s3memory: a refused write could not be undone (%s)", err.code)
        raise outcomes.unknown(err, [path]) from None
