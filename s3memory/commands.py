"""The six memory commands on S3: validate → read → edit → write → format.

`Memory` returns the success string or raises `CommandError` with the exact text the model
must see. Storage, key and integrity failures are turned into those texts here, in one place,
so the tool classes and the CLI show the same words. It does not import `anthropic`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from . import edit
from . import format as fmt
from .bulk import INTENTS, Bulk
from .errors import (
    AccessDenied,
    CommandError,
    ConditionalConflict,
    IntegrityError,
    KeyUnavailable,
    NotFound,
    PreconditionFailed,
    StorageError,
)
from .guard import Guard
from .listing import Lister
from .paths import ROOT, MemoryPath
from .store import ObjectInfo
from .vault import Vault

log = logging.getLogger("s3memory")
T = TypeVar("T")
EDIT_ATTEMPTS = 5


@dataclass(frozen=True)
class Limits:
    max_file_bytes: int = 1024 * 1024
    max_view_chars: int = 100_000
    max_agent_bytes: int | None = None
    max_agent_files: int | None = None


def _require_str(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise CommandError(fmt.bad_argument(name, "a string"))
    try:
        value.encode("utf-8")  # a lone surrogate (JSON "\ud800") cannot be stored as UTF-8
    except UnicodeEncodeError:
        raise CommandError(fmt.bad_argument(name, "valid Unicode text (no unpaired surrogates)")) from None
    return value


class Memory:
    """Command semantics for one agent."""

    def __init__(self, vault: Vault, executor: Executor, limits: Limits, guard: Guard) -> None:
        self.vault = vault
        self.executor = executor
        self.limits = limits
        self.guard = guard
        self.bulk = Bulk(vault, executor)
        self.lister = Lister(vault.store, executor)
        self._recovered = False

    # -- plumbing --
    @contextmanager
    def _storage_errors(self, display: str, *, partial: bool = False) -> Iterator[None]:
        """Translate storage/key failures into the spec's operational messages (no keys, no bucket)."""
        try:
            yield
        except IntegrityError:
            raise CommandError(fmt.integrity_failed(display)) from None
        except AccessDenied as err:
            log.warning("s3memory: %s denied (%s)", err.operation, err.code)
            raise CommandError(fmt.storage_denied()) from None
        except StorageError as err:
            log.warning("s3memory: %s failed (%s)", err.operation, err.code)
            if partial:
                self._recovered = False
                raise CommandError(fmt.storage_unavailable_partial(err.code, display)) from None
            raise CommandError(fmt.storage_unavailable(err.code)) from None
        except KeyUnavailable as err:
            log.warning("s3memory: data key unavailable (%s)", err.code)
            raise CommandError(fmt.keys_unavailable(err.code)) from None

    def _begin(self) -> None:
        """Once per tool instance (and after a failed multi-object change): finish interrupted changes."""
        if self._recovered:
            return
        # Looking changes nothing, so a failure to look is a plain "nothing was changed"; only a
        # failure while completing a recorded change is reported as an unfinished change.
        with self._storage_errors(ROOT):
            pending = self.vault.store.exists_under(self.vault.dir_prefix(INTENTS))
        if pending:
            self.recover()
        self._recovered = True

    def recover(self) -> int:
        """Complete every interrupted directory change of the agent; returns how many."""
        with self._storage_errors(ROOT, partial=True):
            count = self.bulk.recover()
        if count:
            log.info("s3memory: completed %d interrupted change(s)", count)
        self._recovered = True
        return count

    def _listing(self, path: MemoryPath) -> list[ObjectInfo]:
        return self.vault.store.list_all(self.vault.dir_prefix(path))

    def _is_dir(self, path: MemoryPath) -> bool:
        return path.is_root or self.vault.store.exists_under(self.vault.dir_prefix(path))

    def _check_placement(self, path: MemoryPath, exists_message: str) -> None:
        """Raise if `path` is an existing directory or lies below a file.

        Whether `path` is a file is left to the conditional PUT. Costs 2 requests when the
        parent directory exists; below a new directory, 1 + one HEAD per ancestor (in parallel),
        since a missing parent rules out a directory at `path`.
        """
        ancestors = path.ancestors()
        if ancestors and not self._is_dir(path.parent):
            heads = list(self.executor.map(lambda a: self.vault.store.head(self.vault.key(a)), ancestors))
            for ancestor, head in zip(ancestors, heads, strict=True):
                if head is not None:
                    raise CommandError(fmt.parent_is_file(path.display, ancestor.display))
            return
        if self._is_dir(path):
            raise CommandError(exists_message)

    def _check_content(self, path: MemoryPath, text: str, old_size: int, new_file: bool) -> str:
        """Guard and limits for content about to be written; returns the text to write."""
        text = self.guard.scan(text, path.display)
        size = len(text.encode("utf-8"))
        if size > self.limits.max_file_bytes:
            raise CommandError(fmt.too_large(path.display, size, self.limits.max_file_bytes))
        self._check_quota(path, size - old_size, 1 if new_file else 0)
        return text

    def _check_quota(self, path: MemoryPath, extra_bytes: int, extra_files: int) -> None:
        max_bytes, max_files = self.limits.max_agent_bytes, self.limits.max_agent_files
        if max_bytes is None and max_files is None:
            return
        used_bytes, used_files = self.lister.usage(self.vault.root)
        if max_files is not None and extra_files and used_files + extra_files > max_files:
            raise CommandError(fmt.quota_files(path.display, used_files, max_files))
        if max_bytes is not None and extra_bytes > 0 and used_bytes + extra_bytes > max_bytes:
            raise CommandError(fmt.quota_bytes(path.display, used_bytes + extra_bytes, max_bytes))

    # -- view --
    def view(self, raw_path: object, view_range: object = None) -> str:
        path = self.vault.parse(raw_path)
        with self._storage_errors(path.display):
            self._begin()
            if path.is_root:
                return self._view_dir(path)
            try:
                text, _ = self.vault.read(path)
            except NotFound:
                return self._view_dir(path)
        part = edit.view_slice(text, path.display, view_range)
        header = fmt.file_header(path.display)
        lines = fmt.numbered(part.lines, part.first)
        # The cap covers the header and the newline after it; the notice line comes on top.
        keep = fmt.fit_lines(lines, max(0, self.limits.max_view_chars - len(header) - 1))
        if keep < len(lines):
            last = part.first + len(part.lines) - 1  # the end of the requested range
            notice = fmt.file_truncated(path.display, part.first + keep, last, self.limits.max_view_chars)
            lines = [*lines[:keep], notice]
        return "\n".join([header, *lines])

    def _view_dir(self, path: MemoryPath) -> str:
        entries = self.lister.entries(self.vault.dir_prefix(path))
        if entries is None and not path.is_root:
            raise CommandError(fmt.does_not_exist_view(path.display))
        lines = fmt.dir_listing(path.display, entries or []).split("\n")
        keep = max(2, fmt.fit_lines(lines, self.limits.max_view_chars))  # header and the directory itself
        if keep < len(lines):
            lines = [*lines[:keep], fmt.listing_truncated(path.display, self.limits.max_view_chars)]
        return "\n".join(lines)

    # -- create --
    def create(self, raw_path: object, file_text: object) -> str:
        path = self.vault.parse(raw_path)
        text = _require_str(file_text, "file_text")
        if path.is_root:
            raise CommandError(fmt.already_exists(path.display))
        with self._storage_errors(path.display):
            self._begin()
            self._check_placement(path, fmt.already_exists(path.display))
            text = self._check_content(path, text, 0, True)
            for _ in range(EDIT_ATTEMPTS):
                try:
                    self.vault.write(path, text, if_none_match=True)
                    return fmt.created(path.display)
                except PreconditionFailed:
                    raise CommandError(fmt.already_exists(path.display)) from None
                except ConditionalConflict:
                    continue  # a concurrent create is in flight; ask again, one of us gets 412
            raise CommandError(fmt.already_exists(path.display))

    # -- edits (optimistic concurrency: read ETag, write If-Match, retry on conflict) --
    def _edit(self, path: MemoryPath, missing: str, change: Callable[[str], tuple[str, Callable[[str], T]]]) -> T:
        """`change(text)` gives the new text and a function that describes the text as stored."""
        with self._storage_errors(path.display):
            self._begin()
            if path.is_root:
                raise CommandError(missing)
            refused: tuple[str, T] | None = None  # (text, result) of our last write refused by its condition
            for _ in range(EDIT_ATTEMPTS):
                try:
                    text, etag = self.vault.read(path)
                except NotFound:
                    raise CommandError(missing) from None
                if refused is not None and text == refused[0]:
                    # That write landed and only its answer was lost: botocore retried it and the
                    # retry met our own object (412). Applying the change again would insert twice.
                    return refused[1]
                new_text, describe = change(text)
                new_text = self._check_content(path, new_text, len(text.encode("utf-8")), False)
                try:
                    self.vault.write(path, new_text, if_match=etag)
                    return describe(new_text)
                except (PreconditionFailed, ConditionalConflict):
                    log.info("s3memory: concurrent write detected; re-reading")
                    refused = (new_text, describe(new_text))
                    continue
                except NotFound:
                    raise CommandError(missing) from None
            raise CommandError(fmt.busy(path.display))

    def str_replace(self, raw_path: object, old_str: object, new_str: object) -> str:
        path = self.vault.parse(raw_path)
        old = _require_str(old_str, "old_str")
        new = _require_str(new_str, "new_str")

        def change(text: str) -> tuple[str, Callable[[str], str]]:
            result = edit.replace_unique(text, old, new, path.display)

            def describe(stored: str) -> str:
                # The guard may have redacted what is stored: show the stored lines, not the request's.
                lines = edit.split_lines(stored)
                removed = len(edit.split_lines(result.text)) - len(lines)
                last = result.snippet_first + len(result.snippet) - 1 - removed
                return fmt.edited_snippet(lines[result.snippet_first - 1 : last], result.snippet_first)

            return result.text, describe

        return self._edit(path, fmt.does_not_exist_long(path.display), change)

    def insert(self, raw_path: object, insert_line: object, insert_text: object) -> str:
        path = self.vault.parse(raw_path)
        new = _require_str(insert_text, "insert_text")

        def change(text: str) -> tuple[str, Callable[[str], str]]:
            return edit.insert_text(text, insert_line, new), lambda _stored: fmt.inserted(path.display)

        return self._edit(path, fmt.does_not_exist(path.display), change)

    # -- delete --
    def delete(self, raw_path: object) -> str:
        path = self.vault.parse(raw_path)
        if path.is_root:
            raise CommandError(fmt.cannot_delete_root())
        with self._storage_errors(path.display):
            self._begin()
            key = self.vault.key(path)
            if self.vault.store.head(key) is not None:
                self.vault.store.delete(key)
                return fmt.deleted(path.display)
            listing = self._listing(path)
            if not listing:
                raise CommandError(fmt.does_not_exist(path.display))
        with self._storage_errors(path.display, partial=True):
            self.bulk.delete_dir(path, listing)
        return fmt.deleted(path.display)

    # -- rename --
    def rename(self, raw_old: object, raw_new: object) -> str:
        old = self.vault.parse(raw_old)
        new = self.vault.parse(raw_new)
        if old.is_root:
            raise CommandError(fmt.cannot_rename_root())
        with self._storage_errors(old.display):
            self._begin()
            try:
                text, etag = self.vault.read(old)
                listing: list[ObjectInfo] = []
            except NotFound:
                text, etag = "", ""
                listing = self._listing(old)
                if not listing:
                    raise CommandError(fmt.does_not_exist(old.display)) from None
                if new == old:
                    raise CommandError(fmt.destination_exists(new.display)) from None
                if new.is_within(old):
                    raise CommandError(fmt.into_itself(old.display)) from None
            if new.is_root:
                raise CommandError(fmt.destination_exists(new.display))
            self._check_placement(new, fmt.destination_exists(new.display))
            if listing and self.vault.store.head(self.vault.key(new)) is not None:
                raise CommandError(fmt.destination_exists(new.display))
            self.guard.scan("", new.display)  # the new name becomes an (unencrypted) object key
            if not listing:  # a single file: re-encrypt for its new path, then drop the old object
                try:
                    new_etag = self.vault.write(new, text, if_none_match=True)
                except PreconditionFailed:
                    raise CommandError(fmt.destination_exists(new.display)) from None
                try:
                    self._delete_moved(old, etag)
                except StorageError as err:
                    self._settle_failed_move(old, new, etag, new_etag, err)
                return fmt.renamed(old.display, new.display)
        with self._storage_errors(old.display, partial=True):
            self.bulk.rename_dir(old, new, listing)
        return fmt.renamed(old.display, new.display)

    def clear_all(self) -> str:
        """Delete every object of this agent (bookkeeping included). Not a model command."""
        with self._storage_errors(ROOT):
            self.bulk.delete_keys([(obj.key, "") for obj in self.vault.store.list_all(self.vault.root)])
        return "All memory cleared"

    def _settle_failed_move(
        self, old: MemoryPath, new: MemoryPath, old_etag: str, new_etag: str, err: StorageError
    ) -> None:
        """The old copy of a renamed file could not be deleted: undo the new copy so that nothing
        changed; return if the delete landed after all (only its answer was lost); otherwise say
        that both copies exist."""
        undone = False
        try:
            info = self.vault.store.head(self.vault.key(old))
            if info is None:
                return
            if info.etag == old_etag:
                self.vault.store.delete(self.vault.key(new), if_match=new_etag)
                undone = True
        except StorageError:
            pass
        if undone:
            raise err
        log.warning("s3memory: rename could be neither finished nor undone (%s); both copies kept", err.code)
        raise CommandError(fmt.rename_left_copy(err.code, old.display, new.display))

    def _delete_moved(self, old: MemoryPath, etag: str) -> None:
        """Delete the moved source only in the version that was copied; a newer edit is kept."""
        try:
            self.vault.store.delete(self.vault.key(old), if_match=etag)
        except PreconditionFailed:
            log.warning("s3memory: source changed during rename; both copies kept")
