"""`migrate`: convert an agent's file names between plain and encrypted, crash-safe and resumable.

1. The agent's name mode becomes `to-{target}` (a create-only keystore entry). From then on every
   tool refuses the agent (`NamesMigrating`); a tool that read the keystore before keeps its view
   for as long as it caches it (S3MEMORY_KEY_CACHE_SECONDS, 5 minutes by default), so stop the
   agent's tools first, or run migrate again after that time.
2. Every object stored under the other encoding is copied to its key under the target encoding,
   byte for byte (its content is bound to its memory path, which does not change), as a create
   (If-None-Match); then the old key is deleted in the version copied (If-Match).
3. The agent's name mode becomes `{target}`.

A crash leaves every file at its old key, its new key, or both with the same bytes; running
migrate again resumes (a copy that already exists with the same bytes only deletes the old key).
Nothing is deleted before its copy exists. An agent with interrupted directory changes is
refused until `s3memory repair` completes them (their records name keys in the old encoding), and
so is an agent with an unfinished restore (its versions from before the migration would be stored
under the old names, so it could never be finished): finish it, or end it with `repair --abandon`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from s3memory.core import paths
from s3memory.core.names import PLAIN, NameMode
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError, KeyUnavailable, NotFound, PreconditionFailed, StorageError
from s3memory.memory.explain import for_report
from s3memory.memory.intents import INTENTS
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.names import with_codec
from s3memory.storage.vault import Vault

from .common import Problem, Tracker, is_folder_marker
from .restore import unfinished


@dataclass
class MigrateReport:
    target: str
    moved: int = 0
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


def migrate(vault: Vault, target: NameMode, pool: Pool, tracker: Tracker) -> MigrateReport:
    """Convert the agent of `vault` to `target` names (see the module's doc). Raises `CommandError`
    for an agent that cannot be migrated now; per-file failures are in the report's problems."""
    if vault.names.need is not None:
        raise ValueError("migrate needs a vault opened with names=None (it handles both encodings itself)")
    space = vault.space
    if vault.store.exists_under(vault.dir_prefix(INTENTS)):
        raise CommandError(f"agent {vault.agent_id} has interrupted directory changes; run s3memory repair first")
    pending = unfinished(vault)
    if pending is not None:
        raise CommandError(
            f"agent {vault.agent_id} has an unfinished restore (to {pending.at}); finish it first: "
            f"{pending.command(vault.agent_id)}, or end it: s3memory repair --agent {vault.agent_id} --abandon"
        )
    state = vault.keystore.names_state(vault.keystore.ring(refresh=True))
    seq, mode = (1, "plain") if state is None else state  # mode 1 is claimed with generation 1
    report = MigrateReport(target)
    layouts = _Layouts(with_codec(space, PLAIN), with_codec(space, vault.names.cipher()))
    if mode != target and mode != f"to-{target}":
        seq, mode = vault.keystore.claim_names(seq + 1, f"to-{target}")
        if mode != f"to-{target}":
            raise _changed(vault.agent_id, mode)
    objects = [
        o for o in vault.store.list_all(vault.root) if not is_folder_marker(o) and not space.is_bookkeeping(o.key)
    ]
    tracker.start(len(objects))
    todo: list[tuple[str, MemoryPath]] = []
    for obj in objects:
        found = layouts.path_of(obj.key)
        if found is None:
            report.problems.append(
                Problem(vault.agent_id, layouts.plain.shown(obj.key), "not a memory path in either mode")
            )
            tracker.advance()
        elif found[1] == (target == "encrypted"):
            report.already += 1
            tracker.advance()
        else:
            todo.append((obj.key, found[0]))

    destination = layouts.target(target)
    for (_, path), future in pool.completed(lambda item: _move(vault, item[0], destination.key(item[1])), todo):
        try:
            future.result()
        except (StorageError, KeyUnavailable, CommandError) as err:
            report.problems.append(Problem(vault.agent_id, path.display, for_report(err)))
        else:
            report.moved += 1
        tracker.advance()
    if not report.problems and mode != target:
        in_force = vault.keystore.claim_names(seq + 1, target)
        if in_force[1] != target:
            raise _changed(vault.agent_id, in_force[1])
    report.finished = not report.problems
    report.problems.sort()
    return report


def _changed(agent: str, mode: str) -> CommandError:
    return CommandError(f"another process changed the name mode of {agent} meanwhile (now {mode}); run migrate again")


def _move(vault: Vault, old: str, new: str) -> None:
    """Copy `old` to `new` (create-only, same bytes, same tags) and delete `old` in that version."""
    try:
        obj = vault.store.get(old)
    except NotFound:
        return  # moved by an earlier run (or deleted) meanwhile
    tags = vault.store.get_tags(old)
    try:
        vault.store.put(new, obj.body, obj.metadata, if_none_match=True, tags=tags or None)
    except PreconditionFailed:
        existing = vault.store.get(new)
        if existing.body != obj.body or existing.metadata != obj.metadata:
            raise CommandError("both of its names hold a file, with different content; both were kept") from None
    try:
        vault.store.delete(old, if_match=obj.etag)
    except PreconditionFailed:
        raise CommandError("it was written while it was being moved; run migrate again") from None
