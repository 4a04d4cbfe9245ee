"""Issue 21 item 3: the name mode is authenticated. A bucket writer without key access cannot make an
agent with encrypted names look plain (plant a mode record, strip the first one), so no tool of either
mode stores a plain name under it; what it meets instead is an integrity failure, never plain."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from s3memory import S3MemoryTool
from tests.support import BUCKET, called, claim_mode, listed_keys, ok

ROOT = "agents/agent-42/"
KEYSTORE = ROOT + ".s3memory/keys/"
UNAUTHENTICATED = (
    "Error: This memory's record of how it stores file names failed its integrity check; nothing was changed. "
    "An operator must check the memory's keys (s3memory verify)."
)
SECRET = {"command": "create", "path": "/memories/patient-jane-doe.md", "file_text": "x"}


def answer(tool: S3MemoryTool, command: dict[str, Any]) -> str:
    succeeded, answer = called(tool, command)
    return str(answer) if succeeded else f"ERROR {answer}"


def answers(make_tool: Callable[..., S3MemoryTool]) -> dict[str, str]:
    """What a fresh tool of each mode answers to a write whose name must not be stored in clear."""
    return {mode: answer(make_tool(names=mode), SECRET) for mode in ("plain", "encrypted")}


def encrypted_agent(make_tool: Callable[..., S3MemoryTool]) -> None:
    ok(make_tool(names="encrypted"), command="create", path="/memories/a.md", file_text="a")


TAG = "A" * 22


@pytest.mark.parametrize(
    "planted",
    [
        {"names.00000002": b"plain", "names.00000002.plain": b""},  # as records were before tags
        {"names.00000002": b"plain"},  # the claim alone: tools read it
        {"names.00000002": f"plain.{TAG}".encode(), f"names.00000002.plain.{TAG}": b""},  # a made-up tag
        {"names.00000009": b"to-plain", "names.00000009.to-plain": b""},  # far ahead
    ],
    ids=["untagged", "claim-only", "forged-tag", "far"],
)
def test_a_planted_mode_record_is_never_believed(
    make_tool: Callable[..., S3MemoryTool], s3: Any, planted: dict[str, bytes]
) -> None:
    encrypted_agent(make_tool)
    for name, body in planted.items():
        s3.put_object(Bucket=BUCKET, Key=KEYSTORE + name, Body=body)
    before = listed_keys(s3)
    # Before: the plain tool stored /memories/patient-jane-doe.md in clear; the encrypted one said NamesPlain.
    assert answers(make_tool) == {"plain": "ERROR " + UNAUTHENTICATED, "encrypted": "ERROR " + UNAUTHENTICATED}
    # Nothing stored, but for the entry a lone claim's first reader writes (the same facts, no more believed).
    lone = [] if len(planted) == 2 else [KEYSTORE + "names.00000002.plain"]
    assert listed_keys(s3) == sorted([*before, *lone])


def test_stripping_the_first_mode_record_is_seen(make_tool: Callable[..., S3MemoryTool], s3: Any) -> None:
    encrypted_agent(make_tool)
    s3.delete_object(Bucket=BUCKET, Key=KEYSTORE + "names.00000001.encrypted")
    claim = json.loads(s3.get_object(Bucket=BUCKET, Key=KEYSTORE + "00000001")["Body"].read())
    del claim["names"]
    s3.put_object(Bucket=BUCKET, Key=KEYSTORE + "00000001", Body=json.dumps(claim).encode())
    before = listed_keys(s3)
    # Before: the plain tool stored the name in clear (the agent looked like one that never had a mode).
    assert answers(make_tool) == {"plain": "ERROR " + UNAUTHENTICATED, "encrypted": "ERROR " + UNAUTHENTICATED}
    assert listed_keys(s3) == before


def test_a_mode_record_moved_from_another_agent_is_not_believed(
    make_tool: Callable[..., S3MemoryTool], s3: Any
) -> None:
    """A tag binds its agent: agent-7's authentic `plain` record copied to agent-42 does not hold there."""
    ok(make_tool("agent-7", names="encrypted"), command="create", path="/memories/a.md", file_text="a")
    claim_mode(s3, "agent-7", 2, "to-plain")
    encrypted_agent(make_tool)
    other = "agents/agent-7/.s3memory/keys/"
    for key in listed_keys(s3, prefix=other + "names.00000002"):
        body = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        s3.put_object(Bucket=BUCKET, Key=KEYSTORE + key[len(other) :], Body=body)
    assert answers(make_tool) == {"plain": "ERROR " + UNAUTHENTICATED, "encrypted": "ERROR " + UNAUTHENTICATED}


def test_an_authentic_mode_record_is_believed(make_tool: Callable[..., S3MemoryTool], s3: Any) -> None:
    """What `s3memory migrate` records (tagged under the name key) is believed, by a fresh tool too."""
    ok(make_tool(names="encrypted"), command="create", path="/memories/a.md", file_text="a")
    claim_mode(s3, "agent-42", 2, "to-plain")
    claim_mode(s3, "agent-42", 3, "plain")
    assert answers(make_tool)["plain"] == "File created successfully at: /memories/patient-jane-doe.md"


def test_an_untagged_encrypted_record_is_believed(make_tool: Callable[..., S3MemoryTool], s3: Any) -> None:
    """A record from before tags that says `encrypted` can only make a tool stricter: it is believed
    (`verify` reports it); a plain tool is refused as by any agent with encrypted names."""
    ok(make_tool(names="encrypted"), command="create", path="/memories/a.md", file_text="a")
    for name, body in {"names.00000002": b"encrypted", "names.00000002.encrypted": b""}.items():
        s3.put_object(Bucket=BUCKET, Key=KEYSTORE + name, Body=body)
    result = answers(make_tool)
    assert result["encrypted"] == "File created successfully at: /memories/patient-jane-doe.md"
    assert result["plain"].startswith("ERROR Error: This memory stores its file names in another way")
    assert "(NamesEncrypted)" in result["plain"]


def test_mode_records_without_a_name_key_are_not_believed(make_tool: Callable[..., S3MemoryTool], s3: Any) -> None:
    """A plain agent never had a name key: a tagged record planted under it has nothing to hold under."""
    ok(make_tool(names="plain"), command="create", path="/memories/a.md", file_text="a")
    for name, body in {"names.00000002": f"plain.{TAG}".encode(), f"names.00000002.plain.{TAG}": b""}.items():
        s3.put_object(Bucket=BUCKET, Key=KEYSTORE + name, Body=body)
    assert answers(make_tool) == {"plain": "ERROR " + UNAUTHENTICATED, "encrypted": "ERROR " + UNAUTHENTICATED}
