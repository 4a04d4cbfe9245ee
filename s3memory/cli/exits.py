"""Exit codes and the two errors every CLI command may raise; `main` maps them to exit codes."""

from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130
PROG = "s3memory"


class UsageError(Exception):
    """Bad arguments or configuration: exit 2. The message names the flag or variable to fix."""


class Failed(Exception):
    """The operation ran and failed (or was cancelled): exit 1."""


def aws_configuration(err: Exception) -> UsageError:
    """botocore's configuration error (no region, unknown profile, ...) as a usage error naming what to set."""
    if type(err).__name__ == "NoRegionError":
        return UsageError("AWS configuration: no AWS region is set; set S3MEMORY_REGION (--region) or AWS_REGION")
    return UsageError(f"AWS configuration: {err}")


_UNREACHABLE = {"EndpointConnectionError", "ConnectTimeoutError", "ConnectionClosedError", "ReadTimeoutError"}


def endpoint_hint(err: BaseException, endpoint_url: str | None) -> str:
    """For a failure to reach the S3 or KMS endpoint: which endpoint, and the setting that chooses it."""
    if getattr(err, "code", "") not in _UNREACHABLE:
        return ""
    if endpoint_url:
        return f" (endpoint {endpoint_url}: check that it is up, or S3MEMORY_ENDPOINT_URL / --endpoint-url)"
    return " (AWS's endpoint for S3MEMORY_REGION / --region: check the network and the region)"
