"""Exception classes.

Storage, key and integrity errors are ours (no anthropic import here, so the CLI and the
storage layer start fast). The tool classes turn `CommandError` into the SDK's `ToolError`.
Where a built-in exception means the same thing, our class is also that built-in, so callers
can catch either (`except FileNotFoundError`).

    S3MemoryError
    ├── CommandError (message: the exact text the model sees; kind: why it failed)
    │   └── InvalidPath (also ValueError)
    ├── StorageError (code, operation; kind)
    │   ├── NotFound (also FileNotFoundError)
    │   ├── PreconditionFailed, ConditionalConflict     conditional writes lost
    │   ├── StorageUnavailable (also ConnectionError)   transient: retrying can help
    │   │   └── OutcomeUnknown                          a write's answer was lost: it may have been applied
    │   ├── StorageRefused                              permanent for this request
    │   └── StorageMisconfigured                        configuration: an operator must fix it
    │       └── AccessDenied (also PermissionError)
    ├── KeyUnavailable (code; kind)                      transient
    │   └── KeyMisconfigured                             configuration
    │       ├── NamesMismatch                            the agent's name mode is not the tool's
    │       └── AgentErasing                             a purge or shred of the agent is under way
    └── IntegrityError                                   an object is not what we wrote
        ├── KeysDestroyed                                its keys were destroyed (shred --keys-only)
        ├── ActiveKeyIntegrity                           the key a write seals under is not what we wrote
        └── NamesUnauthenticated                         the agent's name mode record cannot be believed

`kind` is one of TRANSIENT, PERMANENT, CONFIGURATION (or COMMAND for a plain command error):
it decides whether a message may say "Try again" and which exit code the CLI uses.
"""

from __future__ import annotations

from typing import Literal

Kind = Literal["command", "transient", "permanent", "configuration", "integrity"]
COMMAND: Kind = "command"
TRANSIENT: Kind = "transient"
PERMANENT: Kind = "permanent"
CONFIGURATION: Kind = "configuration"
INTEGRITY: Kind = "integrity"


class S3MemoryError(Exception):
    """Base class of every error s3memory raises on purpose."""

    kind: Kind = COMMAND


class CommandError(S3MemoryError):
    """A memory command failed; `message` is exactly what the model is shown.

    `kind` and `code` say why (a storage or key failure keeps its class and code, never its
    text), so the CLI can tell a configuration problem from a passing one.
    """

    def __init__(self, message: str, *, kind: Kind = COMMAND, code: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.code = code


class InvalidPath(CommandError, ValueError):
    """A path failed validation before any storage call."""


# --- storage ---------------------------------------------------------------------------


class StorageError(S3MemoryError):
    """An S3 call failed. `code` is the S3 error code (never a key or bucket name).

    `retries`: how many times botocore retried the request before this answer (0 when unknown);
    a conditional write refused after a retry may have met the object its own first attempt wrote.
    """

    kind: Kind = PERMANENT

    def __init__(self, code: str, operation: str = "", *, retries: int = 0) -> None:
        super().__init__(f"{operation or 'S3'} failed: {code}")
        self.code = code
        self.operation = operation
        self.retries = retries


class NotFound(StorageError, FileNotFoundError):
    """The object does not exist."""


class PreconditionFailed(StorageError):
    """A conditional write or delete lost: the object changed or already exists (412)."""


class ConditionalConflict(StorageError):
    """S3 saw two conditional writes to one key at once (409); the caller should retry."""


class StorageUnavailable(StorageError, ConnectionError):
    """S3 is throttling, failing or out of reach after botocore's retries."""

    kind: Kind = TRANSIENT


class OutcomeUnknown(StorageUnavailable):
    """A write's answer was lost and reading the object back could not tell whether it was applied.

    `paths`: what the model should look at (the memory paths the write touched, as displayed).
    """

    def __init__(self, code: str, operation: str = "", *, paths: tuple[str, ...] = ()) -> None:
        super().__init__(code, operation)
        self.paths = paths


class StorageRefused(StorageError):
    """S3 refused this request for good (a key too long, a feature the store does not implement)."""


class StorageMisconfigured(StorageError):
    """The storage configuration is wrong: no such bucket, no credentials or region, wrong endpoint."""

    kind: Kind = CONFIGURATION


class AccessDenied(StorageMisconfigured, PermissionError):
    """IAM or the bucket policy refused the call."""


class ConfigurationError(S3MemoryError, ValueError):
    """The `S3MEMORY_*` settings are missing or not valid; the message names each variable to fix
    (`S3MemoryTool.from_env`, `AsyncS3MemoryTool.from_env`). A `ValueError` too, as pydantic's was."""

    kind: Kind = CONFIGURATION


# --- keys and integrity ----------------------------------------------------------------


class KeyUnavailable(S3MemoryError):
    """The key provider (KMS) could not produce or unwrap a data key. `code` is KMS's error code."""

    kind: Kind = TRANSIENT

    def __init__(self, code: str) -> None:
        super().__init__(f"data key unavailable: {code}")
        self.code = code


class KeyMisconfigured(KeyUnavailable):
    """The key cannot be used as configured: not found, disabled, pending deletion, or access denied."""

    kind: Kind = CONFIGURATION


class NamesMismatch(KeyMisconfigured):
    """The agent stores its file names in another mode than the tool's, or is being migrated.

    `code`: `NamesEncrypted` (the agent's names are encrypted, the tool's plain), `NamesPlain`
    (the reverse) or `NamesMigrating` (`s3memory migrate` is under way or was interrupted).
    """


class AgentErasing(KeyMisconfigured):
    """`s3memory purge` or `shred` of the agent is under way or was interrupted: its keys may be
    gone, so no command may read its names or write (code `AgentErasing`)."""

    def __init__(self, code: str = "AgentErasing") -> None:
        super().__init__(code)


class IntegrityError(S3MemoryError):
    """An object failed header parsing, key commitment or authentication. Deliberately opaque."""

    kind: Kind = INTEGRITY

    def __init__(self) -> None:
        super().__init__("object failed its integrity check")


class KeysDestroyed(IntegrityError):
    """The object names a branch key its agent's keystore does not hold, and `s3memory shred
    --keys-only` destroyed that agent's keys (it leaves a note in the keystore). Not a sign of
    tampering, so it is worded apart; it is still an `IntegrityError` (unreadable)."""

    def __init__(self) -> None:
        S3MemoryError.__init__(self, "the keys of this object were destroyed")


class ActiveKeyIntegrity(IntegrityError):
    """The agent's active branch key (the one every write seals under) failed its integrity check:
    KMS or the local key refused its wrapped copy in the keystore. No file is at fault (a `create`
    names a file that does not exist yet), so it is worded apart; it is still an `IntegrityError`."""

    def __init__(self) -> None:
        S3MemoryError.__init__(self, "the active branch key failed its integrity check")


class NamesUnauthenticated(IntegrityError):
    """The agent's name mode record cannot be believed: its tag does not hold under the agent's name
    key, it is of a release before tags and says anything but `encrypted`, or the agent has a name
    key and branch keys but no mode record at all (see `storage.keystore_modes`). A bucket writer
    can cause it; no file is at fault, so it is worded apart; still an `IntegrityError`."""

    def __init__(self) -> None:
        S3MemoryError.__init__(self, "the name mode record failed its integrity check")


class KeyRetired(IntegrityError):
    """The object is sealed under a branch key `s3memory retire` retired (the keystore's
    `retired.N` entry): never read again. Worded apart from tampering; still unreadable."""

    def __init__(self) -> None:
        S3MemoryError.__init__(self, "the key of this object was retired")
