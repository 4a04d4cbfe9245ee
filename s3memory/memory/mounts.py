"""`Mounted`: the agent's memory with shared stores mounted at `/memories/<mount>/`.

A layer above `Memory`: each command goes, by its path, to the agent's own `Memory` (unchanged:
the same requests as without mounts) or to the `Memory` of the mounted store, with the path as the
store names it; what the store answers is shown with the mounted path (`core.mounts.outer_text`).
`view /memories` lists the agent's root and every mount's root together (one LIST each, sent at
once). Refused before any request: a write into a read-only mount, deleting or renaming a mount
point, and a rename between two owners (the agent's memory and a store, or two stores).
"""

from __future__ import annotations

import contextvars
import functools
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from s3memory.core import messages as fmt
from s3memory.core import mounts, paths, render
from s3memory.core.mounts import Mount
from s3memory.core.paths import MemoryPath, escape_for_display
from s3memory.core.tree import Entry
from s3memory.errors import CommandError, InvalidPath, S3MemoryError

from . import observe
from .engine import Memory

log = logging.getLogger("s3memory")
T = TypeVar("T")


class Mounted:
    """The six commands over the agent's `memory` and the `stores` mounted beside it ({name: (Mount, Memory)})."""

    def __init__(self, memory: Memory, stores: Mapping[str, tuple[Mount, Memory]]) -> None:
        self.memory = memory
        self.stores = dict(stores)
        self.vault = memory.vault  # the agent's: what `observe` and the adapters name
        self.log_paths = memory.log_paths
        self._warned = False
        self._looked: set[str] = set()  # mounts whose store was checked for being empty (`_note_empty`)

    # -- routing --
    def _where(self, raw: object) -> tuple[str, MemoryPath] | None:
        """(mount, path inside it) when `raw` lies in a mount; None for the agent's own memory, and
        for a path no memory could hold (the agent's `Memory` refuses it, as without mounts)."""
        path = _parsed(raw)
        return None if path is None else mounts.split(path, self.stores)

    def _store(self, mount: str, raw: object, *, write: bool = False) -> Memory:
        store_mount, memory = self.stores[mount]
        if write and store_mount.read_only:
            assert isinstance(raw, str)
            raise CommandError(fmt.read_only_mount(_shown(raw), f"{paths.ROOT}/{mount}"))
        return memory

    def _in_store(self, mount: str, call: Callable[[], T]) -> T:
        """`call()`, its failure shown with the mounted paths."""
        try:
            return call()
        except CommandError as err:
            failure = err
        raise CommandError(mounts.outer_text(failure.message, mount), kind=failure.kind, code=failure.code)

    def _answered(self, mount: str, call: Callable[[], str], *, shows_paths: bool = True) -> str:
        """`_in_store`, and the answer shown with the mounted paths (`shows_paths`: it holds paths
        only; a `str_replace` answer holds the model's text and no path, and is left as it is)."""
        answer = self._in_store(mount, call)
        return mounts.outer_text(answer, mount) if shows_paths else answer

    def _observed(self, name: str, raw: object, call: Callable[[], str]) -> str:
        shown = escape_for_display(str(raw)) if self.log_paths else None
        with observe.command(name, self.vault.agent_id, shown):
            return call()

    # -- the commands --
    def view(self, raw_path: object, view_range: object = None) -> str:
        where = self._where(raw_path)
        if where is None:
            path = _parsed(raw_path)
            if path is not None and path.is_root:
                assert isinstance(raw_path, str)
                return self._observed("view", raw_path, lambda: self._view_root(raw_path))
            return self.memory.view(raw_path, view_range)
        mount, _ = where
        assert isinstance(raw_path, str)
        memory = self._store(mount, raw_path)

        def look() -> str:
            try:
                inner, found = memory.look(mounts.inner_raw(raw_path, mount))
            except CommandError:
                self._note_empty(mount)
                raise
            if not found:
                self._note_empty(mount)
            shown = _shown(raw_path)
            limit = self.memory.limits.max_view_chars
            if isinstance(found, str):
                memory._accessed(inner)
                return render.file_view(shown, found, view_range, limit)
            return render.dir_view(shown, found, limit)

        return self._observed("view", raw_path, lambda: self._in_store(mount, look))

    def _view_root(self, raw_path: str) -> str:
        """`/memories`: the agent's root listing and each mount's, sent together."""
        # Threads of its own (not the tool's pool: a store's listing may wait on that pool itself).
        with ThreadPoolExecutor(max_workers=len(self.stores), thread_name_prefix="s3memory-mounts") as fan_out:
            looks: dict[str, Future[tuple[MemoryPath, str | list[Entry]]]] = {
                name: fan_out.submit(contextvars.copy_context().run, memory.look, paths.ROOT)
                for name, (_, memory) in self.stores.items()
            }
            _, own = self.memory.look(raw_path)
            inside = {name: self._in_store(name, functools.partial(_entries, future)) for name, future in looks.items()}
        for name, found in inside.items():
            if not found:
                self._note_empty(name)
        assert not isinstance(own, str)
        hidden = mounts.shadowed(own, self.stores)
        if hidden and not self._warned:
            self._warned = True
            log.warning(
                "s3memory: the agent's own %s at /memories/%s %s hidden by the mount%s of that name; "
                "s3memory ls --agent shows them",
                "entries" if len(hidden) > 1 else "entry", ", /memories/".join(hidden),
                "are" if len(hidden) > 1 else "is", "s" if len(hidden) > 1 else "",
            )  # fmt: skip
        return render.dir_view(_shown(raw_path), mounts.root_entries(own, inside), self.memory.limits.max_view_chars)

    def _note_empty(self, mount: str) -> None:
        """Once per mount and tool, when the store showed nothing: log it if nothing at all is stored
        in it (a typo'd store id shows an empty directory), unless it is mounted with `create`."""
        if mount in self._looked:
            return
        self._looked.add(mount)
        store_mount, memory = self.stores[mount]
        if store_mount.create:
            return
        try:
            if memory.vault.stores_anything():
                return
        except S3MemoryError:
            return  # the command itself says what failed
        log.warning(
            "s3memory: the mount /memories/%s shows shared store %s, which has nothing stored (is the store id "
            "right?); mount it with :create (Mount(..., create=True)) if it is meant to start empty",
            mount, store_mount.store,
        )  # fmt: skip

    def create(self, raw_path: object, file_text: object) -> str:
        return self._write("create", raw_path, lambda m, p: m.create(p, file_text))

    def str_replace(self, raw_path: object, old_str: object, new_str: object) -> str:
        return self._write("str_replace", raw_path, lambda m, p: m.str_replace(p, old_str, new_str))

    def insert(self, raw_path: object, insert_line: object, insert_text: object) -> str:
        return self._write("insert", raw_path, lambda m, p: m.insert(p, insert_line, insert_text))

    def delete(self, raw_path: object) -> str:
        where = self._where(raw_path)
        if where is not None and where[1].is_root:
            raise CommandError(fmt.cannot_delete_mount(f"{paths.ROOT}/{where[0]}"))
        return self._write("delete", raw_path, lambda m, p: m.delete(p))

    def _write(self, name: str, raw_path: object, call: Callable[[Memory, object], str]) -> str:
        where = self._where(raw_path)
        if where is None:
            return call(self.memory, raw_path)
        mount, _ = where
        assert isinstance(raw_path, str)
        memory = self._store(mount, raw_path, write=True)
        inner = mounts.inner_raw(raw_path, mount)
        shows_paths = name != "str_replace"
        return self._observed(
            name, raw_path, lambda: self._answered(mount, lambda: call(memory, inner), shows_paths=shows_paths)
        )

    def rename(self, raw_old: object, raw_new: object) -> str:
        old_path, new_path = _parsed(raw_old), _parsed(raw_new)
        if old_path is None or new_path is None or old_path.is_root:  # the agent's `Memory` refuses them
            return self.memory.rename(raw_old, raw_new)
        assert isinstance(raw_old, str)
        assert isinstance(raw_new, str)
        old, new = mounts.split(old_path, self.stores), mounts.split(new_path, self.stores)
        if old is None and new is None:
            return self.memory.rename(raw_old, raw_new)
        if old is not None and old[1].is_root:
            raise CommandError(fmt.cannot_rename_mount(f"{paths.ROOT}/{old[0]}"))
        for where, raw in ((old, raw_old), (new, raw_new)):
            if where is not None:
                self._store(where[0], raw, write=True)
        if old is None or new is None or old[0] != new[0]:
            raise CommandError(fmt.rename_across_stores(_shown(raw_old), _shown(raw_new)))
        mount = old[0]
        memory = self.stores[mount][1]
        inner_old, inner_new = mounts.inner_raw(raw_old, mount), mounts.inner_raw(raw_new, mount)
        return self._observed(
            "rename", raw_old, lambda: self._answered(mount, lambda: memory.rename(inner_old, inner_new))
        )

    def clear_all(self) -> str:
        """The agent's own memory only: a mounted store is never cleared by one of its readers."""
        return self.memory.clear_all()


def _parsed(raw: object) -> MemoryPath | None:
    """The path `raw` names, if it is one (the key-length limit is the owner's `Memory`'s to check)."""
    try:
        return paths.parse(raw)
    except InvalidPath:
        return None


def _shown(raw: str) -> str:
    """A valid path as the contract shows it: one trailing "/" removed."""
    return paths.parse(raw).display


def _entries(looking: Future[tuple[MemoryPath, str | list[Entry]]]) -> list[Entry]:
    found = looking.result()[1]
    assert not isinstance(found, str)  # the root of a memory is a directory
    return found
