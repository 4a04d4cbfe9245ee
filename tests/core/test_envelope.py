"""The encrypted object format: seal/open, strict header parsing, what the metadata may hold."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from s3memory.core import envelope, keyring, local_wrap
from s3memory.core.envelope import BranchKey, Header
from s3memory.errors import IntegrityError
from tests.support import BUCKET, is_keystore, keystore_names, ok
from tests.support.legacy import DataKey, seal_format1

DATA_KEY = bytes(range(100, 132))
WRAPPED = b"\x01wrapped-data-key-blob\xfe" * 3
KEY = DataKey(DATA_KEY, WRAPPED, "local-0123456789abcdef")  # format 1 (still read; written by tests only)
BRANCH = BranchKey("00000001-0123456789abcdef", "local-0123456789abcdef", DATA_KEY)  # format 2 (what `seal` writes)
SALT = bytes(range(7, 39))
AGENT = "agent-42"
PATH = "/memories/notes/todo.md"
TEXT = b"Buy milk\nCall Ann about the Q3 report\n"


def _sealed(
    plaintext: bytes = TEXT, *, salt: bytes = SALT, agent: str = AGENT, path: str = PATH
) -> tuple[bytes, Header]:
    return seal_format1(plaintext, KEY, agent_id=agent, path=path, salt=salt)


def _seal(fmt: int, plaintext: bytes) -> tuple[bytes, Header]:
    if fmt == 1:
        return seal_format1(plaintext, KEY, agent_id=AGENT, path=PATH)
    return envelope.seal(plaintext, BRANCH, agent_id=AGENT, path=PATH)


def _good_metadata() -> dict[str, str]:
    return _sealed()[1].to_metadata()


# --- seal / open -----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [1, 2])
@pytest.mark.parametrize("plaintext", [b"", b"x", TEXT, "żółw 🐢\n".encode(), bytes(range(256)) * 40])
def test_round_trip(plaintext: bytes, fmt: int) -> None:
    body, header = _seal(fmt, plaintext)
    assert header.version == fmt
    parsed = Header.from_metadata(header.to_metadata())
    assert parsed == header
    assert envelope.open_sealed(body, parsed, DATA_KEY, agent_id=AGENT, path=PATH) == plaintext


@pytest.mark.parametrize("fmt", [1, 2])
@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 1536, 100_000])
def test_body_is_plaintext_plus_tag(size: int, fmt: int) -> None:
    body, _ = _seal(fmt, b"a" * size)
    assert len(body) == size + 16
    assert envelope.plaintext_size(len(body)) == size


def test_seal_from_parts_is_deterministic() -> None:
    first = _sealed()
    assert _sealed() == first
    assert first[1] == Header(1, KEY.provider, WRAPPED, SALT, first[1].commitment)
    # Each input changes the ciphertext: salt (fresh key and nonce), agent and path (bound as AAD).
    other_salt = _sealed(salt=bytes(32))
    assert other_salt[0] != first[0]
    assert other_salt[1].commitment != first[1].commitment
    assert _sealed(agent="agent-43")[0] != first[0]
    assert _sealed(path="/memories/notes/todo.mdx")[0] != first[0]
    # ... but the commitment depends on the data key and salt only.
    assert _sealed(agent="agent-43")[1].commitment == first[1].commitment


def test_seal_uses_a_fresh_salt_every_time() -> None:
    (b1, h1), (b2, h2) = (envelope.seal(TEXT, BRANCH, agent_id=AGENT, path=PATH) for _ in range(2))
    assert h1.salt != h2.salt
    assert b1 != b2


@pytest.mark.parametrize(
    ("agent", "path"),
    [("agent-43", PATH), ("agent-4", PATH), (AGENT, "/memories/notes/todo.mdx"), (AGENT, "/memories/todo.md")],
)
def test_open_under_another_agent_or_path_fails(agent: str, path: str) -> None:
    body, header = _sealed()
    with pytest.raises(IntegrityError):
        envelope.open_sealed(body, header, DATA_KEY, agent_id=agent, path=path)


def test_associated_data_cannot_be_shifted_between_agent_and_path() -> None:
    # Length prefixes: ("ab", "c") and ("a", "bc") must not give the same AAD.
    assert envelope.associated_data("ab", "c") != envelope.associated_data("a", "bc")


def test_open_with_another_data_key_fails() -> None:
    body, header = _sealed()
    with pytest.raises(IntegrityError):
        envelope.open_sealed(body, header, bytes(32), agent_id=AGENT, path=PATH)


@pytest.mark.parametrize("cut", [0, 1, 15, 16, len(TEXT) + 15])
def test_truncated_body_fails(cut: int) -> None:
    body, header = _sealed()
    with pytest.raises(IntegrityError):
        envelope.open_sealed(body[:cut], header, DATA_KEY, agent_id=AGENT, path=PATH)


@pytest.mark.parametrize("index", [0, 5, -16, -1])
def test_flipped_body_byte_fails(index: int) -> None:
    body, header = _sealed()
    tampered = bytearray(body)
    tampered[index] ^= 0x01
    with pytest.raises(IntegrityError):
        envelope.open_sealed(bytes(tampered), header, DATA_KEY, agent_id=AGENT, path=PATH)


class _SpyAESGCM:
    """Stands in for AESGCM inside envelope and counts decryptions."""

    decrypts = 0

    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    def encrypt(self, nonce: bytes, data: bytes, associated_data: bytes | None) -> bytes:
        return self._aead.encrypt(nonce, data, associated_data)

    def decrypt(self, nonce: bytes, data: bytes, associated_data: bytes | None) -> bytes:
        type(self).decrypts += 1
        return self._aead.decrypt(nonce, data, associated_data)


def test_commitment_is_checked_before_decrypting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envelope, "AESGCM", _SpyAESGCM)
    body, header = _sealed()
    _SpyAESGCM.decrypts = 0
    assert envelope.open_sealed(body, header, DATA_KEY, agent_id=AGENT, path=PATH) == TEXT
    assert _SpyAESGCM.decrypts == 1  # the spy sees decryption when it happens

    wrong = Header(header.version, header.provider, header.wrapped_key, header.salt, bytes(32))
    with pytest.raises(IntegrityError):
        envelope.open_sealed(body, wrong, DATA_KEY, agent_id=AGENT, path=PATH)
    assert _SpyAESGCM.decrypts == 1  # refused on the commitment alone, nothing decrypted

    # One bit off in the commitment is enough.
    flipped = bytearray(header.commitment)
    flipped[31] ^= 0x80
    with pytest.raises(IntegrityError):
        envelope.open_sealed(
            body, Header(1, header.provider, WRAPPED, SALT, bytes(flipped)), DATA_KEY, agent_id=AGENT, path=PATH
        )
    assert _SpyAESGCM.decrypts == 1


def test_commitment_binds_the_data_key() -> None:
    """A second data key that authenticates nothing still cannot pass the commitment check."""
    body, header = _sealed()
    other_key = bytes(range(1, 33))
    with pytest.raises(IntegrityError):
        envelope.open_sealed(body, header, other_key, agent_id=AGENT, path=PATH)
    assert envelope.derive_parts(other_key, SALT)[2] != header.commitment


# --- header parsing --------------------------------------------------------------------


def test_header_metadata_round_trip() -> None:
    _, header = _sealed()
    metadata = header.to_metadata()
    assert sorted(metadata) == ["s3m-cm", "s3m-kp", "s3m-salt", "s3m-v", "s3m-wk"]
    assert metadata["s3m-v"] == "1"
    assert metadata["s3m-kp"] == "local-0123456789abcdef"
    assert base64.b64decode(metadata["s3m-wk"]) == WRAPPED
    assert base64.b64decode(metadata["s3m-salt"]) == SALT
    assert Header.from_metadata(metadata) == header
    # Entries that are not ours (S3 or another application) are ignored; S3 may send keys in any case.
    assert Header.from_metadata({**metadata, "content-owner": "someone"}) == header
    assert Header.from_metadata({k.upper(): v for k, v in metadata.items()}) == header


@pytest.mark.parametrize("name", ["s3m-v", "s3m-kp", "s3m-wk", "s3m-salt", "s3m-cm"])
def test_header_missing_entry_is_rejected(name: str) -> None:
    metadata = _good_metadata()
    del metadata[name]
    with pytest.raises(IntegrityError):
        Header.from_metadata(metadata)


@pytest.mark.parametrize("extra", ["s3m-x", "s3m-v2", "S3M-EXTRA", "s3m-"])
def test_header_extra_entry_is_rejected(extra: str) -> None:
    with pytest.raises(IntegrityError):
        Header.from_metadata({**_good_metadata(), extra: "1"})


@pytest.mark.parametrize("version", ["0", "2", "01", " 1", "1 ", "v1", "", "\uff11"])
def test_header_wrong_version_is_rejected(version: str) -> None:
    with pytest.raises(IntegrityError):
        Header.from_metadata({**_good_metadata(), "s3m-v": version})


@pytest.mark.parametrize("name", ["s3m-wk", "s3m-salt", "s3m-cm"])
@pytest.mark.parametrize("value", ["not base64!", "QUJ", "QUJD\n", "QU JD", "é", "-_-_", "QUJDRA==="])
def test_header_bad_base64_is_rejected(name: str, value: str) -> None:
    with pytest.raises(IntegrityError):
        Header.from_metadata({**_good_metadata(), name: value})


@pytest.mark.parametrize("name", ["s3m-wk", "s3m-salt", "s3m-cm"])
def test_header_non_canonical_base64_is_rejected(name: str) -> None:
    """Another spelling of the same bytes (extra padding, non-zero pad bits) is not our header."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    key = DataKey(DATA_KEY, b"w" * 70, "aws-kms")  # 70 and 32 bytes: both encodings end in padding
    metadata = seal_format1(TEXT, key, agent_id=AGENT, path=PATH, salt=SALT)[1].to_metadata()
    assert Header.from_metadata(metadata).wrapped_key == b"w" * 70
    value = metadata[name]
    body = value.rstrip("=")
    pad = value[len(body) :]
    assert pad in ("=", "==")
    bumped = body[:-1] + alphabet[alphabet.index(body[-1]) + 1] + pad  # pad bits no longer zero
    for text in (value + "=", bumped):
        assert base64.b64decode(text) == base64.b64decode(value)  # the same bytes to a lenient decoder
        with pytest.raises(IntegrityError):
            Header.from_metadata({**metadata, name: text})


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("s3m-salt", bytes(31)),
        ("s3m-salt", bytes(33)),
        ("s3m-salt", b""),
        ("s3m-cm", bytes(31)),
        ("s3m-cm", bytes(33)),
        ("s3m-cm", b""),
        ("s3m-wk", b""),
        ("s3m-wk", bytes(1025)),
    ],
)
def test_header_wrong_lengths_are_rejected(name: str, raw: bytes) -> None:
    with pytest.raises(IntegrityError):
        Header.from_metadata({**_good_metadata(), name: _b64(raw)})


