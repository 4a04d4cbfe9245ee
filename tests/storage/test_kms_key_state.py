"""A KMS key state met while opening a stored blob, and a garbage active key met by a write.

A blob from an object's header (or the keystore) that names a disabled, pending-deletion or unknown
KMS key is either ours (an operator must fix the key) or not under the configured key at all (an
integrity failure): one more `Decrypt`, pinned to the configured key, tells which, on that failure
path only. moto ignores key states on `Decrypt`; `kms_key_states` teaches it KMS's rule for a
disabled or pending-deletion key (the one checked is the request's `KeyId` if it names one, else
the blob's). The `real_conditions` test runs our own key's case against MiniStack; the foreign blob's
case cannot run there: MiniStack 1.5.33 ignores `Decrypt`'s `KeyId` (it opens a blob under another
key, even a disabled one, when the request names an enabled key).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
from moto.core.exceptions import JsonRESTError
from moto.kms.models import KmsBackend

from s3memory import KmsKeys
from s3memory.core import keyring
from s3memory.core.keyring import BranchRecord
from tests.support import BUCKET, err, ok
from tests.support.legacy import put_format1

KEY = "agents/agent-42/a.md"
KEYSTORE = "agents/agent-42/.s3memory/keys/"
INTEGRITY = "Error: The file /memories/a.md failed its integrity check and cannot be read"
CONFIGURATION = (
    "Error: The encryption key cannot be used ({code}); nothing was changed. "
    "An operator must fix the key configuration."
)
STATES = {"disable": "DisabledException", "schedule-deletion": "KMSInvalidStateException"}


@pytest.fixture
def kms_key_states(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto's Decrypt, taught KMS's key states (the requests still go through botocore and moto)."""
    original = KmsBackend.decrypt

    def decrypt(self: KmsBackend, ciphertext_blob: bytes, *args: Any, key_id: str | None = None, **kw: Any) -> Any:
        key = self.keys.get(self.any_id_to_key_id(key_id or ciphertext_blob[:36].decode("utf-8", "replace")))
        if key is not None and key.key_state == "Disabled":
            raise JsonRESTError("DisabledException", f"{key.arn} is disabled.")
        if key is not None and key.key_state == "PendingDeletion":
            raise JsonRESTError("KMSInvalidStateException", f"{key.arn} is pending deletion.")
        return original(self, ciphertext_blob, *args, key_id=key_id, **kw)

    monkeypatch.setattr(KmsBackend, "decrypt", decrypt)


def make_unusable(kms: Any, key: str, how: str) -> None:
    if how == "disable":
        kms.disable_key(KeyId=key)
    else:
        kms.schedule_key_deletion(KeyId=key, PendingWindowInDays=7)


def decrypts(kms: Any) -> list[str | None]:
    """The `KeyId` of every Decrypt sent from now on (None: the request named no key)."""
    sent: list[str | None] = []
    kms.meta.events.register(
        "before-call.kms.Decrypt", lambda params, **_: sent.append(json.loads(params["body"]).get("KeyId"))
    )
    return sent


def plant_foreign_format1(s3: Any, kms: Any, how: str) -> None:
    """An attacker's /memories/a.md: a format-1 header whose data key is wrapped under a KMS key
    of theirs (with our agent's context), which is then disabled or scheduled for deletion."""
    foreign = str(kms.create_key(Description="s3memory test: not the agent's key")["KeyMetadata"]["KeyId"])
    put_format1(s3, KmsKeys(foreign, kms_client=kms), "agent-42", "a.md", "planted")
    make_unusable(kms, foreign, how)


def check_foreign_blob(make_tool: Callable[..., Any], s3: Any, kms: Any, kms_key: str, how: str) -> None:
    plant_foreign_format1(s3, kms, how)
    sent = decrypts(kms)
    message = err(make_tool(use_kms=True), command="view", path="/memories/a.md")
    assert message == INTEGRITY
    assert sent == [None, kms_key]  # the extra Decrypt is pinned to the configured key


