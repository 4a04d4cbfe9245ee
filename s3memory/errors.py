"""Exception classes.

Storage, key and integrity errors are ours (no anthropic import here, so the CLI and the
storage layer start fast). The tool classes turn `CommandError` into the SDK's `ToolError`.
Where a built-in exception means the same thing, our class is also that built-in, so callers
can catch either (`except FileNotFoundError`).
"""

from __future__ import annotations


class S3MemoryError(Exception):
    """Base class of every error s3memory raises on purpose."""


class CommandError(S3MemoryError):
    """A memory command failed; `message` is exactly what the model is shown."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidPath(CommandError, ValueError):
    """A path failed validation before any storage call."""


# --- storage ---------------------------------------------------------------------------


class StorageError(S3MemoryError):
    """An S3 call failed. `code` is the S3 error code (never a key or bucket name)."""

    def __init__(self, code: str, operation: str = "") -> None:
        super().__init__(f"{operation or 'S3'} failed: {code}")
        self.code = code
        self.operation = operation


class NotFound(StorageError, FileNotFoundError):
    """The object does not exist."""


class PreconditionFailed(StorageError):
    """A conditional write or delete lost: the object changed or already exists (412)."""


class ConditionalConflict(StorageError):
    """S3 saw two conditional writes to one key at once (409); the caller should retry."""


class StorageUnavailable(StorageError, ConnectionError):
    """S3 is throttling, failing or out of reach after botocore's retries."""


class AccessDenied(StorageError, PermissionError):
    """IAM or the bucket policy refused the call."""


# --- keys and integrity ----------------------------------------------------------------


class KeyUnavailable(S3MemoryError):
    """The key provider (KMS) could not produce or unwrap a data key. `code` is KMS's error code."""

    def __init__(self, code: str) -> None:
        super().__init__(f"data key unavailable: {code}")
        self.code = code


class IntegrityError(S3MemoryError):
    """An object failed header parsing, key commitment or authentication. Deliberately opaque."""

    def __init__(self) -> None:
        super().__init__("object failed its integrity check")
