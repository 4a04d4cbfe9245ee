"""`KmsKeys`: branch keys from AWS KMS, bound to the agent by encryption context; it also unwraps the
data keys of format-1 objects."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from s3memory.core import envelope
from s3memory.errors import IntegrityError, KeyMisconfigured, KeyUnavailable

from .clients import client
from .errors_table import error_code, http_status
from .keys import Keys, encryption_context
from .log_filter import install_log_filter

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient

# KMS answers these when a wrapped key is not one it can open for this context: the object
# (or its header) is not what we wrote, which is an integrity failure, not an outage.
_KMS_INTEGRITY_CODES = frozenset({"InvalidCiphertextException", "IncorrectKeyException"})
# KMS answers these when the key a blob names cannot be used. For a blob from a stored object
# that may be our key's state (an operator must act) or a blob under some other key (tampering):
# one more Decrypt, pinned to the configured key, tells which.
_KMS_KEY_STATE_CODES = frozenset({"DisabledException", "KMSInvalidStateException", "NotFoundException"})
# The pinned Decrypt's answers for a blob under another key: KMS's IncorrectKeyException (some KMS
# implementations answer AccessDeniedException, which from a stored blob is an integrity failure too).
_KMS_FOREIGN_BLOB_CODES = frozenset({"IncorrectKeyException", "AccessDeniedException", "InvalidCiphertextException"})
# Answers that may pass; anything else (NotFoundException, DisabledException,
# KMSInvalidStateException for a key pending deletion, AccessDeniedException, ...) needs an operator.
_KMS_TRANSIENT_CODES = frozenset(
    {
        "ThrottlingException",
        "KMSInternalException",
        "DependencyTimeoutException",
        "KeyUnavailableException",
        "LimitExceededException",
        "RequestTimeout",
        "ServiceUnavailable",
    }
)
_KMS_CLIENT_CONFIG_ERRORS = frozenset(
    {"NoCredentialsError", "PartialCredentialsError", "NoRegionError", "ProfileNotFound"}
)


def kms_error(err: Exception, *, from_header: bool = False) -> Exception:
    """KMS's answer as ours. `from_header`: the ciphertext came from a stored object's header, so
    KMS refusing it (cannot open it, or it names a key we may not use) means the object is not
    what we wrote: an integrity failure of that object, not a key outage."""
    if isinstance(err, ClientError):
        code, status = error_code(err, "KMSError", or_status=False), http_status(err)
        if code in _KMS_INTEGRITY_CODES or (from_header and code == "AccessDeniedException"):
            return IntegrityError()
        if code in _KMS_TRANSIENT_CODES or status.startswith("5"):
            return KeyUnavailable(code)
        return KeyMisconfigured(code)
    name = type(err).__name__
    if name in _KMS_CLIENT_CONFIG_ERRORS:
        return KeyMisconfigured(name)
    return KeyUnavailable("ConnectionError")


class KmsKeys(Keys):
    """Branch keys from AWS KMS `GenerateDataKey` (AES_256), bound to the agent by encryption context."""

    provider_id = "aws-kms"

    def __init__(self, key_id: str, *, kms_client: KMSClient | None = None, **cache: Any) -> None:
        if not isinstance(key_id, str) or not key_id:
            raise ValueError("KmsKeys needs a KMS key id, ARN or alias")
        super().__init__(**cache)
        install_log_filter()
        self.key_id = key_id
        self._kms: KMSClient = kms_client if kms_client is not None else client("kms")

    def __repr__(self) -> str:
        return f"KmsKeys(key_id={self.key_id!r})"

    def clients(self) -> list[Any]:
        return [self._kms]

    def _unwrap(self, agent_id: str, wrapped: bytes) -> bytes:
        return self._decrypt(wrapped, encryption_context(agent_id))

    def _generate_branch(self, agent_id: str, branch_id: str) -> tuple[bytes, bytes]:
        try:
            resp = self._kms.generate_data_key(
                KeyId=self.key_id, KeySpec="AES_256", EncryptionContext=encryption_context(agent_id, branch_id)
            )
        except (ClientError, BotoCoreError) as err:
            raise kms_error(err) from err
        plaintext, wrapped = resp.get("Plaintext", b""), resp.get("CiphertextBlob", b"")
        if len(plaintext) != envelope.DATA_KEY_BYTES or not wrapped or not resp.get("KeyId"):
            raise KeyUnavailable("InvalidKMSResponse")
        return plaintext, wrapped

    def _unwrap_branch(self, agent_id: str, branch_id: str, wrapped: bytes) -> bytes:
        return self._decrypt(wrapped, encryption_context(agent_id, branch_id))

    def _decrypt(self, wrapped: bytes, context: dict[str, str]) -> bytes:
        try:
            resp = self._kms.decrypt(CiphertextBlob=wrapped, EncryptionContext=context)
        except (ClientError, BotoCoreError) as err:
            if isinstance(err, ClientError) and error_code(err) in _KMS_KEY_STATE_CODES:
                raise self._key_state_error(wrapped, context, err) from err
            raise kms_error(err, from_header=True) from err
        return resp.get("Plaintext", b"")

    def _key_state_error(self, wrapped: bytes, context: dict[str, str], err: ClientError) -> Exception:
        """The blob names a key KMS cannot use (disabled, pending deletion, unknown). Decrypt it once
        more with `KeyId` set to the configured key: KMS refusing it as not under that key
        (`IncorrectKeyException`) means the stored blob is not one of ours (an integrity failure);
        any other answer leaves the key's state for an operator to fix. Only on this failure path."""
        try:
            self._kms.decrypt(CiphertextBlob=wrapped, EncryptionContext=context, KeyId=self.key_id)
        except ClientError as retry:
            if error_code(retry) in _KMS_FOREIGN_BLOB_CODES:
                return IntegrityError()
        except BotoCoreError:
            pass
        return kms_error(err, from_header=True)

    def rewrap(self, agent_id: str, wrapped: bytes, destination_key_id: str) -> bytes:
        """Re-wrap a data key under another KMS key inside KMS (`ReEncrypt`); the key never leaves KMS."""
        return self.rewrap_with_ids(agent_id, wrapped, destination_key_id)[0]

    def rewrap_with_ids(
        self,
        agent_id: str,
        wrapped: bytes,
        destination_key_id: str,
        source_key_id: str | None = None,
        *,
        branch_id: str | None = None,
    ) -> tuple[bytes, str, str]:
        """`rewrap`, also returning KMS's `SourceKeyId` and `KeyId` (ARNs): equal when the blob was already
        under the destination key, so a resumed key migration can skip it.

        `source_key_id` is sent as `SourceKeyId` (some KMS implementations require it); a blob that is
        under the destination key already (a resumed migration) is then re-encrypted onto itself.
        `branch_id`: the blob is that branch key's (its id is part of the encryption context).
        """
        context = encryption_context(agent_id, branch_id)
        request: dict[str, Any] = {
            "CiphertextBlob": wrapped,
            "SourceEncryptionContext": context,
            "DestinationKeyId": destination_key_id,
            "DestinationEncryptionContext": context,
        }
        if source_key_id:
            request["SourceKeyId"] = source_key_id
        try:
            try:
                resp = self._kms.re_encrypt(**request)
            except ClientError as err:
                if not source_key_id or error_code(err) != "IncorrectKeyException":
                    raise
                resp = self._kms.re_encrypt(**{**request, "SourceKeyId": destination_key_id})
        except (ClientError, BotoCoreError) as err:
            # Not `from_header`: here AccessDenied is about the keys (ReEncryptFrom/To), not the blob.
            raise kms_error(err) from err
        blob = resp.get("CiphertextBlob", b"")
        if not blob:
            raise KeyUnavailable("InvalidKMSResponse")
        return blob, str(resp.get("SourceKeyId", "")), str(resp.get("KeyId", ""))