def check_own_key(make_tool: Callable[..., Any], kms: Any, kms_key: str, how: str) -> None:
    ok(make_tool(use_kms=True), command="create", path="/memories/a.md", file_text="a")
    make_unusable(kms, kms_key, how)
    try:
        sent = decrypts(kms)
        message = err(make_tool(use_kms=True), command="view", path="/memories/a.md")
        assert message == CONFIGURATION.format(code=STATES[how])
        assert sent == [None, kms_key]
    finally:
        if how == "disable":
            kms.enable_key(KeyId=kms_key)
        else:
            kms.cancel_key_deletion(KeyId=kms_key)
            kms.enable_key(KeyId=kms_key)


@pytest.mark.moto_only
@pytest.mark.usefixtures("kms_key_states")
@pytest.mark.parametrize("how", list(STATES))
def test_a_foreign_blob_under_an_unusable_key_is_an_integrity_failure(
    make_tool: Callable[..., Any], s3: Any, kms: Any, kms_key: str, how: str
) -> None:
    check_foreign_blob(make_tool, s3, kms, kms_key, how)


@pytest.mark.moto_only
@pytest.mark.usefixtures("kms_key_states")
@pytest.mark.parametrize("how", list(STATES))
def test_our_own_unusable_key_stays_a_configuration_error(
    make_tool: Callable[..., Any], kms: Any, kms_key: str, how: str
) -> None:
    check_own_key(make_tool, kms, kms_key, how)


def test_an_openable_blob_costs_one_decrypt(make_tool: Callable[..., Any], kms: Any, kms_key: str) -> None:
    ok(make_tool(use_kms=True), command="create", path="/memories/a.md", file_text="a")
    sent = decrypts(kms)
    assert ok(make_tool(use_kms=True), command="view", path="/memories/a.md").endswith("1\ta")
    assert sent == [None]


@pytest.mark.real_conditions
@pytest.mark.parametrize("how", list(STATES))
def test_our_own_unusable_key_stays_a_configuration_error_on_a_real_kms(
    make_tool: Callable[..., Any], kms: Any, kms_key: str, how: str
) -> None:
    check_own_key(make_tool, kms, kms_key, how)


# --- a write that meets a garbage active key -------------------------------------------------


def garble_active_key(s3: Any) -> None:
    """Replace the keystore's index entry of generation 1 with one whose wrapped key is garbage."""
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=KEYSTORE).get("Contents", [])
    claim, index_entry = sorted(obj["Key"][len(KEYSTORE) :] for obj in listed)
    record = keyring.parse_index(index_entry)
    assert claim == "00000001"
    assert record is not None
    s3.delete_object(Bucket=BUCKET, Key=KEYSTORE + index_entry)
    garbage = bytes(range(64, 64 + len(record.wrapped)))
    # tagged as the real entry is: a bucket writer sees the claim's ETag in a listing
    bad = BranchRecord(record.branch_id, record.created, record.provider, garbage, tag=record.tag)
    s3.put_object(Bucket=BUCKET, Key=KEYSTORE + bad.index_name(), Body=b"")
    assert json.loads(s3.get_object(Bucket=BUCKET, Key=KEYSTORE + claim)["Body"].read())["wrapped"] == (
        base64.b64encode(record.wrapped).decode()
    )


@pytest.mark.parametrize("use_kms", [True, False], ids=["kms", "local"])
def test_a_create_meeting_a_garbage_active_key_does_not_blame_the_new_file(
    make_tool: Callable[..., Any], s3: Any, use_kms: bool
) -> None:
    ok(make_tool(use_kms=use_kms), command="create", path="/memories/a.md", file_text="a")
    garble_active_key(s3)
    before = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"])
    message = err(make_tool(use_kms=use_kms), command="create", path="/memories/new.md", file_text="x")
    assert message == (
        "Error: This memory's encryption key failed its integrity check, so /memories/new.md was not written. "
        "An operator must check the memory's keys (s3memory verify)."
    )
    assert sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]) == before
    # reading the file that the garbage key sealed is still that file's integrity failure
    assert err(make_tool(use_kms=use_kms), command="view", path="/memories/a.md") == INTEGRITY
