"""When to complete interrupted directory changes, and which commands must wait for one.

A tool instance looks for intent records before its first command (one LIST) and completes
what it finds. A change that cannot be completed now is *stuck*: only commands on the paths it
covers are refused (a failure that may pass says "Try again"; one that will not names the
directory and the repair command); every other path stays usable. Stuck changes are tried
again on the next command when their failure may pass, otherwise every minute (an operator
may have repaired them from another process).

A *read-only* recoverer (an operator's inspection: `s3memory ls`, `cat`) completes nothing: it
keeps the interrupted changes it found in `pending` for its caller to report, and blocks nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import wait
from dataclasses import dataclass
from typing import TypeVar

from s3memory.core import operational
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError
from s3memory.storage.concurrency import submit
from s3memory.storage.listing import complete_before
from s3memory.storage.store import Page
from s3memory.storage.vault import Vault

from .dir_changes import DirectoryChanges
from .intents import INTENTS, Intent, Recovery, Stuck

log = logging.getLogger("s3memory")
T = TypeVar("T")
STUCK_RECHECK_SECONDS = 60.0


def blocked(stuck: Stuck) -> CommandError:
    """The answer to a command that touches a stuck change."""
    src, err = stuck.intent.src.display, stuck.error
    if stuck.transient:
        return CommandError(operational.storage_unavailable_partial(err.code, src), kind=err.kind, code=err.code)
    return CommandError(operational.change_blocked(err.code, src), kind=err.kind, code=err.code)


@dataclass(frozen=True)
class RootScan:
    """What one page of the agent's root listing says: whether intent records exist (None: not
    sure, the page ended before their place) and how many memory files there are (None: more
    than the page holds)."""

    has_records: bool | None
    files: int | None


def scan_root(vault: Vault, page: Page, token: str | None) -> RootScan:
    """Read the first page of the root listing; it also hands the keystore its folder, if it holds it."""
    marker = vault.dir_prefix(INTENTS)
    last = page.objects[-1].key if page.objects else ""
    vault.keystore.prime(vault.store.bucket, page.objects, last_key=last, complete=token is None)
    vault.names.mode()  # a tool of the other name mode stops here (a warm one: no request)
    if any(obj.key.startswith(marker) for obj in page.objects):
        has_records: bool | None = True
    else:
        has_records = False if token is None or complete_before(marker, last) else None
    files = sum(not vault.space.is_bookkeeping(obj.key) for obj in page.objects) if token is None else None
    return RootScan(has_records, files)


class Recoverer:
    def __init__(
        self,
        vault: Vault,
        changes: DirectoryChanges,
        counted: Callable[[int | None], None] = lambda _: None,
        *,
        read_only: bool = False,
    ) -> None:
        self.vault = vault
        self.changes = changes
        self.counted = counted  # told the file count the root listing saw
        self.read_only = read_only  # look for interrupted changes, never complete them
        self.pending: list[Intent] = []  # read-only: the interrupted changes found (oldest first)
        self.stuck: list[Stuck] = []
        self._done = False  # looked (and completed what could be) since the last failure
        self._found = False  # the last look found intent records
        self._recheck_at = 0.0

    @property
    def done(self) -> bool:
        """True once interrupted changes were looked for (and nothing that may pass is left)."""
        return self._done

    def mark_clean(self) -> None:
        """The caller has seen (in a listing of its own) that no intent record exists."""
        self.stuck = []
        self._done = True

    def due(self) -> None:
        """A directory change just failed half-way: look for records again before the next command."""
        self._done = False

    def ensure(self, *touched: MemoryPath, subtree: bool = False) -> None:
        """Complete interrupted changes if it is time to; raise if the command touches a stuck one.

        `touched`: the paths the command works on; `subtree`: it also works on everything below them.
        """
        if self._looking_due():
            self.run()
        self._refuse(touched, subtree)

    def ensure_while(self, reads: Callable[[], T], *touched: MemoryPath, subtree: bool = False) -> T:
        """`ensure`, with the command's first `reads` (requests that change nothing) sent while
        the agent's root is listed for intent records: a new tool's first command saves that round
        trip. If records were found (and their changes completed), the reads are made again."""
        if not self._looking_due():
            self._refuse(touched, subtree)
            return reads()
        looking = submit(self.changes.executor, self.vault.store.list_page, self.vault.root)
        failure: Exception | None = None
        try:
            with self.vault.keystore.expecting(self.vault.store.bucket, looking):  # a decrypt waits for it
                result = reads()
        except Exception as err:  # raised below, unless the reads are made again
            failure = err
        finally:
            wait([looking])
        self.run(first=looking.result())
        self._refuse(touched, subtree)
        if self._found:
            return reads()
        if failure is not None:
            raise failure
        return result

    def _looking_due(self) -> bool:
        return not self._done or bool(self.stuck and time.monotonic() >= self._recheck_at)

    def _refuse(self, touched: tuple[MemoryPath, ...], subtree: bool) -> None:
        for stuck in self.stuck:
            if any(stuck.covers(path, subtree=subtree) for path in touched):
                raise blocked(stuck)

    def run(self, *, strict: bool = False, first: tuple[Page, str | None] | None = None) -> int:
        """Look for intent records (1 LIST of the agent's root, which also counts its files when
        they fit in one page) and complete them; returns how many were completed.

        `strict`: raise for the first change that is stuck (otherwise only its paths wait).
        `first`: that root listing's first page and continuation token, made already.
        Read-only: the changes are read into `pending` and none is completed (returns 0).
        """
        page, token = first or self.vault.store.list_page(self.vault.root)
        scan = scan_root(self.vault, page, token)
        self.counted(scan.files)
        pending = scan.has_records
        if pending is None:
            pending = self.vault.store.exists_under(self.vault.dir_prefix(INTENTS))
        self._found = pending
        if self.read_only:
            self.pending = [record.intent for record in self.changes.pending()] if pending else []
            self._done = True
            return 0
        recovery = self.changes.recover() if pending else Recovery()
        self.stuck = recovery.stuck
        self._done = not any(stuck.transient for stuck in self.stuck)
        self._recheck_at = time.monotonic() + STUCK_RECHECK_SECONDS
        if recovery.done:
            log.info("s3memory: completed %d interrupted change(s)", recovery.done)
        if strict and self.stuck:
            raise blocked(self.stuck[0])
        return recovery.done
