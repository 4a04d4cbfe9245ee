"""Settings from `S3MEMORY_*` environment variables (pydantic-settings), and the clients they imply.

`StorageSettings` is what every command needs (where the memories are, how to reach them);
`Settings` adds the key source, limits and guard that reading and writing memory files need.
Commands that never decrypt (agents, purge, prune) take `StorageSettings`, so they ask for no key.
Every default comes from `core.limits`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .core import limits as defaults
from .core.guard import GuardMode
from .core.mounts import parse_env
from .core.names import NameMode
from .core.options import AgentOptions, MemoryOptions
from .core.paths import validate_prefix

if TYPE_CHECKING:
    from botocore.config import Config
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_s3 import S3Client

    from .core.limits import Limits
    from .storage.keys import Keys


class StorageSettings(BaseSettings):
    """Where the memories are and how to reach them. Secrets are `SecretStr` and never printed."""

    # hide_input_in_errors: a validation error must never echo S3MEMORY_LOCAL_KEY (or any input).
    model_config = SettingsConfigDict(env_prefix="S3MEMORY_", extra="ignore", frozen=True, hide_input_in_errors=True)

    bucket: str = Field(min_length=3, max_length=63, description="S3 bucket holding the memories")
    prefix: str = Field("", description='key prefix before the agent id: "" or ending with "/"')
    endpoint_url: str | None = Field(None, description="S3/KMS endpoint for S3-compatible stores")
    region: str | None = None
    profile: str | None = None
    agent_role_arn: str | None = Field(None, description="role assumed per agent (see assume_agent_session)")
    keystore_bucket: str | None = Field(
        None, min_length=3, max_length=63, description="bucket for the agents' branch keys (default: the memory bucket)"
    )
    fence_seconds: float = Field(
        defaults.DEFAULT_FENCE_WAIT_SECONDS,
        ge=0,
        description="how long purge, shred and migrate wait for running tools to see them before they act",
    )
    max_workers: int = Field(defaults.DEFAULT_MAX_WORKERS, ge=1, le=defaults.MAX_WORKERS)
    max_attempts: int = Field(defaults.DEFAULT_MAX_ATTEMPTS, ge=1, le=20)
    request_checksum_calculation: Literal["when_supported", "when_required"] | None = Field(
        None, description="botocore's request checksums; when_required for stores that refuse them"
    )
    response_checksum_validation: Literal["when_supported", "when_required"] | None = Field(
        None, description="botocore's response checksum validation"
    )

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        return validate_prefix(value)

    def botocore_config(self) -> Config:
        from .storage.clients import botocore_config

        return botocore_config(
            max_attempts=self.max_attempts,
            max_workers=self.max_workers,
            request_checksum_calculation=self.request_checksum_calculation,
            response_checksum_validation=self.response_checksum_validation,
        )

    def clients(self, agent_id: str | None = None) -> tuple[S3Client, KMSClient]:
        """S3 and KMS clients. With `agent_role_arn` and an agent id, they act as that agent
        through `assume_agent_session`, so IAM (not only this library) confines them to the
        agent's prefix and data keys."""
        import boto3

        from .storage.clients import client

        session = boto3.session.Session(profile_name=self.profile, region_name=self.region)
        config = self.botocore_config()
        if self.agent_role_arn and agent_id is not None:
            from .storage.sts import assume_agent_session

            sts = client("sts", session=session, endpoint_url=self.endpoint_url, config=config)
            session = assume_agent_session(
                self.agent_role_arn, agent_id, sts_client=sts, region_name=self.region or session.region_name
            )
        s3 = client("s3", session=session, endpoint_url=self.endpoint_url, config=config)
        kms = client("kms", session=session, endpoint_url=self.endpoint_url, config=config)
        return s3, kms