def test_header_longest_wrapped_key_is_accepted() -> None:
    header = Header.from_metadata({**_good_metadata(), "s3m-wk": _b64(bytes(1024))})
    assert header.wrapped_key == bytes(1024)


@pytest.mark.parametrize("provider", ["", "AWS-KMS", "aws kms", "aws/kms", "x" * 65, "kms\n", "ünï"])
def test_header_bad_provider_is_rejected(provider: str) -> None:
    with pytest.raises(IntegrityError):
        Header.from_metadata({**_good_metadata(), "s3m-kp": provider})


def test_integrity_errors_are_all_the_same() -> None:
    """One opaque failure: the message never says which check failed."""
    messages = set()
    body, header = _sealed()
    for attempt in (
        lambda: Header.from_metadata({}),
        lambda: Header.from_metadata({**_good_metadata(), "s3m-v": "2"}),
        lambda: envelope.open_sealed(body[:-1], header, DATA_KEY, agent_id=AGENT, path=PATH),
        lambda: envelope.open_sealed(body, header, bytes(32), agent_id=AGENT, path=PATH),
        lambda: envelope.open_sealed(body, header, DATA_KEY, agent_id="other", path=PATH),
    ):
        with pytest.raises(IntegrityError) as info:
            attempt()
        messages.add(str(info.value))
    assert messages == {"object failed its integrity check"}


