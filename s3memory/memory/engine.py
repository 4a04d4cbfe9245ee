"""The six memory commands on S3: validate → read → edit → write → answer.

`Memory` returns the success string or raises `CommandError` with the exact text the model
must see (see docs/contract.md). Rendering is pure (`core.render`), what may be written is
`policy`, directory changes are `dir_changes`, a single-file rename is `moves`, and the words
for failures come from `explain`. It does not import `anthropic`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, wait
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from s3memory.core import edit, operational, render
from s3memory.core import messages as fmt
from s3memory.core.edit import require_str
from s3memory.core.guard import Guard
from s3memory.core.limits import Limits
from s3memory.core.paths import ROOT, MemoryPath, escape_for_display
from s3memory.core.tree import Entry
from s3memory.errors import (
    AccessDenied,
    CommandError,
    IntegrityError,
    KeyUnavailable,
    NotFound,
    S3MemoryError,
    StorageError,
)
from s3memory.storage.access import ACCESS_TAG
from s3memory.storage.attribution import attributed
from s3memory.storage.concurrency import submit
from s3memory.storage.listing import Lister
from s3memory.storage.store import ObjectInfo
from s3memory.storage.vault import Vault

from . import explain, observe, writes
from .dir_changes import DirectoryChanges
from .held import HeldFiles
from .looking import Looker
from .moves import SourceChanged, move_file
from .placement import Placement
from .policy import WritePolicy
from .recent import Recent
from .recovery import Recoverer

log = logging.getLogger("s3memory")

T = TypeVar("T")
P = ParamSpec("P")


def detached(method: Callable[P, T]) -> Callable[P, T]:
    """Public entry points raise `CommandError` with no chained exception and no inner traceback:
    the chain would lead to botocore errors (bucket, key, principal ARN) or to decrypted bytes.

    Each is also one observed command (see `observe`): one log record with its costs and outcome.
    """

    @functools.wraps(method)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        memory: Any = args[0]
        shown = escape_for_display(str(args[1])) if memory.log_paths and len(args) > 1 else None
        with observe.command(method.__name__, memory.vault.agent_id, shown), attributed(method.__name__):
            try:
                return method(*args, **kwargs)
            except CommandError as err:
                failure = err
            failure.__cause__ = failure.__context__ = None
            failure.__suppress_context__ = True
            raise failure.with_traceback(None)

    return run


def _tag_access(vault: Vault, key: str) -> None:
    try:
        vault.store.put_tags(key, {ACCESS_TAG: vault.access.today()})
    except S3MemoryError as err:  # the view already answered; retention just sees an older day
        log.warning("s3memory: could not record a file's last access (%s)", getattr(err, "code", type(err).__name__))


class Memory:
    """Command semantics for one agent."""

    def __init__(
        self,
        vault: Vault,
        executor: Executor,
        limits: Limits,
        guard: Guard,
        *,
        log_paths: bool = False,
        read_only: bool = False,
    ) -> None:
        self.vault = vault
        self.log_paths = log_paths  # put the command's path in its log record (off: paths are data)
        # An operator's inspection (`s3memory ls`, `cat`): completes no interrupted change (they are
        # in `recovery.pending`) and records no access; only `view` and `look` are meant to be called.
        self.read_only = read_only
        observe.attach(vault.store.s3)
        for client in vault.keys.clients():
            observe.attach(client)
        self.executor = executor
        self.limits = limits
        self.lister = Lister(vault.store, executor, vault.space)
        self.policy = WritePolicy(limits, guard, self.lister, vault.space)
        self.changes = DirectoryChanges(vault, executor)
        self.placement = Placement(vault, executor)
        self.recovery = Recoverer(vault, self.changes, self.policy.counted, read_only=read_only)
        self.changes.claims.unreleased = self.recovery.due  # a record left behind: the next command releases it
        self.recent = Recent(limits.held_files)  # files just read or written: an edit of one skips its GET
        self.looker = Looker(vault, self.lister, self.placement, self.recovery, self.recent)
        self.held = HeldFiles(vault, self.placement, self.recovery, self.recent)

    # -- plumbing --
    @contextmanager
    def _failures(self, display: str, *, partial: bool = False) -> Iterator[None]:
        """Storage, key and integrity failures → the contract's messages (no key, no bucket)."""
        try:
            yield
        except (IntegrityError, StorageError, KeyUnavailable) as err:
            explain.log_failure(err)
            if partial and isinstance(err, StorageError) and not isinstance(err, AccessDenied):
                self.recovery.due()  # the next command completes the change
            raise explain.as_command_error(err, display, partial=partial) from None

    def _parse(self, raw: object) -> MemoryPath:
        """`vault.parse`; an operator's tool ("auto" names) may read the agent's name mode for it."""
        with self._failures(ROOT):
            return self.vault.parse(raw)

    def _begin(self, *touched: MemoryPath, subtree: bool = False) -> None:
        self.recovery.ensure(*touched, subtree=subtree)

    @detached
    def recover(self) -> int:
        """Complete every interrupted directory change of the agent; returns how many."""
        with self._failures(ROOT):
            return self.recovery.run(strict=True)

    # -- view --
    @detached
    def view(self, raw_path: object, view_range: object = None) -> str:
        path, found = self.look(raw_path)
        if isinstance(found, str):
            self._accessed(path)
            return render.file_view(path.display, found, view_range, self.limits.max_view_chars)
        return render.dir_view(path.display, found, self.limits.max_view_chars)

    def _accessed(self, path: MemoryPath) -> None:
        """With access tracking, tag the file as used today (once a day; in the background, never failing the view)."""
        key = self.vault.key(path)
        if not self.read_only and self.vault.access.due(key):
            self.executor.submit(_tag_access, self.vault, key)

    @detached
    def look(self, raw_path: object) -> tuple[MemoryPath, str | list[Entry]]:
        """The file's text at `raw_path`, or the entries of the directory there (see `Looker`)."""
        path = self._parse(raw_path)
        with self._failures(path.display):
            if path.is_root:  # its listing is the one that looks for interrupted changes
                return path, self.looker.look(path, raw_path)
            # A new tool's first look is sent while the root is listed for interrupted changes.
            return path, self.recovery.ensure_while(lambda: self.looker.look(path, raw_path), path)

    # -- create --
    @detached
    def create(self, raw_path: object, file_text: object) -> str:
        path = self._parse(raw_path)
        text = require_str(file_text, "file_text")
        if path.is_root:
            raise CommandError(fmt.already_exists(path.display))
        with self._failures(path.display):
            # The checks first (a new tool's go with its root listing), then the PUT (see `creates`).
            self.recovery.ensure_while(lambda: self.placement.check(path, fmt.already_exists(path.display)), path)
            stored = self.policy.content(path, text, 0, True)
            etag = writes.create(self.vault, path, stored)
            self.recent.note(path, stored, etag)
        self.policy.created()
        self.placement.remember(path.ancestors())
        return fmt.created(path.display)

    # -- edits (optimistic concurrency: read ETag, write If-Match, retry on conflict) --
    def _edit(self, path: MemoryPath, missing: str, change: writes.Change[T]) -> T:
        with self._failures(path.display):
            if path.is_root:
                self._begin(path)
                raise CommandError(missing)
            read = None
            if self.recent.get(path) is None:  # read now: a new tool's read goes with its first root listing
                try:
                    read = self.recovery.ensure_while(lambda: self.vault.read(path), path)
                except NotFound:
                    raise CommandError(missing) from None
            else:
                self._begin(path)
            return writes.update(self.vault, self.policy, path, missing, change, self.recent, read)

    @detached
    def str_replace(self, raw_path: object, old_str: object, new_str: object) -> str:
        path = self._parse(raw_path)
        old = require_str(old_str, "old_str")
        new = require_str(new_str, "new_str")

        def change(text: str) -> tuple[str, Callable[[str], str]]:
            result = edit.replace_unique(text, old, new, path.display)
            return result.text, lambda stored: edit.describe_replacement(result, stored)

        return self._edit(path, fmt.does_not_exist_long(path.display), change)

    @detached
    def insert(self, raw_path: object, insert_line: object, insert_text: object) -> str:
        path = self._parse(raw_path)
        new = require_str(insert_text, "insert_text")

        def change(text: str) -> tuple[str, Callable[[str], str]]:
            return edit.insert_text(text, insert_line, new), lambda _stored: fmt.inserted(path.display)

        return self._edit(path, fmt.does_not_exist(path.display), change)

    # -- delete --
    @detached
    def delete(self, raw_path: object) -> str:
        path = self._parse(raw_path)
        if path.is_root:
            raise CommandError(fmt.cannot_delete_root())
        with self._failures(path.display):
            if self.held.delete(raw_path, path):
                self.policy.deleted()
                return fmt.deleted(path.display)
            found, listing_soon = self.recovery.ensure_while(
                lambda: self.placement.probe_delete(raw_path, path), path, subtree=True
            )
            if found is not None:
                self.recent.forget(path)
                writes.delete(self.vault, path, found.etag)
                self.policy.deleted()
                return fmt.deleted(path.display)
            listing = listing_soon[0].result() if listing_soon else self.placement.listing(path)
            if not listing:
                raise CommandError(fmt.does_not_exist(path.display))
        self.placement.forget(path)
        self.recent.forget_below(path)
        self.policy.deleted(len(listing))
        with self._failures(path.display, partial=True):
            self.changes.delete_dir(path, listing)
        return fmt.deleted(path.display)

    # -- rename --
    @detached
    def rename(self, raw_old: object, raw_new: object) -> str:
        old = self._parse(raw_old)
        new = self._parse(raw_new)
        if old.is_root:
            raise CommandError(fmt.cannot_rename_root())
        backoff = writes.Backoff()
        while True:  # a file's source changed after it was read: its copy was undone, read it again
            try:
                return self._rename(raw_old, old, new)
            except SourceChanged:
                log.info("s3memory: the source of a rename changed; reading it again")
                if not backoff():
                    raise CommandError(operational.busy(old.display)) from None

    def _rename(self, raw_old: object, old: MemoryPath, new: MemoryPath) -> str:
        with self._failures(old.display):
            reading, listing_soon, new_file, placed = self.recovery.ensure_while(
                lambda: self.placement.probe_rename(raw_old, old, new), old, new, subtree=True
            )
            try:
                text, etag = reading.result()
                listing: list[ObjectInfo] = []
            except NotFound:
                text, etag = "", ""
                if not listing_soon:  # no file, nor a directory this tool has seen: list it, HEAD meanwhile
                    listing_soon = [submit(self.executor, self.placement.listing, old)]
                    new_file = [submit(self.executor, self.placement.is_file, new)]
                    wait(listing_soon), wait(new_file)
                listing = listing_soon[0].result()
                if not listing:
                    raise CommandError(fmt.does_not_exist(old.display)) from None
                if new == old:
                    raise CommandError(fmt.destination_exists(new.display)) from None
                if new.is_within(old):
                    raise CommandError(fmt.into_itself(old.display)) from None
            if placed is not None:
                raise placed
            if listing and new_file[0].result():
                raise CommandError(fmt.destination_exists(new.display))
            if not listing:  # the moved text follows the guard as an edit would (it may predate the guard)
                self.recent.forget(old)
                moved = self.policy.guard.scan(text, new.display)
                self.recent.note(new, moved, move_file(self.vault, old, new, moved, etag))
                self.placement.remember(new.ancestors())
                return fmt.renamed(old.display, new.display)
            self.policy.paths(self._renamed(old, new, listing))  # every key the rename creates
        self.placement.forget(old)
        self.recent.forget_below(old)
        with self._failures(old.display, partial=True):
            self.changes.rename_dir(old, new, listing)
        self.placement.remember([new, *new.ancestors()])
        return fmt.renamed(old.display, new.display)

    def _renamed(self, old: MemoryPath, new: MemoryPath, listing: Sequence[ObjectInfo]) -> Iterator[MemoryPath]:
        """The new path of every file a directory rename moves."""
        for obj in listing:
            path = self.vault.path_of(obj.key)
            if path is not None and path.is_within(old):
                yield path.rebase(old, new)

    def settle(self) -> None:
        """Wait for the requests sent after a command's answer (a directory change releases its
        intent record in the background). Never needed for correctness; `close()` waits too."""
        self.changes.settle()

    @detached
    def clear_all(self) -> str:
        """Delete every object of this agent, intent records included, but not its branch keys
        (other processes may be writing with them; erasing them is `s3memory shred`). Not a model command."""
        space = self.vault.space
        with self._failures(ROOT):
            objects = self.vault.store.list_all(self.vault.root)
            self.changes.delete_keys([(obj.key, "") for obj in objects if not space.is_keystore(obj.key)])
        self.recent.forget_below(MemoryPath())
        return "All memory cleared"
