"""What a fleet worker builds once per process and reuses for every agent of every batch: settings,
boto3 clients, the stores and a thread pool (building clients per agent cost half an agent's time)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from s3memory.config import Settings, StorageSettings
from s3memory.core.names import NameMode
from s3memory.storage.admin_store import AdminStore
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.keystore import Keystore
from s3memory.storage.names import STORED_KEYS, stored_mode, with_codec
from s3memory.storage.session import open_vault

if TYPE_CHECKING:
    from s3memory.storage.vault import Vault

# Builds the S3 and KMS clients from the settings (default `StorageSettings.clients`).
Clients = Callable[[StorageSettings], "tuple[Any, Any]"]


class FleetConfigError(ValueError):
    """The worker's configuration is incomplete: the message names the variable to set."""


def load_settings(overrides: dict[str, Any] | None = None) -> StorageSettings:
    """`Settings` (with a key source) if S3MEMORY_* configure one, else `StorageSettings`."""
    given = dict(overrides or {})
    try:
        return Settings(**given)
    except ValidationError:
        pass
    try:
        return StorageSettings(**given)
    except ValidationError as err:
        names = sorted({f"S3MEMORY_{str(e['loc'][0]).upper()}" for e in err.errors() if e.get("loc")})
        raise FleetConfigError(f"fleet worker configuration: check {', '.join(names) or 'S3MEMORY_*'}") from None


@dataclass
class Runtime:
    settings: StorageSettings
    s3: Any
    kms: Any
    store: AdminStore
    pool: Pool
    markers: ThreadPoolExecutor  # writes the results' markers while the next agent runs

    @classmethod
    def build(cls, settings: StorageSettings, clients: Clients | None = None) -> Runtime:
        s3, kms = (clients or StorageSettings.clients)(settings)
        markers = ThreadPoolExecutor(4, thread_name_prefix="s3memory-fleet-results")
        return cls(settings, s3, kms, AdminStore(s3, settings.bucket), Pool(settings.max_workers), markers)

    @property
    def prefix(self) -> str:
        return self.settings.prefix

    @property
    def keyed(self) -> Settings:
        """The settings with their key source; `FleetConfigError` for a job that needs one."""
        if not isinstance(self.settings, Settings):
            raise FleetConfigError("this job decrypts: set S3MEMORY_KMS_KEY_ID (or S3MEMORY_LOCAL_KEY)")
        return self.settings

    @property
    def keystore(self) -> AdminStore:
        bucket = self.settings.keystore_bucket
        return self.store if not bucket or bucket == self.store.bucket else AdminStore(self.s3, bucket)

    def vault(self, owner: str, *, writing: bool = False) -> Vault:
        """The owner's vault (`writing`: an agent with no key yet takes S3MEMORY_NAMES, as the CLI's).
        Otherwise read-only, as the CLI's inspection vault: it fills in and repairs nothing (the
        audit role may not write the keystore; it reads the claim of an untagged entry instead)."""
        full = self.keyed
        keys = full.keys(self.kms)
        if writing:
            return open_vault(self.store, keys, owner, full.agent_options(), new_agent=full.names)
        return open_vault(self.store, keys, owner, full.agent_options(), names=NameMode.AUTO, read_only=True)

    def space(self, owner: str) -> AgentKeyspace:
        """The owner's key layout with its names resolved, as the single-agent commands resolve it
        (`cli.context.Context.space`): read with the key source if there is one; else plain names
        are plain and encrypted ones are shown as stored keys (which keys are deleted is the same)."""
        plain = AgentKeyspace(self.prefix, owner)
        if isinstance(self.settings, Settings):
            return self.vault(owner).names.resolved()
        if stored_mode(Keystore(self.keystore, None, plain)) is NameMode.PLAIN:
            return plain
        return with_codec(plain, STORED_KEYS)

    def close(self) -> None:
        self.markers.shutdown(wait=True)
        self.pool.__exit__(None, None, None)