# --- what the metadata may contain -----------------------------------------------------


@pytest.mark.parametrize("wrapped_len", [60, 184, 1024])
def test_metadata_is_ascii_small_and_reveals_nothing(wrapped_len: int) -> None:
    secret = "The launch code is 0000 and the path is secret"
    agent = "ann-secret-agent"
    path = "/memories/secret-project/plan.md"
    key = DataKey(DATA_KEY, bytes((i * 7) % 256 for i in range(wrapped_len)), "aws-kms")
    body, header = seal_format1(secret.encode(), key, agent_id=agent, path=path)
    metadata = header.to_metadata()
    flat = "".join(k + v for k, v in metadata.items())
    assert flat.isascii()
    # S3 limits user-defined metadata to 2 KB (keys and values, as UTF-8).
    assert len(flat.encode("utf-8")) < 2048
    for hidden in (secret, "launch code", agent, path, "secret-project", "plan.md", DATA_KEY.hex()):
        assert hidden not in flat
    assert _b64(DATA_KEY) not in flat
    assert secret.encode() not in body
    assert len(body) == len(secret) + 16


# --- local key wrapping ----------------------------------------------------------------


def test_local_wrap_round_trip_and_context_binding() -> None:
    master = bytes(range(32))
    wrapped = local_wrap.wrap_local(master, DATA_KEY, b"ann", nonce=bytes(12))
    assert len(wrapped) == 12 + 32 + 16
    assert local_wrap.wrap_local(master, DATA_KEY, b"ann", nonce=bytes(12)) == wrapped
    assert local_wrap.unwrap_local(master, wrapped, b"ann") == DATA_KEY
    for context, key, blob in (
        (b"ann2", master, wrapped),
        (b"an", master, wrapped),
        (b"ann", bytes(32), wrapped),
        (b"ann", master, wrapped[:-1]),
        (b"ann", master, wrapped[:-1] + bytes([wrapped[-1] ^ 1])),
    ):
        with pytest.raises(IntegrityError):
            local_wrap.unwrap_local(key, blob, context)


