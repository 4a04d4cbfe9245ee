"""FORMAT.md's known-answer vector, checked with raw primitives and against s3memory's own code."""

from __future__ import annotations

import base64
import dataclasses
import pathlib
import re
import struct

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from s3memory.core import envelope, local_wrap
from s3memory.errors import IntegrityError
from tests.support.legacy import DataKey, seal_format1

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
    key = DataKey(DK, b"wrapped-key-blob", "local-kat")
    body, header = seal_format1(PLAINTEXT, key, agent_id=AGENT, path=PATH, salt=SALT)
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


# --- format 2 ---------------------------------------------------------------------------

MASTER = bytes.fromhex(vector("v2 local master key"))
BRANCH_ID = vector("v2 branch key id")
MODIFIED = int(vector("v2 `s3m-mt`"))


def test_v2_vector_with_raw_primitives_from_unwrap_to_plaintext():
    agent, path = vector("v2 agent").encode(), vector("v2 path").encode()
    wrapped = bytes.fromhex(vector("v2 wrapped branch key"))
    nonce = wrapped[:12]
    assert nonce.hex() == vector("v2 wrap nonce")
    bk = AESGCM(MASTER).decrypt(nonce, wrapped[12:], b"s3memory-local-wrap/v1" + agent + b"\x00" + BRANCH_ID.encode())
    assert bk.hex() == vector("v2 branch key `BK`")
    salt = bytes.fromhex(vector("v2 salt"))

    def info(label: bytes) -> bytes:
        return b"s3memory/v2/" + label + b"\x00" + struct.pack(">H", len(agent)) + agent

    assert info(b"key").hex() == vector("v2 info for `K`")
    k, n, c = hkdf(bk, salt, info(b"key"), 32), hkdf(bk, salt, info(b"nonce"), 12), hkdf(bk, salt, info(b"commit"), 32)
    assert (k.hex(), n.hex(), c.hex()) == (vector("v2 `K`"), vector("v2 `N`"), vector("v2 `C`"))
    assert base64.b64encode(c).decode() == vector("v2 `s3m-cm`")
    aad = b"s3memory" + struct.pack(">BH", 2, len(agent)) + agent + struct.pack(">I", len(path)) + path
    aad += b"mt" + struct.pack(">Q", MODIFIED)
    assert aad.hex() == vector("v2 AAD")
    body = bytes.fromhex(vector("v2 body"))
    assert AESGCM(k).decrypt(n, body, aad) == PLAINTEXT
    with pytest.raises(InvalidTag):  # the version byte is bound: a format-1 reading fails
        AESGCM(k).decrypt(n, body, aad[:8] + b"\x01" + aad[9:])


def test_s3memory_produces_the_v2_vector_and_opens_it():
    from s3memory.storage.keys import LocalKeys, local_context

    agent, path = vector("v2 agent"), vector("v2 path")
    wrapped = bytes.fromhex(vector("v2 wrapped branch key"))
    assert local_wrap.wrap_local(MASTER, DK, local_context(agent, BRANCH_ID), wrapped[:12]) == wrapped
    bk = LocalKeys(MASTER)._unwrap_branch(agent, BRANCH_ID, wrapped)
    provider = "local-" + local_wrap.local_key_id(MASTER)
    key = envelope.BranchKey(BRANCH_ID, provider, bk)
    salt = bytes.fromhex(vector("v2 salt"))
    body, header = envelope._seal_from_parts(PLAINTEXT, key, agent_id=agent, path=path, salt=salt, modified=MODIFIED)
    assert body.hex() == vector("v2 body")
    metadata = header.to_metadata()
    assert metadata == {
        "s3m-v": "2",
        "s3m-kp": provider,
        "s3m-bk": BRANCH_ID,
        "s3m-salt": base64.b64encode(salt).decode(),
        "s3m-cm": vector("v2 `s3m-cm`"),
        "s3m-mt": str(MODIFIED),
    }
    parsed = envelope.Header.from_metadata(metadata)
    assert envelope.open_sealed(body, parsed, bk, agent_id=agent, path=path) == PLAINTEXT
    with pytest.raises(IntegrityError):  # the same bytes read as format 1 fail the commitment
        envelope.open_sealed(body, dataclasses.replace(parsed, version=1), bk, agent_id=agent, path=path)
