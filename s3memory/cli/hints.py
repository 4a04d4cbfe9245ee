"""What to fix for a configuration error: one line naming the variable or flag, by error code."""

from __future__ import annotations

from s3memory.errors import CONFIGURATION, S3MemoryError

_BUCKET = "check S3MEMORY_BUCKET (--bucket) and S3MEMORY_REGION (--region)"
_CREDENTIALS = "check the AWS credentials: S3MEMORY_PROFILE (--profile), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
_KEY = "check S3MEMORY_KMS_KEY_ID (--kms-key-id): the key must exist, be enabled and allow this principal"

# code → (what happened, what to fix)
_HINTS: dict[str, tuple[str, str]] = {
    "NoSuchBucket": ("the bucket does not exist", _BUCKET),
    "InvalidBucketName": ("the bucket name is not valid", _BUCKET),
    "PermanentRedirect": ("the bucket is in another region", _BUCKET),
    "301": ("the bucket is in another region", _BUCKET),
    "AuthorizationHeaderMalformed": ("the request was signed for another region", _BUCKET),
    "NoCredentialsError": ("no AWS credentials were found", _CREDENTIALS),
    "PartialCredentialsError": ("the AWS credentials are incomplete", _CREDENTIALS),
    "ProfileNotFound": ("the AWS profile does not exist", _CREDENTIALS),
    "InvalidAccessKeyId": ("S3 does not know the access key", _CREDENTIALS),
    "SignatureDoesNotMatch": ("S3 rejected the request signature", _CREDENTIALS),
    "ExpiredToken": ("the AWS session token has expired", _CREDENTIALS),
    "InvalidToken": ("the AWS session token is not valid", _CREDENTIALS),
    "NoRegionError": ("no AWS region is set", "set S3MEMORY_REGION (--region)"),
    "InvalidRegionError": ("the AWS region is not valid", "check S3MEMORY_REGION (--region)"),
    "InvalidEndpointConfigurationError": ("the endpoint is not valid", "check S3MEMORY_ENDPOINT_URL (--endpoint-url)"),
    "NotFoundException": ("the KMS key does not exist", _KEY),
    "DisabledException": ("the KMS key is disabled", _KEY),
    "KMSInvalidStateException": ("the KMS key is pending deletion or not usable", _KEY),
    "InvalidKeyUsageException": ("the KMS key cannot encrypt data keys", _KEY),
    "AccessDeniedException": ("KMS refused access to the key", _KEY),
    "UnrecognizedClientException": ("KMS does not know the credentials", _CREDENTIALS),
    "NamesMigrating": (
        "the agent's file names are being migrated",
        "run `s3memory migrate --agent ID --names MODE` again to finish (it resumes where it stopped)",
    ),
}
_ACCESS = ("S3 refused access", "check the IAM policy for this bucket and prefix")


def is_configuration(err: S3MemoryError) -> bool:
    return err.kind == CONFIGURATION


def configuration_message(err: S3MemoryError, *, key_flag: str = "") -> str:
    """One line for a configuration error: what happened (code), and the variable or flag to fix.

    `key_flag`: the flag that names the KMS key in this command, when it is not --kms-key-id.
    """
    code = str(getattr(err, "code", "") or type(err).__name__)
    what, fix = _HINTS.get(code, _ACCESS if code in ("AccessDenied", "403", "AllAccessDisabled") else ("", ""))
    if not what:
        return f"the configuration is not usable ({code}); check the S3MEMORY_* settings and AWS credentials"
    if key_flag and fix == _KEY:
        fix = f"check {key_flag}: the key must exist, be enabled and allow this principal"
    return f"{what} ({code}); {fix}"