def test_local_key_id_is_a_fingerprint_not_the_key() -> None:
    master = bytes(range(32))
    key_id = local_wrap.local_key_id(master)
    assert len(key_id) == 16
    assert key_id == local_wrap.local_key_id(bytes(range(32)))
    assert key_id != local_wrap.local_key_id(bytes(32))
    assert master.hex()[:16] != key_id


# --- through the tool: what lands in S3 ------------------------------------------------


def test_stored_object_sizes_and_metadata(tool, s3) -> None:
    text = "x" * 1536
    ok(tool, command="create", path="/memories/customer_service_guidelines.xml", file_text=text)
    key = "agents/agent-42/customer_service_guidelines.xml"
    head = s3.head_object(Bucket=BUCKET, Key=key)
    assert head["ContentLength"] == 1536 + 16
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix="agents/")["Contents"]
    assert [(o["Key"], o["Size"]) for o in listed if not is_keystore(o["Key"])] == [(key, 1552)]
    # Format 2: the header names the agent's branch key (made by this first write) instead of
    # carrying a wrapped key; the keystore holds its claim and its (empty) index entry.
    assert sorted(head["Metadata"]) == ["s3m-at", "s3m-bk", "s3m-cm", "s3m-kp", "s3m-mt", "s3m-salt", "s3m-v"]
    assert head["Metadata"]["s3m-v"] == "2"
    claim, index = keystore_names([o["Key"] for o in listed], "agents/agent-42/")
    assert claim == "00000001"
    record = keyring.parse_index(index)
    assert record is not None
    assert (record.branch_id, record.provider) == (head["Metadata"]["s3m-bk"], head["Metadata"]["s3m-kp"])
    assert record.generation == 1
    assert [o["Size"] for o in listed if o["Key"].endswith("/" + index)] == [0]
    assert abs(int(head["Metadata"]["s3m-mt"]) - head["LastModified"].timestamp()) < 5  # the content's time
    flat = "".join(k + v for k, v in head["Metadata"].items())
    assert flat.isascii()
    for hidden in ("agent-42", "customer_service", "/memories", "xxxx"):
        assert hidden not in flat
    body = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    assert b"xxxx" not in body
    assert ok(tool, command="view", path="/memories").split("\n")[2] == (
        "1.5K\t/memories/customer_service_guidelines.xml"
    )


def test_the_content_time_is_authenticated_and_optional() -> None:
    """`s3m-mt` is bound into the associated data; objects without it (older writers) still open."""
    from s3memory.core.envelope import META_MODIFIED

    key = DataKey(bytes(range(32)), b"wrapped", "local-test")
    body, header = seal_format1(b"text", key, agent_id="a", path="/memories/x", modified=1_700_000_000)
    assert header.to_metadata()[META_MODIFIED] == "1700000000"
    parsed = Header.from_metadata(header.to_metadata())
    assert envelope.open_sealed(body, parsed, key.plaintext, agent_id="a", path="/memories/x") == b"text"
    for forged in ("1600000000", "01700000000", "+1700000000", "1.7e9", "", "٣"):
        metadata = {**header.to_metadata(), META_MODIFIED: forged}
        with pytest.raises(IntegrityError):
            envelope.open_sealed(body, Header.from_metadata(metadata), key.plaintext, agent_id="a", path="/memories/x")
    for out_of_range in (str(2**63), "9" * 20, "9" * 5000, "0" * 5000 + "1"):  # 5,000 digits: int() refuses them
        with pytest.raises(IntegrityError):
            Header.from_metadata({**header.to_metadata(), META_MODIFIED: out_of_range})
    without = {k: v for k, v in header.to_metadata().items() if k != META_MODIFIED}
    with pytest.raises(IntegrityError):  # dropping it changes the associated data too
        envelope.open_sealed(body, Header.from_metadata(without), key.plaintext, agent_id="a", path="/memories/x")
    old_body, old_header = seal_format1(b"text", key, agent_id="a", path="/memories/x")
    assert old_header.modified is None
    assert META_MODIFIED not in old_header.to_metadata()
    assert envelope.open_sealed(old_body, old_header, key.plaintext, agent_id="a", path="/memories/x") == b"text"
