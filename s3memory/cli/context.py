"""What every CLI command shares: settings from flags and S3MEMORY_*, the connection, output.

Results and summaries go to stdout (with --json, JSON alone goes there, and the lines and the
summary a command prints without it go to stderr); progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from s3memory.config import Settings, StorageSettings
from s3memory.core.names import NameMode
from s3memory.core.paths import owner_name, store_of

from .exits import Failed, UsageError, aws_configuration
from .progress import Countdown, Progress, choose_mode

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_s3 import S3Client

    from s3memory.admin.common import Problem
    from s3memory.storage.admin_store import AdminStore
    from s3memory.storage.concurrency import Pool
    from s3memory.storage.keyspace import AgentKeyspace
    from s3memory.storage.vault import Vault

# Settings field → the flag that overrides it (and names it in messages).
_FLAGS = {
    "bucket": "--bucket",
    "prefix": "--prefix",
    "kms_key_id": "--kms-key-id",
    "local_key": "--local-key",
    "endpoint_url": "--endpoint-url",
    "region": "--region",
    "profile": "--profile",
    "max_workers": "--workers",
}


def _config_message(err: ValidationError) -> str:
    from s3memory.config import settings_problem

    return settings_problem(err, _FLAGS)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    for field in _FLAGS:
        value = getattr(args, "workers" if field == "max_workers" else field, None)
        if value is not None:
            overrides[field] = value
    if getattr(args, "keystore_bucket", None):  # set by `purge`/`shred --replica` for the replica side only
        overrides["keystore_bucket"] = args.keystore_bucket
    if "local_key" in overrides and "kms_key_id" not in overrides:
        overrides["kms_key_id"] = None  # a key source given as a flag replaces the other from the environment
    elif "kms_key_id" in overrides and "local_key" not in overrides:
        overrides["local_key"] = None
    return overrides


def load_settings(args: argparse.Namespace, *, keys: bool = True) -> StorageSettings:
    """Settings from S3MEMORY_* with the flags given; without `keys`, no key source is asked for."""
    overrides = _overrides(args)
    try:
        if keys:
            return Settings(**overrides)
        return StorageSettings(**overrides)  # key-source flags are ignored: nothing is decrypted
    except ValidationError as err:
        raise UsageError(_config_message(err)) from None


_KEY_SOURCES = "S3MEMORY_KMS_KEY_ID or S3MEMORY_LOCAL_KEY"
_NEEDS_KEYS = f"set its key source ({_KEY_SOURCES}) to find a file by its path"


def _key_source(args: argparse.Namespace) -> Settings | None:
    """The settings with a key source if one is configured (and valid), else None."""
    try:
        return Settings(**_overrides(args))
    except ValidationError:
        return None


@dataclass
class Context:
    settings: StorageSettings
    store: AdminStore
    kms: KMSClient
    pool: Pool
    quiet: bool
    key_source: Settings | None = None  # the configured key source, also for commands that need none

    @property
    def full(self) -> Settings:
        """The settings with a key source (for commands connected with `keys=True`)."""
        assert isinstance(self.settings, Settings)
        return self.settings

    def space(self, agent: str, *, need_names: bool = False) -> AgentKeyspace:
        """The agent's key layout for a command that works without keys (purge, shred, prune,
        redact, rewrap), its file names resolved now, before anything is deleted (see `admin.names`):
        plain names; encrypted ones read with the configured key source; or, failing that, each
        key shown as it is stored (a note on stderr says why). One keystore LIST (and, for
        encrypted names, one unwrap of the name key). `need_names`: the command finds files by
        their paths, so names it cannot read are an error instead."""
        from s3memory.errors import AccessDenied, AgentErasing, S3MemoryError, StorageError
        from s3memory.memory.explain import for_cli, is_configuration
        from s3memory.storage.keyspace import AgentKeyspace
        from s3memory.storage.keystore import Keystore
        from s3memory.storage.names import STORED_KEYS, stored_mode, with_codec

        plain = AgentKeyspace(self.settings.prefix, agent)
        source = self.key_source
        try:
            if source is not None:
                return self.vault(agent, settings=source).names.resolved()
            # no key source: it reads the keystore only (and writes nothing)
            mode = stored_mode(Keystore(self.keystore, None, plain, read_only=True))
        except S3MemoryError as err:
            if need_names or (
                isinstance(err, StorageError) and is_configuration(err) and not isinstance(err, AccessDenied)
            ):
                raise  # no bucket, ...: the command itself cannot run either (a denied keystore only hides names)
            why = (
                "an earlier purge or shred of it stopped part-way (its keys may be gone)"
                if isinstance(err, AgentErasing)
                else f"they cannot be read ({for_cli(err)})"
            )
        else:
            if mode is NameMode.PLAIN:
                return plain
            if need_names:
                raise UsageError(f"{owner_name(agent)} stores its file names encrypted; {_NEEDS_KEYS}")
            why = f"they are encrypted and no key source is set ({_KEY_SOURCES})"
        sys.stderr.write(f"note: the file names of {owner_name(agent)} are shown as stored keys: {why}\n")
        return with_codec(plain, STORED_KEYS)

    @property
    def keystore(self) -> AdminStore:
        """The bucket of the agents' branch keys: S3MEMORY_KEYSTORE_BUCKET, else the memory bucket."""
        from s3memory.storage.admin_store import AdminStore

        bucket = self.settings.keystore_bucket
        return self.store if not bucket or bucket == self.store.bucket else AdminStore(self.store.s3, bucket)

    def vault(
        self,
        agent: str,
        *,
        names: NameMode | None = NameMode.AUTO,
        settings: Settings | None = None,
        read_only: bool = True,
    ) -> Vault:
        """The agent's vault with the configured key source and keystore (`settings`: those of a
        command connected without keys). `names`: AUTO (the agent's own name mode, plain for a
        new agent), the mode the agent must be in, or None (any state: `migrate`). Read-only unless
        `read_only=False` (a command that writes): an inspection creates, fills in and repairs no
        keystore record."""
        from s3memory.storage.session import open_vault

        full = settings or self.full
        return open_vault(
            self.store, full.keys(self.kms), agent, full.agent_options(), names=names, read_only=read_only
        )

    def writing_vault(self, agent: str, *, stores_names: bool = False) -> Vault:
        """The vault of a command that may create an agent's first key or files (`import`, `rotate`,
        `reseal`): an agent in a name mode stays in it; a new agent takes S3MEMORY_NAMES (default
        plain), as the agent's tools will. `stores_names` (`import`): the command stores file names,
        and S3MEMORY_NAMES=encrypted is then a requirement, as for the tools: an agent that looks
        plain (a bucket writer can make a new agent look so) is refused (`NamesPlain`)."""
        from s3memory.core.names import NameMode
        from s3memory.storage.session import open_vault

        full = self.full
        if stores_names and full.names is NameMode.ENCRYPTED:
            return open_vault(self.store, full.keys(self.kms), agent, full.agent_options(), names=NameMode.ENCRYPTED)
        return open_vault(self.store, full.keys(self.kms), agent, full.agent_options(), new_agent=full.names)

    def require(self, agent: str, *, versions: bool = False) -> None:
        """Exit 1 unless something is stored for `agent` (see `agent_check`): a typo creates no agent."""
        from .agent_check import require_agent

        require_agent(self.store, self.keystore, self.settings.prefix, agent, versions=versions)

    def agent_ids(self, agent: str | None) -> list[str]:
        """`[agent]` (if something is stored for it), or every agent under the prefix."""
        from s3memory.admin.agents import agent_ids

        if agent:
            self.require(agent)
            return [agent]
        return agent_ids(self.store, self.settings.prefix)

    def progress(self, label: str) -> Progress:
        return Progress(label, sys.stderr, choose_mode(sys.stderr, self.quiet))

    def countdown(self, label: str, what: str) -> Countdown:
        """The writers' fence of purge, shred and migrate on stderr (see `progress.Countdown`)."""
        from s3memory.core.limits import WRITE_FENCE_SECONDS

        return Countdown(label, sys.stderr, choose_mode(sys.stderr, self.quiet), what, WRITE_FENCE_SECONDS)


