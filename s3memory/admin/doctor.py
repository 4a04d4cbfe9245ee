"""`doctor`: probe what the configured S3 store and KMS key actually do, under a scratch prefix.

s3memory's guarantees rest on conditions that some S3-compatible stores ignore or refuse. Each
probe writes and reads only below `{prefix}.s3memory-doctor/<random>/` (no agent id can start
with "."), and every object and version it made is removed at the end.

A probe passes only when the store *enforces* the condition: a request that must be refused
(412) and is answered 200 is "ignored", which is worse than "not implemented" because nothing
can notice it at run time.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from s3memory.storage.capabilities import WEAKER
from s3memory.storage.errors_table import error_code, translate
from s3memory.storage.keys import encryption_context
from s3memory.storage.log_filter import install_log_filter

from .lifecycle import keystore_risks

# The capabilities, in the order they are shown. The first two are what "safe" requires.
NAMES = (
    "put_if_none_match",
    "put_if_match",
    "delete_if_match",
    "delete_objects_if_match",
    "copy_if_match",
    "versioning",
    "keystore_lifecycle",
    "kms_context",
    "kms_reencrypt",
)
REQUIRED = ("put_if_none_match", "put_if_match")
S3_PROBES = frozenset(NAMES[:5])
EXTRA_WEAKER = {
    "versioning": "purge and history have one version per object only; an overwritten or deleted file is gone",
    "keystore_lifecycle": "a lifecycle rule may expire or archive the agents' branch keys, after which their files "
    "cannot be decrypted: keep .s3memory/keys/ out of expiration and archive transition rules, or the keys in "
    "S3MEMORY_KEYSTORE_BUCKET",
    "kms_context": "data keys are not bound to the agent by KMS encryption context",
    "kms_reencrypt": "rewrap cannot move data keys inside KMS",
}


@dataclass(frozen=True)
class Probe:
    name: str
    ok: bool
    note: str
    fails: bool = False  # a finding that fails the command whatever else holds (branch keys at risk)


@dataclass
class Diagnosis:
    endpoint: str
    probes: list[Probe] = field(default_factory=list)
    checksums: Probe | None = None

    @property
    def capabilities(self) -> dict[str, bool]:
        return {p.name: p.ok for p in self.probes}

    @property
    def safe(self) -> bool:
        return all(self.capabilities.get(name, False) for name in REQUIRED)

    @property
    def keys_at_risk(self) -> bool:
        """A lifecycle rule would delete or archive branch keys (a finding, not an unknown)."""
        return any(p.fails for p in self.probes)

    @property
    def weaker(self) -> list[str]:
        texts = {**WEAKER, **EXTRA_WEAKER}
        return [texts[p.name] for p in self.probes if not p.ok and p.name not in REQUIRED]

    def to_json(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint, "capabilities": self.capabilities, "safe": self.safe,
            "keys_at_risk": self.keys_at_risk, "weaker": self.weaker,
        }  # fmt: skip


def _must_refuse(
    action: Callable[[], Any], what: str, still_there: Callable[[], bool] = lambda: True
) -> tuple[bool, str]:
    """(passed, note) for a request that the store must refuse with 412 and leave without effect."""
    try:
        action()
    except ClientError as err:
        code = error_code(err)
        if code in ("PreconditionFailed", "412"):
            return (True, f"{what}: refused (412)") if still_there() else (False, f"{what}: refused, yet acted")
        return False, f"{what}: not supported ({code})"
    return False, f"{what}: IGNORED (answered success)"


class Doctor:
    def __init__(
        self, s3: Any, kms: Any, bucket: str, prefix: str, kms_key_id: str | None, keystore_bucket: str | None = None
    ) -> None:
        self.s3, self.kms, self.bucket, self.kms_key_id = s3, kms, bucket, kms_key_id
        self.prefix = prefix
        self.keystore_bucket = keystore_bucket or bucket
        install_log_filter()
        self.scratch = f"{prefix}.s3memory-doctor/{uuid.uuid4().hex}/"
        self.key = self.scratch + "probe"

    def run(self) -> Diagnosis:
        """Probe everything; a configuration failure (no bucket, no access) is raised as ours."""
        diagnosis = Diagnosis(str(self.s3.meta.endpoint_url))
        try:
            self._put(self.key, b"first")  # also the checksum probe: a plain PUT must work
            diagnosis.checksums = Probe("checksums", True, "a PUT with the client's checksum settings works")
            for name in NAMES:
                if name in S3_PROBES:  # each on its own object: one probe's effect never skews the next
                    self.key = self.scratch + name
                    self._put(self.key, b"first")
                diagnosis.probes.append(Probe(name, *getattr(self, "_" + name)()))
        except (ClientError, BotoCoreError) as err:
            raise translate(err, "PutObject") from None
        finally:
            self._clean()
        return diagnosis

    # -- S3 probes --
    def _put_if_none_match(self) -> tuple[bool, str]:
        return _must_refuse(lambda: self._put(self.key, b"x", IfNoneMatch="*"), "create over an existing key")

    def _delete_if_match(self) -> tuple[bool, str]:
        return _must_refuse(
            lambda: self.s3.delete_object(Bucket=self.bucket, Key=self.key, IfMatch='"0"'),
            "delete of a changed version",
            lambda: self._exists(self.key),
        )

    def _copy_if_match(self) -> tuple[bool, str]:
        return _must_refuse(lambda: self._copy(self.key, '"0"'), "copy of a changed version")

    # -- S3 probes --
    def _put(self, key: str, body: bytes, **conditions: str) -> Any:
        return self.s3.put_object(Bucket=self.bucket, Key=key, Body=body, **conditions)

    def _exists(self, key: str) -> bool:
        try:
            self.s3.head_object(Bucket=self.bucket, Key=key)
        except ClientError:
            return False
        return True

    def _copy(self, key: str, if_match: str) -> Any:
        return self.s3.copy_object(
            Bucket=self.bucket, Key=key, CopySource={"Bucket": self.bucket, "Key": key},
            CopySourceIfMatch=if_match, MetadataDirective="REPLACE", Metadata={"probe": "1"},
        )  # fmt: skip

    def _put_if_match(self) -> tuple[bool, str]:
        key = self.key
        refused, note = _must_refuse(lambda: self._put(key, b"x", IfMatch='"0"'), "replace of a changed version")
        if not refused:
            return False, note
        etag = self.s3.head_object(Bucket=self.bucket, Key=key)["ETag"]
        try:
            self._put(key, b"second", IfMatch=etag)
        except ClientError as err:
            return False, f"replace of the current version: refused ({error_code(err)})"
        return True, "replace of a changed version refused (412); of the current version done"

    def _delete_objects_if_match(self) -> tuple[bool, str]:
        key = self.key
        try:
            resp = self.s3.delete_objects(
                Bucket=self.bucket, Delete={"Objects": [{"Key": key, "ETag": '"0"'}], "Quiet": True}
            )
        except ClientError as err:
            return False, f"batch delete of a changed version: not supported ({error_code(err)})"
        codes = [e.get("Code") for e in resp.get("Errors", [])]
        if codes == ["PreconditionFailed"] and self._exists(key):
            return True, "batch delete of a changed version: refused per entry (PreconditionFailed)"
        if self._exists(key):
            return False, f"batch delete of a changed version: kept, but answered {codes or 'success'}"
        return False, "batch delete of a changed version: IGNORED (deleted it)"

    def _versioning(self) -> tuple[bool, str]:
        try:
            status = self.s3.get_bucket_versioning(Bucket=self.bucket).get("Status") or "never enabled"
        except ClientError as err:
            return False, f"versioning state unknown ({error_code(err)})"
        return status == "Enabled", f"bucket versioning: {status}"

    def _keystore_lifecycle(self) -> tuple[bool, str, bool]:
        """(passed, note, keys at risk): expiry and archive transitions of the keystore's objects."""
        try:
            configuration = self.s3.get_bucket_lifecycle_configuration(Bucket=self.keystore_bucket)
        except ClientError as err:
            if error_code(err) == "NoSuchLifecycleConfiguration":
                return True, "no lifecycle rule in the keystore's bucket", False
            return False, f"lifecycle rules of the keystore's bucket unknown ({error_code(err)})", False
        risks = keystore_risks(configuration, self.prefix)
        if risks:
            return False, "; ".join(risks), True
        return True, "no lifecycle rule expires or archives the agents' branch keys", False

    # -- KMS probes --
    _PROBE_CONTEXT = encryption_context("doctor-probe")
    _NO_KEY = (False, "not checked: no KMS key configured (S3MEMORY_KMS_KEY_ID)")

    def _wrapped_probe_key(self) -> bytes:
        made = self.kms.generate_data_key(
            KeyId=self.kms_key_id, KeySpec="AES_256", EncryptionContext=self._PROBE_CONTEXT
        )
        return bytes(made["CiphertextBlob"])

    def _kms_context(self) -> tuple[bool, str]:
        if not self.kms_key_id:
            return self._NO_KEY
        try:
            blob = self._wrapped_probe_key()
            self.kms.decrypt(CiphertextBlob=blob, EncryptionContext=self._PROBE_CONTEXT)
        except ClientError as err:
            return False, f"GenerateDataKey/Decrypt with a context failed ({error_code(err)})"
        try:
            self.kms.decrypt(CiphertextBlob=blob, EncryptionContext=encryption_context("other"))
        except ClientError:
            return True, "data keys open only with their agent's encryption context"
        return False, "Decrypt IGNORED the encryption context (another agent's context opened the key)"

    def _kms_reencrypt(self) -> tuple[bool, str]:
        if not self.kms_key_id:
            return self._NO_KEY
        context = self._PROBE_CONTEXT
        try:
            self.kms.re_encrypt(
                CiphertextBlob=self._wrapped_probe_key(), SourceEncryptionContext=context,
                SourceKeyId=self.kms_key_id, DestinationKeyId=self.kms_key_id, DestinationEncryptionContext=context,
            )  # fmt: skip
        except ClientError as err:
            return False, f"ReEncrypt failed ({error_code(err)})"
        return True, "ReEncrypt with SourceKeyId and encryption contexts works"

    def _clean(self) -> None:
        """Remove every object and version under the scratch prefix (best effort, never raises)."""
        with contextlib.suppress(ClientError, BotoCoreError):
            pages = self.s3.get_paginator("list_object_versions").paginate(Bucket=self.bucket, Prefix=self.scratch)
            for page in pages:
                entries = [*page.get("Versions", []), *page.get("DeleteMarkers", [])]
                objects = [{"Key": v["Key"], "VersionId": v["VersionId"]} for v in entries]
                if objects:
                    self.s3.delete_objects(Bucket=self.bucket, Delete={"Objects": objects, "Quiet": True})
        with contextlib.suppress(ClientError, BotoCoreError):
            for obj in self.s3.list_objects_v2(Bucket=self.bucket, Prefix=self.scratch).get("Contents", []):
                self.s3.delete_object(Bucket=self.bucket, Key=obj["Key"])
