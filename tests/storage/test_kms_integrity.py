"""A wrapped key that KMS will not open for this agent is the object's integrity failure, not an outage.

Format 2 (what the tool writes): the wrapped key is the agent's branch key, in its keystore (the
index entry's name, and the claim's body). Format 1: the data key wrapped in the object's header.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from s3memory import KmsKeys
from s3memory.core import keyring
from s3memory.core.keyring import BranchRecord
from tests.support import BUCKET, err, ok
from tests.support.legacy import data_key, put_format1, seal_format1

KEY = "agents/agent-42/a.md"
KEYSTORE = "agents/agent-42/.s3memory/keys/"
INTEGRITY = "Error: The file /memories/a.md failed its integrity check and cannot be read"


def tampered(blob: bytes) -> bytes:
    flipped = bytearray(blob)
    flipped[-5] ^= 0x01
    return bytes(flipped)


def keystore_names(s3: Any) -> list[str]:
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=KEYSTORE).get("Contents", [])
    return sorted(obj["Key"][len(KEYSTORE) :] for obj in listed)


@pytest.fixture(params=[2, 1], ids=["format-2", "format-1"])
def stored(request: pytest.FixtureRequest, make_tool: Callable[..., Any], s3: Any) -> Callable[[], Any]:
    """/memories/a.md sealed under a KMS key: written by the tool (format 2), or built as format 1."""
    if request.param == 2:
        ok(make_tool(use_kms=True), command="create", path="/memories/a.md", file_text="a")
    else:
        keys = KmsKeys(request.getfixturevalue("kms_key"), kms_client=request.getfixturevalue("kms"))
        put_format1(s3, keys, "agent-42", "a.md", "a")
    assert s3.head_object(Bucket=BUCKET, Key=KEY)["Metadata"]["s3m-v"] == str(request.param)
    return lambda: make_tool(use_kms=True)  # a cold reader: its Decrypt goes to KMS


@pytest.mark.parametrize("where", ["index-entry", "claim"])
def test_a_tampered_wrapped_branch_key_is_an_integrity_failure(
    make_tool: Callable[..., Any], s3: Any, kms: Any, where: str
) -> None:
    """The keystore's copy of the wrapped branch key is altered: in the index entry's name (what a
    reader lists), or in the claim (what a reader reads when the index entry is missing)."""
    ok(make_tool(use_kms=True), command="create", path="/memories/a.md", file_text="a")
    claim, index_entry = keystore_names(s3)
    record = keyring.parse_index(index_entry)
    assert record is not None
    assert claim == "00000001"
    s3.delete_object(Bucket=BUCKET, Key=KEYSTORE + index_entry)
    # A bucket writer sees the claim's ETag in a listing, so it can tag an altered entry as the real one is.
    bad = BranchRecord(record.branch_id, record.created, record.provider, tampered(record.wrapped), tag=record.tag)
    if where == "index-entry":
        s3.put_object(Bucket=BUCKET, Key=KEYSTORE + bad.index_name(), Body=b"")
    else:
        body = json.loads(s3.get_object(Bucket=BUCKET, Key=KEYSTORE + claim)["Body"].read())
        assert body["wrapped"] == base64.b64encode(record.wrapped).decode()
        s3.put_object(Bucket=BUCKET, Key=KEYSTORE + claim, Body=bad.claim_body())
    asked: list[str] = []
    kms.meta.events.register("before-call.kms.Decrypt", lambda **_: asked.append("Decrypt"))
    assert err(make_tool(use_kms=True), command="view", path="/memories/a.md") == INTEGRITY
    assert asked == ["Decrypt"]  # the altered blob was read, sent to KMS, and refused


def test_a_tampered_wrapped_key_in_a_format_1_header_is_an_integrity_failure(
    make_tool: Callable[..., Any], kms: Any, kms_key: str, s3: Any
) -> None:
    keys = KmsKeys(kms_key, kms_client=kms)
    body, header = seal_format1(b"a", data_key(keys, "agent-42"), agent_id="agent-42", path="/memories/a.md")
    metadata = {**header.to_metadata(), "s3m-wk": base64.b64encode(tampered(header.wrapped_key)).decode()}
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=body, Metadata=metadata)
    assert err(make_tool(use_kms=True), command="view", path="/memories/a.md") == INTEGRITY


@pytest.mark.parametrize("code", ["InvalidCiphertextException", "AccessDeniedException", "IncorrectKeyException"])
def test_kms_refusing_a_header_blob_is_an_integrity_failure(stored: Callable[[], Any], kms: Any, code: str) -> None:
    def refuse(**_: Any) -> None:
        raise ClientError({"Error": {"Code": code, "Message": "arn:aws:kms:us-east-1:1:key/x"}}, "Decrypt")

    kms.meta.events.register("before-call.kms.Decrypt", refuse)
    message = err(stored(), command="view", path="/memories/a.md")
    assert message == INTEGRITY
    assert "Try again" not in message
