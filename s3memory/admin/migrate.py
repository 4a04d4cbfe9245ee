"""`migrate`: convert an agent's file names between plain and encrypted, crash-safe and resumable.

1. The agent's name mode becomes `to-{target}` (a create-only keystore entry). From then on every
   tool refuses the agent (`NamesMigrating`). A tool re-reads the keystore before a write once
   the listing it holds is `WRITE_FENCE_SECONDS` old (the writers' fence, `core.limits`), so
   migrate waits `wait` seconds (`S3MEMORY_FENCE_SECONDS`) before it moves anything: after that
   no tool writes under the old encoding (0: the agent's tools are known to be stopped).
2. Every object stored under the other encoding is copied to its key under the target encoding,
   byte for byte (its content is bound to its memory path, which does not change), as a create
   (If-None-Match); then the old key is deleted in the version copied (If-Match). A file written
   at its old key between the copy and the delete (a tool slower than the fence) is moved again;
   when both names hold a file with different content, both are authenticated and the one whose
   sealed (authenticated) change time is newer ends at the new key, the source on a tie (a write
   racing the move lands after the copy): the older stays a prior version of its key in a
   versioned bucket. Then one more listing moves what was written under the old names meanwhile.
3. The agent's name mode becomes `{target}`, tagged under the agent's name key (see
   `storage.keystore_modes`). An agent already in `target` whose mode record cannot be believed
   (written before mode records were tagged, or changed by a bucket writer) is recorded again:
   its files are moved to the target encoding as above, then the mode is claimed, tagged.

A crash leaves every file at its old key, its new key, or both; running migrate again resumes.
Nothing is deleted before its copy exists, and nothing is overwritten unauthenticated. An agent
with interrupted directory changes is refused until `s3memory repair` completes them (their
records name keys in the old encoding), and so is an agent with an unfinished restore (its
versions from before the migration would be stored under the old names, so it could never be
finished): finish it, or end it with `repair --abandon`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from s3memory.core import paths
from s3memory.core.envelope import Header
from s3memory.core.names import PLAIN, NameMode
from s3memory.core.paths import MemoryPath, owner_flag, owner_name
from s3memory.errors import (
    AgentErasing,
    CommandError,
    IntegrityError,
    KeyUnavailable,
    NotFound,
    PreconditionFailed,
    StorageError,
)
from s3memory.memory.explain import for_report
from s3memory.memory.intents import INTENTS
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.names import STORED_KEYS, with_codec
from s3memory.storage.store import StoredObject
from s3memory.storage.vault import Vault

from .audit import record_migration
from .common import Problem, Tracker, is_folder_marker
from .purge import CalledOff, Countdown, fence_wait
from .restore import unfinished

_MIGRATE_AGAIN = "run `s3memory migrate` again to finish the migration an earlier run began"


@dataclass
class MigrateReport:
    target: str
    moved: int = 0
    newer_kept: int = 0  # files written at both names meanwhile: the newer copy kept (see the module's doc)
    already: int = 0  # already stored under the target encoding
    finished: bool = False  # the agent is now in the target mode
    problems: list[Problem] = field(default_factory=list)


@dataclass(frozen=True)
class _Layouts:
    plain: AgentKeyspace
    encrypted: AgentKeyspace

    def target(self, mode: NameMode) -> AgentKeyspace:
        return self.encrypted if mode == "encrypted" else self.plain

    def path_of(self, key: str) -> tuple[MemoryPath, bool] | None:
        """The memory path a key stands for and whether its names are encrypted (None: neither)."""
        encrypted = self.encrypted.path_of(key)
        if encrypted is not None:
            return encrypted, True
        plain = paths.path_of_key(self.plain.root, key)
        if plain is None:
            return None
        try:  # a plain key must name a path the model could have named
            return self.plain.parse(plain.display), False
        except CommandError:
            return None


def migrate(
    vault: Vault,
    target: NameMode,
    pool: Pool,
    tracker: Tracker,
    *,
    wait: float = 0.0,
    countdown: Countdown | None = None,
) -> MigrateReport:
    """Convert the agent of `vault` to `target` names (see the module's doc). Raises `CommandError`
    for an agent that cannot be migrated now; per-file failures are in the report's problems."""
    if vault.names.need is not None:
        raise ValueError("migrate needs a vault opened with names=None (it handles both encodings itself)")
    space = vault.space
    if vault.store.exists_under(vault.dir_prefix(INTENTS)):
        raise CommandError(f"{owner_name(vault.agent_id)} has interrupted directory changes; run s3memory repair first")
    pending = unfinished(vault)
    if pending is not None:
        raise CommandError(
            f"{owner_name(vault.agent_id)} has an unfinished restore (to {pending.at}); finish it first: "
            f"{pending.command(vault.agent_id)}, or end it: s3memory repair {owner_flag(vault.agent_id)} --abandon"
        )
    ring = vault.keystore.ring(refresh=True)
    if ring.erasing:
        raise AgentErasing()
    # The mode as recorded, believed or not: a record that cannot be believed (a bucket writer's,
    # or one written before mode records were tagged) is recorded again, tagged, at the end.
    recorded = vault.keystore.names_record(ring)
    seq, mode = (1, "plain") if recorded is None else recorded[:2]  # mode 1 is claimed with generation 1
    unauthenticated = bool(vault.keystore.mode_problem(ring))
    report = MigrateReport(target)
    # A plain agent that never had a name key needs none to stay plain (no file can be encrypted).
    needs_key = ring.name_claimed or target == "encrypted" or mode != "plain"
    layouts = _Layouts(with_codec(space, PLAIN), with_codec(space, vault.names.cipher() if needs_key else STORED_KEYS))
    began_from = None  # the mode this run moved the agent away from (None: an earlier run did)
    if mode != target and mode != f"to-{target}":
        began_from = mode if mode in ("plain", "encrypted") and not unauthenticated else None
        seq, mode = vault.keystore.claim_names(seq + 1, f"to-{target}")
        if mode != f"to-{target}":
            raise _changed(vault.agent_id, mode)
    if mode != target:
        record_migration(vault, seq, NameMode(target).value)  # who migrates, for `history`
        try:
            fence_wait(wait, countdown)  # every tool re-reads the keystore before its next write, and refuses
        except KeyboardInterrupt:  # Ctrl-C before anything moved: the agent's mode as it was
            if began_from is None:
                raise CalledOff(f"interrupted during the wait; nothing was moved; {_MIGRATE_AGAIN}") from None
            vault.keystore.claim_names(seq + 1, began_from)
            who = owner_name(vault.agent_id)
            raise CalledOff(
                f"interrupted during the wait; nothing was moved, the names of {who} stay {began_from}"
            ) from None
    failed: set[str] = set()
    for sweep in range(2):  # the second: what a tool slower than the fence wrote under the old names meanwhile
        todo = _todo(vault, layouts, target, report, tracker, failed, count=sweep == 0)
        _move_all(vault, layouts.target(target), todo, pool, report, tracker, failed)
    if not report.problems and (mode != target or unauthenticated):
        in_force = vault.keystore.claim_names(seq + 1, target)
        if in_force[1] != target:
            raise _changed(vault.agent_id, in_force[1])
    report.finished = not report.problems
    report.problems.sort()
    return report


def _todo(
    vault: Vault, layouts: _Layouts, target: NameMode, report: MigrateReport, tracker: Tracker, failed: set[str],
    *, count: bool,
) -> list[tuple[str, MemoryPath]]:  # fmt: skip
    """The objects still stored under the other encoding (one listing), but for those whose move
    `failed`; `count`: the first sweep counts what is already in place and reports what maps to no
    memory path."""
    space = vault.space
    objects = [
        o for o in vault.store.list_all(vault.root) if not is_folder_marker(o) and not space.is_bookkeeping(o.key)
    ]
    todo: list[tuple[str, MemoryPath]] = []
    if count:
        tracker.start(len(objects))
    for obj in objects:
        found = layouts.path_of(obj.key)
        if found is None:
            if count:
                shown = layouts.plain.shown(obj.key)
                report.problems.append(Problem(vault.agent_id, shown, "not a memory path in either mode"))
                tracker.advance()
        elif found[1] == (target == "encrypted"):
            if count:
                report.already += 1
                tracker.advance()
        elif obj.key not in failed:
            if not count:
                tracker.start(1)
            todo.append((obj.key, found[0]))
    return todo


def _move_all(
    vault: Vault, destination: AgentKeyspace, todo: list[tuple[str, MemoryPath]], pool: Pool, report: MigrateReport,
    tracker: Tracker, failed: set[str],
) -> None:  # fmt: skip
    for (key, path), future in pool.completed(
        lambda item: _move(vault, item[0], destination.key(item[1]), item[1]), todo
    ):
        try:
            kept_newer = future.result()
        except (StorageError, KeyUnavailable, IntegrityError, CommandError) as err:
            report.problems.append(Problem(vault.agent_id, path.display, for_report(err)))
            failed.add(key)
        else:
            report.moved += 1
            report.newer_kept += kept_newer
        tracker.advance()


def _changed(agent: str, mode: str) -> CommandError:
    return CommandError(f"another process changed the name mode of {agent} meanwhile (now {mode}); run migrate again")


MOVE_ATTEMPTS = 3


def _move(vault: Vault, old: str, new: str, path: MemoryPath) -> bool:
    """Copy `old` to `new` (create-only, same bytes, same tags) and delete `old` in that version.
    True if both names held a file with different content (the newer was kept at `new`)."""
    resolved = False
    for _ in range(MOVE_ATTEMPTS):
        try:
            obj = vault.store.get(old)
        except NotFound:
            return resolved  # moved by an earlier run (or deleted) meanwhile
        tags = vault.store.get_tags(old)
        try:
            vault.store.put(new, obj.body, obj.metadata, if_none_match=True, tags=tags or None)
        except PreconditionFailed:
            existing = vault.store.get(new)
            if existing.body != obj.body or existing.metadata != obj.metadata:
                resolved = True
                if _changed_at(vault, path, obj) >= _changed_at(vault, path, existing):
                    try:  # the source is newer: it goes over the copy, which stays a prior version
                        vault.store.put(new, obj.body, obj.metadata, if_match=existing.etag, tags=tags or None)
                    except PreconditionFailed:
                        continue  # the new key changed meanwhile: look again
        try:
            vault.store.delete(old, if_match=obj.etag)
            return resolved
        except PreconditionFailed:
            continue  # written while it was being moved: move it again
    raise CommandError("it kept changing while it was being moved; run migrate again")


def _changed_at(vault: Vault, path: MemoryPath, obj: StoredObject) -> int:
    """The sealed change time of `obj` as the file at `path`, authenticated (`IntegrityError` if it
    does not open: nothing is overwritten or deleted on the word of an unauthenticated header)."""
    vault.open(path, obj)
    return Header.from_metadata(obj.metadata).modified or 0
