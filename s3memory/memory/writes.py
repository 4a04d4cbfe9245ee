"""Conditional writes of one file: create only if absent, update only the version that was read.

Optimistic concurrency: an update reads the file and its ETag, applies the change, and writes
with If-Match; if another writer got there first (412/409) it reads again and re-applies the
change, up to `EDIT_ATTEMPTS` times.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from s3memory.core import messages as fmt
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError, ConditionalConflict, NotFound, PreconditionFailed
from s3memory.storage.vault import Vault

from .policy import WritePolicy

log = logging.getLogger("s3memory")
T = TypeVar("T")
EDIT_ATTEMPTS = 5
# change(text) → (new text, a function that describes the text as stored)
Change = Callable[[str], tuple[str, Callable[[str], T]]]


def create(vault: Vault, path: MemoryPath, text: str) -> None:
    """Write a new file at `path`; the contract's "already exists" error if any file is there."""
    for _ in range(EDIT_ATTEMPTS):
        try:
            vault.write(path, text, if_none_match=True)
            return
        except PreconditionFailed:
            raise CommandError(fmt.already_exists(path.display)) from None
        except ConditionalConflict:
            continue  # a concurrent create is in flight; ask again, one of us gets 412
    raise CommandError(fmt.already_exists(path.display))


def update(vault: Vault, policy: WritePolicy, path: MemoryPath, missing: str, change: Change[T]) -> T:
    """Apply `change` to the file at `path` (`missing`: the error if there is none); returns its description."""
    refused: tuple[str, T] | None = None  # (text, result) of our last write refused by its condition
    for _ in range(EDIT_ATTEMPTS):
        try:
            text, etag = vault.read(path)
        except NotFound:
            raise CommandError(missing) from None
        if refused is not None and text == refused[0]:
            # That write landed and only its answer was lost: botocore retried it and the
            # retry met our own object (412). Applying the change again would insert twice.
            return refused[1]
        new_text, describe = change(text)
        new_text = policy.content(path, new_text, len(text.encode("utf-8")), False)
        try:
            vault.write(path, new_text, if_match=etag)
            return describe(new_text)
        except (PreconditionFailed, ConditionalConflict):
            log.info("s3memory: concurrent write detected; re-reading")
            refused = (new_text, describe(new_text))
        except NotFound:
            raise CommandError(missing) from None
    raise CommandError(fmt.busy(path.display))
