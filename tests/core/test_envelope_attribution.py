"""The attribution record of format-2 headers: sealed, bound to the body, readable from the header alone."""

from __future__ import annotations

import base64
import dataclasses

import pytest

from s3memory.core import envelope
from s3memory.core.envelope import BranchKey, Header
from s3memory.errors import IntegrityError
from s3memory.storage.attribution import Attribution, validate_actor
from tests.support.legacy import DataKey, seal_format1

KEY = BranchKey("00000001-0123456789abcdef", "local-kat", bytes(range(32)))
RECORD = Attribution("alice", "rename", "/memories/old.md")


def sealed() -> tuple[bytes, Header]:
    return envelope.seal(
        b"text\n", KEY, agent_id="ann", path="/memories/new.md", modified=7, attribution=RECORD.encode()
    )


def test_the_record_round_trips_and_is_not_in_clear() -> None:
    body, header = sealed()
    metadata = header.to_metadata()
    assert set(metadata) == {"s3m-v", "s3m-kp", "s3m-bk", "s3m-salt", "s3m-cm", "s3m-mt", "s3m-at"}
    assert b"alice" not in base64.b64decode(metadata["s3m-at"])
    parsed = Header.from_metadata(metadata)
    data = envelope.open_attribution(parsed, KEY.plaintext, agent_id="ann", path="/memories/new.md")
    assert data is not None
    assert Attribution.decode(data) == RECORD
    assert envelope.open_sealed(body, parsed, KEY.plaintext, agent_id="ann", path="/memories/new.md") == b"text\n"


@pytest.mark.parametrize("change", ["remove", "flip", "swap"])
def test_removing_or_changing_the_record_fails_the_body(change: str) -> None:
    body, header = sealed()
    _, other = envelope.seal(
        b"text\n", KEY, agent_id="ann", path="/memories/new.md", modified=7, attribution=Attribution("mallory").encode()
    )
    forged = {
        "remove": b"",
        "flip": header.attribution[:-1] + bytes([header.attribution[-1] ^ 1]),
        "swap": other.attribution,
    }[change]
    tampered = dataclasses.replace(header, attribution=forged)
    with pytest.raises(IntegrityError):
        envelope.open_sealed(body, tampered, KEY.plaintext, agent_id="ann", path="/memories/new.md")
    if forged:
        with pytest.raises(IntegrityError):
            Attribution.decode(
                envelope.open_attribution(tampered, KEY.plaintext, agent_id="ann", path="/memories/new.md") or b""
            )


def test_format_1_headers_carry_no_record() -> None:
    _, header = seal_format1(b"x", DataKey(bytes(32), b"w", "local-kat"), agent_id="a", path="/memories/x")
    metadata = {**header.to_metadata(), "s3m-at": base64.b64encode(bytes(20)).decode()}
    with pytest.raises(IntegrityError):
        Header.from_metadata(metadata)


@pytest.mark.parametrize("actor", ["", "x" * 129, "line\nbreak", 7])
def test_actor_is_validated(actor: object) -> None:
    with pytest.raises(ValueError, match="actor must be 1-128 printable characters"):
        validate_actor(actor)
