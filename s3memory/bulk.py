"""Directory rename and recursive delete, made crash-consistent by an intent record.

S3 has no transactions, so a multi-object change first writes an *intent record* (a sealed
JSON object under `{agent}/.s3memory/intents/`, created with If-None-Match) that lists every
source key with its ETag. Then:

- rename: every file is copied (re-encrypted for its new path, since the ciphertext is bound
  to the path) in parallel, and only once every copy exists are the sources deleted;
- delete: the listed keys are deleted in batches of 1,000.

Finally the intent record is deleted. An interrupted operation is always *rolled forward*:
`recover()` replays any intent record it finds with the same idempotent steps, so a crash at
any S3 call leaves every file readable at its old or new path, and the next command
completes the change. Completing is safe even while the original process is still running:
every step is idempotent and copies never overwrite a different file.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from .errors import IntegrityError, NotFound, PreconditionFailed, StorageError
from .paths import RESERVED_SEGMENT, MemoryPath
from .store import ObjectInfo
from .vault import Vault

INTENTS = MemoryPath((RESERVED_SEGMENT, "intents"))
_MOVE_ATTEMPTS = 3


@dataclass(frozen=True)
class Intent:
    """What a multi-object operation is about to do. `items` are (relative key, source ETag)."""

    op: str  # "rename" or "delete"
    src: MemoryPath
    dst: MemoryPath | None
    items: tuple[tuple[str, str], ...]

    def to_json(self) -> str:
        return json.dumps(
            {
                "v": 1,
                "op": self.op,
                "src": list(self.src.segments),
                "dst": None if self.dst is None else list(self.dst.segments),
                "items": [list(item) for item in self.items],
            },
            separators=(",", ":"),
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> Intent:
        try:
            data = json.loads(text)
            op = data["op"]
            if data["v"] != 1 or op not in ("rename", "delete"):
                raise ValueError(op)
            dst = None if data["dst"] is None else MemoryPath(tuple(map(str, data["dst"])))
            items = tuple((str(k), str(e)) for k, e in data["items"])
            return cls(op, MemoryPath(tuple(map(str, data["src"]))), dst, items)
        except (KeyError, TypeError, ValueError):
            raise IntegrityError() from None


class Bulk:
    """Multi-object operations of one agent, parallel on `executor`."""

    def __init__(self, vault: Vault, executor: Executor) -> None:
        self.vault = vault
        self.executor = executor

    # -- entry points --
    def rename_dir(self, src: MemoryPath, dst: MemoryPath, listing: Sequence[ObjectInfo]) -> None:
        items = tuple((obj.key[len(self.vault.dir_prefix(src)) :], obj.etag) for obj in listing)
        intent = Intent("rename", src, dst, items)
        record = self._write_intent(intent)
        self._apply(intent)
        self.vault.store.delete(self.vault.key(record))

    def delete_dir(self, src: MemoryPath, listing: Sequence[ObjectInfo]) -> None:
        items = tuple((obj.key[len(self.vault.dir_prefix(src)) :], obj.etag) for obj in listing)
        intent = Intent("delete", src, None, items)
        record = self._write_intent(intent)
        self._apply(intent)
        self.vault.store.delete(self.vault.key(record))

    def recover(self) -> int:
        """Complete every interrupted operation recorded for this agent; returns how many."""
        prefix = self.vault.dir_prefix(INTENTS)
        done = 0
        for obj in sorted(self.vault.store.list_all(prefix), key=lambda o: (o.last_modified is None, o.key)):
            record = self.vault.path_of(obj.key)
            if record is None:
                continue
            try:
                text, _ = self.vault.read(record)
                intent = Intent.from_json(text)
            except NotFound:
                continue  # finished by its own process meanwhile
            except IntegrityError:
                continue  # not ours to act on; `verify` reports it
            self._apply(intent)
            self.vault.store.delete(obj.key)
            done += 1
        return done

    # -- steps --
    def _write_intent(self, intent: Intent) -> MemoryPath:
        record = INTENTS.child(uuid.uuid4().hex)
        self.vault.write(record, intent.to_json(), if_none_match=True)
        return record

    def _apply(self, intent: Intent) -> None:
        src_prefix = self.vault.dir_prefix(intent.src)
        if intent.op == "delete":
            failed = self.vault.store.delete_many([(src_prefix + rel, None) for rel, _ in intent.items])
            if failed:
                raise StorageError(sorted(set(failed.values()))[0], "DeleteObjects")
            return
        assert intent.dst is not None
        moves = [(intent.src.join(rel), intent.dst.join(rel)) for rel, _ in intent.items]
        etags = self._parallel(lambda m: self._ensure_copied(*m), moves)
        # Delete each source only in the version that was copied (ETag condition), so an
        # edit that lands during the move is never deleted unseen.
        deletable = [(self.vault.key(s), etag) for (s, _), etag in zip(moves, etags, strict=True) if etag]
        failed = self.vault.store.delete_many(deletable)
        hard = {code for code in failed.values() if code != "PreconditionFailed"}
        if hard:
            raise StorageError(sorted(hard)[0], "DeleteObjects")

    def _ensure_copied(self, src: MemoryPath, dst: MemoryPath) -> str | None:
        """Make `dst` hold `src`'s text; return the source ETag that may now be deleted.

        None means there is nothing to delete: the source is already gone (moved before), or
        the destination exists with other content, which this operation did not write, so the
        source is kept and nothing is lost.
        """
        for _ in range(_MOVE_ATTEMPTS):
            try:
                text, etag = self.vault.read(src)
            except NotFound:
                return None
            try:
                self.vault.write(dst, text, if_none_match=True)
                return etag
            except PreconditionFailed:
                try:
                    existing, _ = self.vault.read(dst)
                except NotFound:
                    continue
                return etag if existing == text else None
        return None

    def _parallel(
        self,
        fn: Callable[[tuple[MemoryPath, MemoryPath]], str | None],
        items: list[tuple[MemoryPath, MemoryPath]],
    ) -> list[str | None]:
        futures = [self.executor.submit(fn, item) for item in items]
        results: list[str | None] = []
        error: BaseException | None = None
        for future in futures:  # wait for all, so nothing runs on after we report
            try:
                results.append(future.result())
            except BaseException as exc:
                error = error or exc
                results.append(None)
        if error is not None:
            raise error
        return results