class Settings(StorageSettings):
    """Everything s3memory reads from the environment: storage, the key source, limits and guard."""

    kms_key_id: str | None = Field(None, description="KMS key id, ARN or alias for data keys")
    local_key: SecretStr | None = Field(None, description="base64 32-byte local master key (dev/tests)")
    max_file_bytes: int = Field(defaults.DEFAULT_MAX_FILE_BYTES, gt=0)
    max_view_chars: int = Field(defaults.DEFAULT_MAX_VIEW_CHARS, ge=defaults.MIN_VIEW_CHARS)
    max_agent_bytes: int | None = Field(None, gt=0)
    max_agent_files: int | None = Field(defaults.DEFAULT_MAX_AGENT_FILES, gt=0)
    held_files: int = Field(
        defaults.DEFAULT_HELD_FILES, ge=0, description="files a tool holds after reading or writing them (0: none)"
    )
    guard: GuardMode = "block"
    key_cache_seconds: float = Field(
        defaults.DEFAULT_KEY_CACHE_SECONDS, gt=0, description="how long unwrapped keys and keystore listings are reused"
    )
    key_rotation_days: float = Field(
        defaults.DEFAULT_KEY_ROTATION_DAYS, gt=0, description="age at which a new branch key becomes active"
    )
    log_paths: bool = Field(False, description="put each command's memory path in its log record")
    track_access: bool = Field(False, description="tag each file with the day it was last read or written")
    actor: str | None = Field(
        None, min_length=1, max_length=128, description="who writes, recorded (encrypted) in every object written"
    )
    names: NameMode = Field(
        NameMode.PLAIN, description="store file and directory names in clear or encrypted (see `s3memory migrate`)"
    )
    mounts: str = Field(
        "", description='shared stores shown at /memories/NAME/: "NAME=STORE:ro,NAME=STORE:rw" (see docs/stores.md)'
    )

    @field_validator("mounts")
    @classmethod
    def _mounts(cls, value: str) -> str:
        parse_env(value)
        return value

    @field_validator("names")
    @classmethod
    def _names(cls, value: NameMode) -> NameMode:
        return NameMode.setting(value)

    @model_validator(mode="after")
    def _one_key_source(self) -> Settings:
        if (self.kms_key_id is None) == (self.local_key is None):
            raise ValueError("set exactly one of S3MEMORY_KMS_KEY_ID or S3MEMORY_LOCAL_KEY")
        if self.local_key is not None:
            self.local_key_bytes()
        return self

    def local_key_bytes(self) -> bytes:
        assert self.local_key is not None
        try:
            raw = base64.b64decode(self.local_key.get_secret_value(), validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("S3MEMORY_LOCAL_KEY must be base64") from None
        if len(raw) != 32:
            raise ValueError("S3MEMORY_LOCAL_KEY must decode to 32 bytes")
        return raw

    def limits(self) -> Limits:
        """The command limits these settings name (file size, view size, quotas)."""
        from .core.limits import Limits

        return Limits(
            self.max_file_bytes, self.max_view_chars, self.max_agent_bytes, self.max_agent_files, self.held_files
        )

    def agent_options(self) -> AgentOptions:
        """How the agents' objects are stored, as these settings say."""
        return AgentOptions(
            self.prefix, self.keystore_bucket, self.key_rotation_days, self.actor, self.track_access, self.names
        )

    def memory_options(self) -> MemoryOptions:
        """How the commands run, as these settings say."""
        return MemoryOptions(self.limits(), self.guard, self.max_workers, self.log_paths, parse_env(self.mounts))

    def keys(self, kms_client: KMSClient | None = None) -> Keys:
        from .storage.keys import LocalKeys
        from .storage.kms import KmsKeys

        if self.local_key is not None:
            return LocalKeys(self.local_key_bytes(), cache_ttl=self.key_cache_seconds)
        assert self.kms_key_id is not None
        return KmsKeys(self.kms_key_id, kms_client=kms_client, cache_ttl=self.key_cache_seconds)


def settings_problem(err: ValidationError, flags: Mapping[str, str] | None = None) -> str:
    """`configuration: S3MEMORY_BUCKET is required; ...`: each invalid setting by its variable (and,
    from the CLI, its flag), never its value."""
    parts = []
    for item in err.errors(include_url=False, include_input=False):
        msg = str(item.get("msg", "invalid")).removeprefix("Value error, ")
        loc = item.get("loc") or ()
        if loc:
            field = str(loc[0])
            flag = (flags or {}).get(field)
            name = f"S3MEMORY_{field.upper()}" + (f" ({flag})" if flag else "")
            msg = f"{name} is required" if item.get("type") == "missing" else f"{name}: {msg}"
        parts.append(msg)
    return "configuration: " + "; ".join(parts)
