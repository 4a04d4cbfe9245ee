"""A wrapped key that KMS will not open for this agent is the object's integrity failure, not an outage."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.support import BUCKET, err, ok

KEY = "agents/agent-42/a.md"
INTEGRITY = "Error: The file /memories/a.md failed its integrity check and cannot be read"


@pytest.fixture
def stored(make_tool: Callable[..., Any]) -> Callable[[], Any]:
    ok(make_tool(use_kms=True), command="create", path="/memories/a.md", file_text="a")
    return lambda: make_tool(use_kms=True)  # a cold reader: its Decrypt goes to KMS


def test_a_tampered_wrapped_key_is_an_integrity_failure(stored: Callable[[], Any], s3: Any) -> None:
    head = s3.head_object(Bucket=BUCKET, Key=KEY)
    blob = bytearray(base64.b64decode(head["Metadata"]["s3m-wk"]))
    blob[-5] ^= 0x01
    metadata = {**head["Metadata"], "s3m-wk": base64.b64encode(bytes(blob)).decode()}
    s3.copy_object(Bucket=BUCKET, Key=KEY, CopySource={"Bucket": BUCKET, "Key": KEY}, Metadata=metadata,
                   MetadataDirective="REPLACE")  # fmt: skip
    assert err(stored(), command="view", path="/memories/a.md") == INTEGRITY


@pytest.mark.parametrize("code", ["InvalidCiphertextException", "AccessDeniedException", "IncorrectKeyException"])
def test_kms_refusing_a_header_blob_is_an_integrity_failure(stored: Callable[[], Any], kms: Any, code: str) -> None:
    def refuse(**_: Any) -> None:
        raise ClientError({"Error": {"Code": code, "Message": "arn:aws:kms:us-east-1:1:key/x"}}, "Decrypt")

    kms.meta.events.register("before-call.kms.Decrypt", refuse)
    message = err(stored(), command="view", path="/memories/a.md")
    assert message == INTEGRITY
    assert "Try again" not in message
