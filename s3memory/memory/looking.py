"""What `view` looks at: a file's text or a directory's entries, in as few round trips as it can.

A path that looks like a directory (a trailing "/", no "." in its name, or one this tool has
seen) is listed first, anything else is read first; the other request follows only when the
first finds nothing. The guess decides the order, never the answer. The root listing of a tool's
first command also answers whether interrupted changes exist, so a cold `view /memories` is one
request.
"""

from __future__ import annotations

from s3memory.core import messages as fmt
from s3memory.core.paths import MemoryPath
from s3memory.core.tree import Entry
from s3memory.errors import CommandError, NotFound, S3MemoryError
from s3memory.storage.listing import Lister
from s3memory.storage.vault import Vault

from .placement import Placement
from .recent import Recent
from .recovery import Recoverer, scan_root

ROOT = MemoryPath()


class Looker:
    def __init__(self, vault: Vault, lister: Lister, placement: Placement, recovery: Recoverer, recent: Recent) -> None:
        self.vault = vault
        self.lister = lister
        self.placement = placement
        self.recovery = recovery
        self.recent = recent

    def look(self, path: MemoryPath, raw_path: object) -> str | list[Entry]:
        if path.is_root:
            return self._root_entries()
        if self.placement.looks_like_dir(raw_path, path):
            entries = self.lister.entries(self.vault.dir_prefix(path), path)
            if entries is not None:
                return self._seen(path, entries)
            return self._read(path)
        try:
            return self._text(path)
        except NotFound:
            entries = self.lister.entries(self.vault.dir_prefix(path), path)
            if entries is None:
                raise CommandError(fmt.does_not_exist_view(path.display)) from None
            return self._seen(path, entries)

    def _read(self, path: MemoryPath) -> str:
        try:
            return self._text(path)
        except NotFound:
            raise CommandError(fmt.does_not_exist_view(path.display)) from None

    def _text(self, path: MemoryPath) -> str:
        try:
            text, etag = self.vault.read(path)
        except S3MemoryError:  # gone, or failing authentication: not the version this tool holds
            self.recent.forget(path)
            raise
        self.recent.note(path, text, etag)
        return text

    def _root_entries(self) -> list[Entry]:
        if self.recovery.done:
            self.recovery.ensure(ROOT)
            return self._seen(ROOT, self.lister.entries(self.vault.root) or [])
        page, token = self.vault.store.list_page(self.vault.root)
        scan = scan_root(self.vault, page, token)
        self.recovery.counted(scan.files)
        if scan.has_records is False:
            self.recovery.mark_clean()
            return self._seen(ROOT, self.lister.entries_from(self.vault.root, page, token) or [])
        self.recovery.ensure(ROOT)  # complete them first, then list what they left
        return self._seen(ROOT, self.lister.entries(self.vault.root) or [])

    def _seen(self, path: MemoryPath, entries: list[Entry]) -> list[Entry]:
        """Remember the directories a listing showed (to send later checks together)."""
        dirs = [path.join(e.name.rstrip("/")) for e in entries if e.is_dir]
        self.placement.remember([path, *dirs])
        return entries
