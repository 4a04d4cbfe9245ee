"""boto3 clients as s3memory builds them: one botocore `Config` for every client it makes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from s3memory.core.limits import DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_WORKERS

if TYPE_CHECKING:
    from botocore.config import Config

# Connections beyond the worker count, for the odd request made outside the worker pool.
SPARE_CONNECTIONS = 4


def botocore_config(*, max_attempts: int = DEFAULT_MAX_ATTEMPTS, max_workers: int = DEFAULT_MAX_WORKERS) -> Config:
    """Standard-mode retries, and a connection pool large enough for `max_workers` parallel requests."""
    from botocore.config import Config

    return Config(
        retries={"mode": "standard", "max_attempts": max_attempts},
        max_pool_connections=max_workers + SPARE_CONNECTIONS,
    )


def client(service: str, *, session: Any = None, endpoint_url: str | None = None, config: Config | None = None) -> Any:
    """A boto3 client for `service` ("s3", "kms", "sts") from `session` (default: boto3's)."""
    import boto3

    maker = session if session is not None else boto3
    return maker.client(service, endpoint_url=endpoint_url, config=config or botocore_config())
