"""Failures in words, one function per audience.

- `for_model`: the exact error text the model is shown (the contract's operational messages);
- `for_cli`: one line for an error that stopped a whole CLI command;
- `for_report`: the reason given for one object in an operator report (verify, export, ...).

None of them names a bucket, a key, an ARN or a secret: storage and key errors carry only an
error code and the operation.
"""

from __future__ import annotations

import logging

from s3memory.core import messages as fmt
from s3memory.errors import (
    TRANSIENT,
    AccessDenied,
    CommandError,
    IntegrityError,
    KeyMisconfigured,
    KeyUnavailable,
    NamesMismatch,
    S3MemoryError,
    StorageError,
    StorageMisconfigured,
    StorageUnavailable,
)

log = logging.getLogger("s3memory")


def log_failure(err: S3MemoryError) -> None:
    """Tell operators (by operation and error code only) why a command failed."""
    if isinstance(err, AccessDenied):
        log.warning("s3memory: %s denied (%s)", err.operation, err.code)
    elif isinstance(err, StorageError):
        log.warning("s3memory: %s failed (%s)", err.operation, err.code)
    elif isinstance(err, KeyUnavailable):
        log.warning("s3memory: data key unavailable (%s)", err.code)


def for_model(err: S3MemoryError, display: str, *, partial: bool = False) -> str:
    """The message for a command on `display` that failed with `err`.

    `partial`: the failure struck during a multi-object change. If it may pass, the next
    command completes the change; if not, the change stops where it is, losing nothing.
    Only a failure that may pass says "Try again".
    """
    if isinstance(err, CommandError):
        return err.message
    if isinstance(err, IntegrityError):
        return fmt.integrity_failed(display)
    if isinstance(err, NamesMismatch):
        return fmt.names_mismatch(err.code)
    if isinstance(err, KeyMisconfigured):
        return fmt.keys_misconfigured(err.code)
    if isinstance(err, KeyUnavailable):
        return fmt.keys_unavailable(err.code)
    if isinstance(err, AccessDenied):
        return fmt.storage_denied()
    if isinstance(err, StorageMisconfigured):
        return fmt.storage_misconfigured(err.code)
    if isinstance(err, StorageUnavailable) or (isinstance(err, StorageError) and err.kind == TRANSIENT):
        return fmt.storage_unavailable_partial(err.code, display) if partial else fmt.storage_unavailable(err.code)
    if isinstance(err, StorageError):
        return fmt.change_incomplete(err.code, display) if partial else fmt.storage_refused(err.code)
    raise TypeError(f"no model message for {type(err).__name__}")


def as_command_error(err: S3MemoryError, display: str, *, partial: bool = False) -> CommandError:
    """`err` as the CommandError the model sees, keeping its class of failure and code (not its text)."""
    if isinstance(err, CommandError):
        return err
    code = getattr(err, "code", "")
    return CommandError(for_model(err, display, partial=partial), kind=err.kind, code=code)


def for_cli(err: S3MemoryError) -> str:
    """One line for an error that stopped a whole command."""
    if isinstance(err, CommandError):
        return err.message.removeprefix("Error: ")
    if isinstance(err, AccessDenied):
        return f"S3 refused access ({err.operation or 'request'}: {err.code}); check the IAM policy for this prefix"
    if isinstance(err, StorageError):
        return f"S3 {err.operation or 'request'} failed ({err.code})"
    if isinstance(err, NamesMismatch):
        return NAMES_ADVICE.get(err.code, err.code)
    if isinstance(err, KeyUnavailable):
        return f"the key service is unavailable ({err.code})"
    return str(err)


NAMES_ADVICE = {
    "NamesEncrypted": 'this agent stores encrypted file names: set S3MEMORY_NAMES=encrypted (names="encrypted"), '
    "or convert it with `s3memory migrate --agent ID --names plain`",
    "NamesPlain": "this agent stores plain file names: set S3MEMORY_NAMES=plain (the default), "
    "or convert it with `s3memory migrate --agent ID --names encrypted`",
    "NamesMigrating": "this agent's file names are being migrated; run `s3memory migrate --agent ID --names MODE` "
    "again to finish (it resumes where it stopped)",
}


def for_report(err: BaseException) -> str:
    """A one-line reason for a per-object failure. Anything but our own errors is a bug and re-raised."""
    if isinstance(err, IntegrityError):
        return "failed its integrity check"
    if isinstance(err, KeyUnavailable):
        return f"the data key is unavailable ({err.code})"
    if isinstance(err, AccessDenied):
        return f"access denied ({err.operation or 'S3'})"
    if isinstance(err, StorageError):
        return f"S3 {err.operation or 'request'} failed ({err.code})"
    if isinstance(err, CommandError):
        return err.message
    raise err
