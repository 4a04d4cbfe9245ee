"""Settings from `S3MEMORY_*` environment variables (pydantic-settings), and the clients they imply."""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .guard import GuardMode
from .paths import validate_prefix

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient
    from mypy_boto3_s3 import S3Client

    from .commands import Limits
    from .keys import Keys


class Settings(BaseSettings):
    """Everything s3memory reads from the environment. Secrets are `SecretStr` and never printed."""

    model_config = SettingsConfigDict(env_prefix="S3MEMORY_", extra="ignore", frozen=True)

    bucket: str = Field(min_length=3, max_length=63, description="S3 bucket holding the memories")
    prefix: str = Field("", description='key prefix before the agent id: "" or ending with "/"')
    kms_key_id: str | None = Field(None, description="KMS key id, ARN or alias for data keys")
    local_key: SecretStr | None = Field(None, description="base64 32-byte local master key (dev/tests)")
    endpoint_url: str | None = Field(None, description="S3/KMS endpoint for S3-compatible stores")
    region: str | None = None
    profile: str | None = None
    agent_role_arn: str | None = Field(None, description="role assumed per agent (see assume_agent_session)")
    max_file_bytes: int = Field(1024 * 1024, gt=0)
    max_view_chars: int = Field(100_000, ge=1000)
    max_agent_bytes: int | None = Field(None, gt=0)
    max_agent_files: int | None = Field(None, gt=0)
    guard: GuardMode = "block"
    key_cache_seconds: float = Field(300.0, gt=0)
    key_cache_objects: int = Field(1000, gt=0)
    max_workers: int = Field(16, ge=1, le=256)
    max_attempts: int = Field(5, ge=1, le=20)

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        return validate_prefix(value)

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
        from .commands import Limits

        return Limits(self.max_file_bytes, self.max_view_chars, self.max_agent_bytes, self.max_agent_files)

    # -- clients --
    def botocore_config(self) -> Any:
        from botocore.config import Config

        return Config(
            retries={"mode": "standard", "max_attempts": self.max_attempts},
            max_pool_connections=self.max_workers + 4,
        )

    def clients(self, agent_id: str | None = None) -> tuple[S3Client, KMSClient]:
        """S3 and KMS clients. With `agent_role_arn` and an agent id, they act as that agent
        through `assume_agent_session`, so IAM (not only this library) confines them to the
        agent's prefix and data keys."""
        import boto3

        session = boto3.session.Session(profile_name=self.profile, region_name=self.region)
        if self.agent_role_arn and agent_id is not None:
            from .sts import assume_agent_session

            sts = session.client("sts", endpoint_url=self.endpoint_url, config=self.botocore_config())
            session = assume_agent_session(
                self.agent_role_arn, agent_id, sts_client=sts, region_name=self.region or session.region_name
            )
        config = self.botocore_config()
        s3 = session.client("s3", endpoint_url=self.endpoint_url, config=config)
        kms = session.client("kms", endpoint_url=self.endpoint_url, config=config)
        return s3, kms

    def keys(self, kms_client: KMSClient | None = None) -> Keys:
        from .keys import KmsKeys, LocalKeys

        cache: dict[str, Any] = {
            "max_key_age": self.key_cache_seconds,
            "max_key_uses": self.key_cache_objects,
        }
        if self.local_key is not None:
            return LocalKeys(self.local_key_bytes(), **cache)
        assert self.kms_key_id is not None
        return KmsKeys(self.kms_key_id, kms_client=kms_client, **cache)
