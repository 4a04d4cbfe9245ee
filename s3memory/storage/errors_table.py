"""S3's answers translated to our exceptions, by error code through one table (never by message text)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from s3memory.errors import (
    AccessDenied,
    ConditionalConflict,
    NotFound,
    PreconditionFailed,
    StorageError,
    StorageMisconfigured,
    StorageRefused,
    StorageUnavailable,
)

NOT_IMPLEMENTED = frozenset({"NotImplemented", "501"})
P = ParamSpec("P")
T = TypeVar("T")

# S3 error code (or HTTP status, as text) → our exception class, decided by code, never by
# matching message text. The class says whether retrying can help (see errors.py): throttling
# and 5xx pass; a refused request or a configuration problem does not.
_ERROR_TABLE: dict[str, type[StorageError]] = {
    "NoSuchKey": NotFound,
    "404": NotFound,
    "NotFound": NotFound,
    "PreconditionFailed": PreconditionFailed,
    "412": PreconditionFailed,
    "ConditionalRequestConflict": ConditionalConflict,
    "409": ConditionalConflict,
    "OperationAborted": ConditionalConflict,
    # transient
    "SlowDown": StorageUnavailable,
    "503": StorageUnavailable,
    "ServiceUnavailable": StorageUnavailable,
    "InternalError": StorageUnavailable,
    "500": StorageUnavailable,
    "502": StorageUnavailable,
    "504": StorageUnavailable,
    "RequestTimeout": StorageUnavailable,
    "RequestTimeTooSkewed": StorageUnavailable,
    "Throttling": StorageUnavailable,
    "ThrottlingException": StorageUnavailable,
    "RequestLimitExceeded": StorageUnavailable,
    "TooManyRequests": StorageUnavailable,
    "429": StorageUnavailable,
    # permanent for this request
    "KeyTooLongError": StorageRefused,
    "NotImplemented": StorageRefused,
    "501": StorageRefused,
    "InvalidArgument": StorageRefused,
    "InvalidRequest": StorageRefused,
    "EntityTooLarge": StorageRefused,
    "MethodNotAllowed": StorageRefused,
    "405": StorageRefused,
    "400": StorageRefused,
    # configuration: an operator must fix it
    "NoSuchBucket": StorageMisconfigured,
    "PermanentRedirect": StorageMisconfigured,
    "301": StorageMisconfigured,
    "AuthorizationHeaderMalformed": StorageMisconfigured,
    "InvalidBucketName": StorageMisconfigured,
    "AccessDenied": AccessDenied,
    "403": AccessDenied,
    "AllAccessDisabled": AccessDenied,
    "InvalidAccessKeyId": AccessDenied,
    "SignatureDoesNotMatch": AccessDenied,
    "ExpiredToken": AccessDenied,
    "InvalidToken": AccessDenied,
}
# botocore's own errors (raised before or instead of an S3 answer), by class name.
_CLIENT_SIDE: dict[str, type[StorageError]] = {
    "NoCredentialsError": StorageMisconfigured,
    "PartialCredentialsError": StorageMisconfigured,
    "NoRegionError": StorageMisconfigured,
    "ProfileNotFound": StorageMisconfigured,
    "InvalidRegionError": StorageMisconfigured,
    "InvalidEndpointConfigurationError": StorageMisconfigured,
    "ParamValidationError": StorageRefused,
}


def http_status(err: ClientError) -> str:
    """The HTTP status of an S3 or KMS error answer, as text ("" if there is none)."""
    return str(err.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or "")


def error_code(err: ClientError, default: str = "Unknown", *, or_status: bool = True) -> str:
    """The error code of an S3 or KMS error answer; if it has none, its HTTP status (unless not
    `or_status`: KMS's codes are the only thing its callers classify by), else `default`."""
    code = str(err.response.get("Error", {}).get("Code") or "")
    return code or (http_status(err) if or_status else "") or default


def call(operation: str, request: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """`request(*args, **kwargs)` (one boto3 call, or reading its streamed body), botocore's
    errors raised as ours (`translate`), chained to botocore's."""
    try:
        return request(*args, **kwargs)
    except (ClientError, BotoCoreError) as err:
        raise translate(err, operation) from err


def translate(err: Exception, operation: str) -> StorageError:
    """Map a botocore exception to ours; the message carries only the code and operation.

    An unknown code is classified by its HTTP status: 5xx may pass, anything else will not.
    """
    if isinstance(err, ClientError):
        code, status = error_code(err), http_status(err)
        cls = _ERROR_TABLE.get(code) or _ERROR_TABLE.get(status)
        if cls is None:
            cls = StorageUnavailable if status.startswith("5") or not status else StorageRefused
        retries = err.response.get("ResponseMetadata", {}).get("RetryAttempts")
        return cls(code, operation, retries=retries if isinstance(retries, int) else 0)
    if isinstance(err, BotoCoreError):
        name = type(err).__name__
        return _CLIENT_SIDE.get(name, StorageUnavailable)(name, operation)
    raise err


def error_for_code(code: str, operation: str) -> StorageError:
    """Our exception for an error code S3 reported inside a 200 answer (a `DeleteObjects` entry)."""
    cls = _ERROR_TABLE.get(code) or StorageRefused
    return cls(code, operation)
