"""boto3 clients as s3memory builds them: one botocore `Config` for every client it makes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from s3memory.core.limits import DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_WORKERS

if TYPE_CHECKING:
    from botocore.config import Config

# Connections beyond the worker count, for the odd request made outside the worker pool.
SPARE_CONNECTIONS = 4


def botocore_config(
    *,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    max_workers: int = DEFAULT_MAX_WORKERS,
    request_checksum_calculation: str | None = None,
    response_checksum_validation: str | None = None,
) -> Config:
    """Standard-mode retries, and a connection pool large enough for `max_workers` parallel requests.

    `max_attempts` counts every attempt, the first included (1: no retry). botocore's `retries`
    dict reads `max_attempts` as retries after the first (5 would make 6 attempts), so it is
    passed as `total_max_attempts`, which botocore reads as the total in every retry mode.

    The checksum settings ("when_supported" or "when_required") are passed on when given: boto3
    1.36 and later send and check CRC checksums by default, which some S3-compatible stores refuse.
    """
    from botocore.config import Config

    checksums: dict[str, Any] = {
        name: value
        for name, value in (
            ("request_checksum_calculation", request_checksum_calculation),
            ("response_checksum_validation", response_checksum_validation),
        )
        if value is not None
    }
    return Config(
        retries={"mode": "standard", "total_max_attempts": max_attempts},
        max_pool_connections=max_workers + SPARE_CONNECTIONS,
        **checksums,
    )


def client(service: str, *, session: Any = None, endpoint_url: str | None = None, config: Config | None = None) -> Any:
    """A boto3 client for `service` ("s3", "kms", "sts") from `session` (default: boto3's)."""
    import boto3

    maker = session if session is not None else boto3
    return maker.client(service, endpoint_url=endpoint_url, config=config or botocore_config())
