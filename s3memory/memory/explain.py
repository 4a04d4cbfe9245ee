"""Failures in words: one table, `FAILURES`, read by one function per audience.

Each row, keyed by error class, words that class of failure for every audience:

- `model`: the exact error text the model is shown (the contract's operational messages);
- `cli`: one line for an error that stopped a whole CLI command (`for_cli`);
- `report`: the reason given for one object in an operator report (verify, export, ...);
- `fixes`: by error code, what happened and what fixes it (the variable, flag or command to
  change), for a configuration error: `configuration_message` looks the code up in every row,
  since a `CommandError` keeps only the code of the failure it words.

An error is worded by the row of its nearest class in the table (its MRO): a class without a row
of its own (`NotFound`, `StorageUnavailable`, `InvalidPath`, ...) is worded as its base class.
`S3MemoryError`'s row is the default: no text for the model (a bug), its own text elsewhere.

None of the texts names a bucket, a key, an ARN or a secret: storage and key errors carry only
an error code and the operation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from s3memory.core import operational
from s3memory.errors import (
    CONFIGURATION,
    TRANSIENT,
    AccessDenied,
    ActiveKeyIntegrity,
    AgentErasing,
    CommandError,
    ConfigurationError,
    IntegrityError,
    InvalidPath,
    KeyMisconfigured,
    KeyRetired,
    KeysDestroyed,
    KeyUnavailable,
    NamesMismatch,
    NamesUnauthenticated,
    OutcomeUnknown,
    S3MemoryError,
    StorageError,
    StorageMisconfigured,
)

log = logging.getLogger("s3memory")


@dataclass(frozen=True)
class Fix:
    """A configuration error with a known code: `what` happened, and the `fix` (a variable, flag or
    command). The CLI says `{what} ({code}); {fix}`; `advice` is the sentence a report or a note
    gives instead, where one is worded (the file-name modes)."""

    what: str
    fix: str
    advice: str = ""


@dataclass(frozen=True)
class Failure:
    """One class of failure in words, for each audience (see the module's docstring)."""

    model: Callable[[Any, str, bool], str]  # (err, display, partial) → the model's text
    cli: Callable[[Any], str]
    report: Callable[[Any], str]
    fixes: Mapping[str, Fix] = field(default_factory=dict)


_BUCKET = "check S3MEMORY_BUCKET (--bucket) and S3MEMORY_REGION (--region)"
_CREDENTIALS = "check the AWS credentials: S3MEMORY_PROFILE (--profile), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
_KEY = "check S3MEMORY_KMS_KEY_ID (--kms-key-id): the key must exist, be enabled and allow this principal"
_ACCESS = Fix("S3 refused access", "check the IAM policy for this bucket and prefix")
_STORED_ENCRYPTED, _STORED_PLAIN = "this agent stores encrypted file names", "this agent stores plain file names"
# Neither fix proposes weaker names: an agent that looks plain to an encrypted-names tool may have
# been made to look so by a bucket writer (issue 21, item 3).
_USE_ENCRYPTED = 'set S3MEMORY_NAMES=encrypted (names="encrypted")'
_USE_PLAIN = (
    "convert it with `s3memory migrate --agent ID --names encrypted`; if its names should be encrypted "
    "already, objects a bucket writer planted under it can make it look plain: check it with "
    "`s3memory verify --agent ID` first"
)
_RETIRED = "it is sealed under a retired branch key (s3memory retire); it is never read (reseal before retiring)"
_DESTROYED = "its keys were destroyed (s3memory shred --keys-only); it can never be read again"
_MIGRATE_AGAIN = "run `s3memory migrate --agent ID --names MODE` again to finish (it resumes where it stopped)"
_ERASE_AGAIN = "run `s3memory shred --agent ID` (or `purge`) again to finish"
_ERASING = "the agent is being erased"
_NAMES_UNAUTHENTICATED = (
    "the agent's name mode record failed its integrity check (NamesUnauthenticated): a bucket writer may "
    "have changed it, or it was written before mode records were tagged; check the agent with "
    "`s3memory verify --agent ID`, then record the mode its names must have with "
    "`s3memory migrate --agent ID --names MODE`"
)
# A key sealed by another key source than the configured one: a configuration error, not tampering.
_KMS_FIX = "set S3MEMORY_KMS_KEY_ID (--kms-key-id) to the KMS key that sealed it, instead of S3MEMORY_LOCAL_KEY"
_LOCAL_FIX = "set S3MEMORY_LOCAL_KEY (--local-key) to the local key that sealed it"
_KEY_SOURCES_FIXES = {
    "SealedWithKms": Fix(
        "it was sealed with AWS KMS, not with the local key configured", _KMS_FIX,
        f"sealed with AWS KMS, not with the local key configured (SealedWithKms): {_KMS_FIX}",
    ),
    "SealedWithLocalKey": Fix(
        "it was sealed with a local key, not with the KMS key configured",
        _LOCAL_FIX + " instead of S3MEMORY_KMS_KEY_ID",
        f"sealed with a local key, not with the KMS key configured (SealedWithLocalKey): {_LOCAL_FIX}",
    ),
    "OtherLocalKey": Fix(
        "it was sealed with another local key than S3MEMORY_LOCAL_KEY", _LOCAL_FIX,
        f"sealed with another local key than S3MEMORY_LOCAL_KEY (OtherLocalKey): {_LOCAL_FIX}",
    ),
}  # fmt: skip
_ACTIVE_KEY = "the agent's active branch key failed its integrity check; check its keys (s3memory verify)"


def _s3_failed(err: Any) -> str:
    return f"S3 {err.operation or 'request'} failed ({err.code})"


def _storage_model(err: Any, display: str, partial: bool) -> str:
    """Only a failure that may pass says "Try again"; `partial`: it struck a multi-object change."""
    if err.kind == TRANSIENT:
        return (
            operational.storage_unavailable_partial(err.code, display)
            if partial
            else operational.storage_unavailable(err.code)
        )
    return operational.change_incomplete(err.code, display) if partial else operational.storage_refused(err.code)


def _key_service(err: Any) -> str:
    return f"the key service is unavailable ({err.code})"


def _data_key(err: Any) -> str:
    return f"the data key is unavailable ({err.code})"


def _source_advice(err: Any) -> str:
    """A key sealed under another key source than the configured one (`storage.keys.other_source`)."""
    fix = _KEY_SOURCES_FIXES.get(err.code)
    return "" if fix is None else fix.advice


def _names_advice(err: Any) -> str:
    fix = FAILURES[NamesMismatch].fixes.get(err.code)
    return fix.advice if fix is not None else str(err.code)


def _no_model_text(err: Any, display: str, partial: bool) -> NoReturn:
    raise TypeError(f"no model message for {type(err).__name__}")


def _reraise(err: Any) -> NoReturn:
    raise err


FAILURES: dict[type[S3MemoryError], Failure] = {
    S3MemoryError: Failure(_no_model_text, cli=str, report=_reraise),
    # `from_env`'s settings: raised before a tool exists, so never the model's; its message names the variable.
    ConfigurationError: Failure(_no_model_text, cli=str, report=str),
    CommandError: Failure(
        model=lambda err, display, partial: err.message,
        cli=lambda err: err.message.removeprefix("Error: "),
        report=lambda err: err.message,
    ),
    IntegrityError: Failure(
        model=lambda err, display, partial: operational.integrity_failed(display),
        cli=str,
        report=lambda err: "failed its integrity check",
    ),
    ActiveKeyIntegrity: Failure(
        model=lambda err, display, partial: operational.active_key_integrity(display),
        cli=lambda err: _ACTIVE_KEY,
        report=lambda err: _ACTIVE_KEY,
    ),
    KeysDestroyed: Failure(
        model=lambda err, display, partial: operational.keys_destroyed(display),
        cli=lambda err: _DESTROYED,
        report=lambda err: _DESTROYED,
    ),
    NamesUnauthenticated: Failure(
        model=lambda err, display, partial: operational.names_unauthenticated(),
        cli=lambda err: _NAMES_UNAUTHENTICATED,
        report=lambda err: _NAMES_UNAUTHENTICATED,
    ),
    KeyRetired: Failure(
        model=lambda err, display, partial: operational.key_retired(display),
        cli=lambda err: _RETIRED,
        report=lambda err: _RETIRED,
    ),
    StorageError: Failure(_storage_model, cli=_s3_failed, report=_s3_failed),
    OutcomeUnknown: Failure(
        model=lambda err, display, partial: operational.change_uncertain(err.code, err.paths or (display,)),
        cli=lambda err: f"{_s3_failed(err)}; the change may have been applied",
        report=_s3_failed,
    ),
    StorageMisconfigured: Failure(
        model=lambda err, display, partial: operational.storage_misconfigured(err.code),
        cli=_s3_failed,
        report=_s3_failed,
        fixes={
            "NoSuchBucket": Fix("the bucket does not exist", _BUCKET),
            "InvalidBucketName": Fix("the bucket name is not valid", _BUCKET),
            "PermanentRedirect": Fix("the bucket is in another region", _BUCKET),
            "301": Fix("the bucket is in another region", _BUCKET),
            "AuthorizationHeaderMalformed": Fix("the request was signed for another region", _BUCKET),
            # botocore's own errors, by name; a KMS client without them (KeyMisconfigured) reads the same line
            "NoCredentialsError": Fix("no AWS credentials were found", _CREDENTIALS),
            "PartialCredentialsError": Fix("the AWS credentials are incomplete", _CREDENTIALS),
            "ProfileNotFound": Fix("the AWS profile does not exist", _CREDENTIALS),
            "NoRegionError": Fix("no AWS region is set", "set S3MEMORY_REGION (--region)"),
            "InvalidRegionError": Fix("the AWS region is not valid", "check S3MEMORY_REGION (--region)"),
            "InvalidEndpointConfigurationError": Fix(
                "the endpoint is not valid", "check S3MEMORY_ENDPOINT_URL (--endpoint-url)"
            ),
        },
    ),
    AccessDenied: Failure(
        model=lambda err, display, partial: operational.storage_denied(),
        cli=lambda err: (
            f"S3 refused access ({err.operation or 'request'}: {err.code}); check the IAM policy for this prefix"
        ),
        report=lambda err: f"access denied ({err.operation or 'S3'})",
        fixes={
            "AccessDenied": _ACCESS,
            "403": _ACCESS,
            "AllAccessDisabled": _ACCESS,
            "InvalidAccessKeyId": Fix("S3 does not know the access key", _CREDENTIALS),
            "SignatureDoesNotMatch": Fix("S3 rejected the request signature", _CREDENTIALS),
            "ExpiredToken": Fix("the AWS session token has expired", _CREDENTIALS),
            "InvalidToken": Fix("the AWS session token is not valid", _CREDENTIALS),
        },
    ),
    KeyUnavailable: Failure(
        model=lambda err, display, partial: operational.keys_unavailable(err.code), cli=_key_service, report=_data_key
    ),
    KeyMisconfigured: Failure(
        model=lambda err, display, partial: operational.keys_misconfigured(err.code),
        cli=_key_service,
        report=lambda err: _source_advice(err) or _data_key(err),
        fixes={
            **_KEY_SOURCES_FIXES,
            "NotFoundException": Fix("the KMS key does not exist", _KEY),
            "DisabledException": Fix("the KMS key is disabled", _KEY),
            "KMSInvalidStateException": Fix("the KMS key is pending deletion or not usable", _KEY),
            "InvalidKeyUsageException": Fix("the KMS key cannot encrypt data keys", _KEY),
            "AccessDeniedException": Fix("KMS refused access to the key", _KEY),
            "UnrecognizedClientException": Fix("KMS does not know the credentials", _CREDENTIALS),
        },
    ),
    NamesMismatch: Failure(
        model=lambda err, display, partial: operational.names_mismatch(err.code),
        cli=_names_advice,
        report=_data_key,
        fixes={
            "NamesEncrypted": Fix(_STORED_ENCRYPTED, _USE_ENCRYPTED, f"{_STORED_ENCRYPTED}: {_USE_ENCRYPTED}"),
            "NamesPlain": Fix(_STORED_PLAIN, _USE_PLAIN, f"{_STORED_PLAIN}: {_USE_PLAIN}"),
            "NamesMigrating": Fix(
                "the agent's file names are being migrated",
                _MIGRATE_AGAIN,
                f"this agent's file names are being migrated; {_MIGRATE_AGAIN}",
            ),
        },
    ),
    AgentErasing: Failure(
        model=lambda err, display, partial: operational.agent_erasing(),
        cli=lambda err: f"{_ERASING} (AgentErasing); {_ERASE_AGAIN}",
        report=lambda err: _ERASING,
        fixes={"AgentErasing": Fix(_ERASING, _ERASE_AGAIN, f"{_ERASING}; {_ERASE_AGAIN}")},
    ),
}
FIXES: dict[str, Fix] = {code: fix for row in FAILURES.values() for code, fix in row.fixes.items()}  # one per code


def failure_of(err: S3MemoryError) -> Failure:
    """The row that words `err`: that of its nearest class in `FAILURES`."""
    return next(FAILURES[cls] for cls in type(err).__mro__ if cls in FAILURES)


REPORTED = {"s3memory_failure": True}  # marks a record: the CLI drops it, its error line or report says the same


def log_failure(err: S3MemoryError) -> None:
    """Tell operators (by operation and error code only) why a command failed."""
    if isinstance(err, AccessDenied):
        log.warning("s3memory: %s denied (%s)", err.operation, err.code, extra=REPORTED)
    elif isinstance(err, StorageError):
        log.warning("s3memory: %s failed (%s)", err.operation, err.code, extra=REPORTED)
    elif isinstance(err, KeyUnavailable):
        log.warning("s3memory: data key unavailable (%s)", err.code, extra=REPORTED)


def for_model(err: S3MemoryError, display: str, *, partial: bool = False) -> str:
    """The message for a command on `display` that failed with `err`.

    `partial`: the failure struck during a multi-object change. If it may pass, the next
    command completes the change; if not, the change stops where it is, losing nothing.
    Only a failure that may pass says "Try again".
    """
    return failure_of(err).model(err, display, partial)


def as_command_error(err: S3MemoryError, display: str, *, partial: bool = False) -> CommandError:
    """`err` as the CommandError the model sees, keeping its class of failure and code (not its text)."""
    if isinstance(err, CommandError):
        return err
    code = getattr(err, "code", "")
    return CommandError(for_model(err, display, partial=partial), kind=err.kind, code=code)


def for_cli(err: S3MemoryError) -> str:
    """One line for an error that stopped a whole command (a configuration error aside: see `cli_failure`)."""
    return failure_of(err).cli(err)


def for_report(err: BaseException) -> str:
    """A one-line reason for a per-object failure. Anything but our own errors is a bug and re-raised."""
    if not isinstance(err, S3MemoryError):
        raise err
    return failure_of(err).report(err)


def is_configuration(err: S3MemoryError) -> bool:
    return err.kind == CONFIGURATION


def configuration_message(err: S3MemoryError, *, key_flag: str = "") -> str:
    """One line for a configuration error: what happened (code), and the variable, flag or command to fix.

    `key_flag`: the flag that names the KMS key in this command, when it is not --kms-key-id.
    """
    if isinstance(err, ConfigurationError):
        return for_cli(err)  # it names the variable to fix already
    code = str(getattr(err, "code", "") or type(err).__name__)
    fix = FIXES.get(code)
    if fix is None:
        return f"the configuration is not usable ({code}); check the S3MEMORY_* settings and AWS credentials"
    remedy = f"check {key_flag}: the key must exist, be enabled and allow this principal" if key_flag else _KEY
    return f"{fix.what} ({code}); {remedy if fix.fix == _KEY else fix.fix}"


def cli_failure(err: S3MemoryError) -> tuple[str, bool]:
    """The line the CLI prints for an error that stopped a command, and whether the invocation or the
    configuration must change (a usage error, exit 2) rather than the operation having failed (exit 1)."""
    if isinstance(err, InvalidPath):
        return for_cli(err), True
    if is_configuration(err):
        return configuration_message(err), True
    return for_cli(err), False
