"""FORMAT.md's known-answer vector, checked with raw primitives and against s3memory's own code."""

from __future__ import annotations

import base64
import pathlib
import re
import struct

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from s3memory.core import envelope

DOC = (pathlib.Path(__file__).resolve().parents[2] / "FORMAT.md").read_text(encoding="utf-8")


def vector(name: str) -> str:
    """A value from the known-answer tables: the row whose first cell starts with `name`."""
    match = re.search(r"^\| " + re.escape(name) + r"[^|]*\| `([^`]*)`", DOC, re.MULTILINE)
    assert match is not None, name
    return match.group(1)


def hkdf(key: bytes, salt: bytes, info: bytes, length: int) -> bytes:
    return HKDF(algorithm=SHA256(), length=length, salt=salt, info=info).derive(key)


DK = bytes.fromhex(vector("data key"))
SALT = bytes.fromhex(vector("salt"))
AGENT = vector("agent")
PATH = vector("path")
PLAINTEXT = b"known answer\n"


def test_vector_inputs_read_from_the_document():
    assert bytes(range(32)) == DK
    assert bytes(range(32, 64)) == SALT
    assert (AGENT, PATH) == ("agent-42", "/memories/notes/kat.md")


def test_decrypt_with_raw_primitives_as_the_document_describes():
    agent, path = AGENT.encode(), PATH.encode()
    aad = b"s3memory" + struct.pack(">BH", 1, len(agent)) + agent + struct.pack(">I", len(path)) + path
    assert aad.hex() == vector("AAD")
    k = hkdf(DK, SALT, b"s3memory/v1/key", 32)
    n = hkdf(DK, SALT, b"s3memory/v1/nonce", 12)
    c = hkdf(DK, SALT, b"s3memory/v1/commit", 32)
    assert (k.hex(), n.hex(), c.hex()) == (vector("`K`"), vector("`N`"), vector("`C`"))
    assert base64.b64encode(c).decode() == vector("`s3m-cm`")
    assert base64.b64encode(SALT).decode() == vector("`s3m-salt`")
    body = bytes.fromhex(vector("body"))
    assert len(body) == len(PLAINTEXT) + 16
    assert AESGCM(k).decrypt(n, body, aad) == PLAINTEXT
    with pytest.raises(InvalidTag):
        AESGCM(k).decrypt(n, body, aad.replace(b"kat.md", b"kat.me"))


def test_s3memory_produces_the_vector_and_opens_it():
    key = envelope.DataKey(DK, b"wrapped-key-blob", "local-kat")
    body, header = envelope._seal_from_parts(PLAINTEXT, key, agent_id=AGENT, path=PATH, salt=SALT)
    assert body.hex() == vector("body")
    metadata = header.to_metadata()
    assert metadata == {
        "s3m-v": "1",
        "s3m-kp": "local-kat",
        "s3m-wk": base64.b64encode(b"wrapped-key-blob").decode(),
        "s3m-salt": vector("`s3m-salt`"),
        "s3m-cm": vector("`s3m-cm`"),
    }
    parsed = envelope.Header.from_metadata(metadata)
    assert envelope.open_sealed(body, parsed, DK, agent_id=AGENT, path=PATH) == PLAINTEXT