# Builds a command's boto3 clients from its settings and agent id (`StorageSettings.clients` by
# default); `main(clients=...)` passes another on (tests: one that reuses clients, or hooks them).
Clients = Callable[[StorageSettings, str | None], "tuple[S3Client, KMSClient]"]


@contextmanager
def connect(args: argparse.Namespace, *, keys: bool = True) -> Iterator[Context]:
    settings = load_settings(args, keys=keys)
    build: Clients = getattr(args, "clients", None) or StorageSettings.clients
    from botocore.exceptions import BotoCoreError

    from s3memory.storage.admin_store import AdminStore
    from s3memory.storage.concurrency import Pool

    try:
        s3, kms = build(settings, None)
    except BotoCoreError as err:  # unknown profile, no region, ...: the message names no secret
        raise aws_configuration(err) from None
    source = settings if isinstance(settings, Settings) else _key_source(args)
    with Pool(settings.max_workers) as pool:
        quiet = bool(getattr(args, "quiet", False))
        yield Context(settings, AdminStore(s3, settings.bucket), kms, pool, quiet, source)


_JSON = ContextVar("s3memory_cli_json", default=False)  # --json: stdout holds the JSON document alone


@contextmanager
def json_output(on: bool) -> Iterator[None]:
    """While the command runs: with `on` (--json), `say` and `print_summary` write to stderr."""
    token = _JSON.set(on)
    try:
        yield
    finally:
        _JSON.reset(token)


