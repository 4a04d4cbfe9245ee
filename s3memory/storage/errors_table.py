"""S3's answers translated to our exceptions, by error code through one table (never by message text)."""

from __future__ import annotations

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


def translate(err: Exception, operation: str) -> StorageError:
    """Map a botocore exception to ours; the message carries only the code and operation.

    An unknown code is classified by its HTTP status: 5xx may pass, anything else will not.
    """
    if isinstance(err, ClientError):
        code = str(err.response.get("Error", {}).get("Code") or "")
        status = str(err.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or "")
        code = code or status or "Unknown"
        cls = _ERROR_TABLE.get(code) or _ERROR_TABLE.get(status)
        if cls is None:
            cls = StorageUnavailable if status.startswith("5") or not status else StorageRefused
        return cls(code, operation)
    if isinstance(err, BotoCoreError):
        name = type(err).__name__
        return _CLIENT_SIDE.get(name, StorageUnavailable)(name, operation)
    raise err


def error_for_code(code: str, operation: str) -> StorageError:
    """Our exception for an error code S3 reported inside a 200 answer (a `DeleteObjects` entry)."""
    cls = _ERROR_TABLE.get(code) or StorageRefused
    return cls(code, operation)