def emit_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def say(line: str = "") -> None:
    (sys.stderr if _JSON.get() else sys.stdout).write(line + "\n")


def print_summary(line: str, as_json: bool | None = None) -> None:
    (sys.stderr if _JSON.get() or as_json else sys.stdout).write(line + "\n")


def problems_json(problems: Sequence[Problem]) -> list[dict[str, str]]:
    """`problems` in a command's JSON: `[{"agent", "path", "reason"}]`."""
    return [{"agent": p.agent, "path": p.path, "reason": p.reason} for p in problems]


def print_problems(problems: Sequence[Problem]) -> None:
    for p in problems:
        say(f"failed: {p.agent}:{p.path}: {p.reason}")


def failed_suffix(problems: Sequence[Problem]) -> str:
    return f"; {len(problems):,} failed" if problems else ""


def can_confirm(args: argparse.Namespace, verb: str) -> None:
    """Refuse (exit 2) a destructive command that would have to ask but cannot: no --yes, no terminal."""
    if not (args.yes or getattr(args, "dry_run", False) or sys.stdin.isatty()):
        what = "agent" if store_of(getattr(args, "agent", None) or "") is None else "store"
        raise UsageError(f"{verb} asks for the {what} id to be typed again, but stdin is not a terminal; pass --yes")


def confirm(
    args: argparse.Namespace, verb: str, warning: str, *, nothing: str = "deleted", bucket: str | None = None
) -> None:
    """Unless --yes: show `warning` and have the agent id typed again; `Failed` if it does not match.

    `nothing`: what the cancellation says did not happen ("deleted", or "changed" for a command
    that rewrites); `bucket`: a command on every agent under the prefix (no --agent) has the
    bucket's name typed instead."""
    if args.yes:
        return
    if args.agent or bucket is None:
        store = store_of(args.agent)
        expected, what = (args.agent, "agent id") if store is None else (store, "store id")
    else:
        expected, what = bucket, "bucket name"
    sys.stderr.write(warning + "\n")
    sys.stderr.write(f"Type the {what} ({expected}) to confirm: ")
    sys.stderr.flush()
    if sys.stdin.readline().strip() != expected:
        typed = "name" if what == "bucket name" else "id"
        raise Failed(f"{verb} cancelled: the typed {typed} does not match; nothing was {nothing}")
