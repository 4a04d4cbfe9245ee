"""Hidden file names: the segment cipher, its encoding, keyed names and the key-length limit. Pure."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Sequence

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from hypothesis import given, settings
from hypothesis import strategies as st

from s3memory.core import paths
from s3memory.core.names import PLAIN, NameCipher, PlainNames, encoded_segment_bytes
from s3memory.errors import InvalidPath

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
AGENT = "agent-42"
ROOT = "agents/agent-42/"  # 16 bytes
TOKEN = re.compile(r"[A-Za-z0-9_-]+")
B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
CRYPTO_EXAMPLES = settings(max_examples=50, deadline=None)


def _utf8_prefix(text: str, limit: int) -> str:
    """The longest prefix of `text` of at most `limit` UTF-8 bytes."""
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


# A valid segment: any non-empty text without "/" or control characters, not "." or "..", at
# most 255 UTF-8 bytes (the long ones are cut to the limit, so the bound itself is drawn too).
_CHARS = st.characters(exclude_categories=("Cs", "Cc"), exclude_characters="/")
SEGMENTS = st.one_of(
    st.text(alphabet=_CHARS, min_size=1, max_size=12),
    st.text(alphabet=_CHARS, min_size=200, max_size=300).map(lambda s: _utf8_prefix(s, 255)),
).filter(lambda s: s not in ("", ".", ".."))
PATHS = st.lists(SEGMENTS, min_size=1, max_size=5)


def cipher(key: bytes = KEY, agent: str = AGENT) -> NameCipher:
    return NameCipher(key, agent)


def reference_keys(key: bytes, agent: str) -> tuple[AESSIV, bytes]:
    """The documented derivation, rebuilt here: HKDF-SHA256 of the name key with the agent id,
    64 bytes of AES-SIV key and 32 of HMAC key. Stored names stay readable only while it holds."""
    info = b"s3memory/names/v1\0" + len(agent.encode()).to_bytes(2, "big") + agent.encode()
    okm = HKDF(hashes.SHA256(), 96, None, info).derive(key)
    return AESSIV(okm[:64]), okm[64:]


def reference_token(key: bytes, agent: str, parent: Sequence[str], name: bytes) -> str:
    siv, _ = reference_keys(key, agent)
    associated = ("/memories" + "".join("/" + s for s in parent)).encode("utf-8")
    return base64.urlsafe_b64encode(siv.encrypt(name, [associated])).rstrip(b"=").decode("ascii")


# --- the segment cipher ------------------------------------------------------------------


@CRYPTO_EXAMPLES
@given(PATHS)
def test_encode_then_decode_gives_the_names_back(segments: list[str]) -> None:
    tokens = cipher().encode(segments)
    assert len(tokens) == len(segments)
    assert all(TOKEN.fullmatch(t) for t in tokens), tokens
    assert cipher().decode(tokens) == tuple(segments)  # a fresh instance: nothing cached
    for k in range(len(segments)):  # below a directory given by name
        assert cipher().decode(tokens[k:], segments[:k]) == tuple(segments[k:])


@CRYPTO_EXAMPLES
@given(SEGMENTS)
def test_token_length_is_the_documented_expansion(name: str) -> None:
    token = cipher().encode_segment((), name)
    assert len(token) == encoded_segment_bytes(len(name.encode("utf-8")))


def test_encoded_segment_bytes_is_the_token_length_for_every_name_size() -> None:
    c = cipher()
    lengths = {size: len(c.encode_segment(("notes",), "x" * size)) for size in range(1, 256)}
    assert len(lengths) == 255
    assert {size: n for size, n in lengths.items() if n != encoded_segment_bytes(size)} == {}
    two_byte = {k: len(c.encode_segment((), "é" * k)) for k in range(1, 128)}  # 2 UTF-8 bytes each
    assert {k: n for k, n in two_byte.items() if n != encoded_segment_bytes(2 * k)} == {}


def test_encoded_segment_bytes_known_values() -> None:
    # 16 bytes of synthetic IV + the name, base64url without padding.
    assert [encoded_segment_bytes(n) for n in (1, 2, 3, 4, 195, 196, 255)] == [23, 24, 26, 27, 282, 283, 362]


def test_tokens_match_the_documented_construction() -> None:
    """AES-SIV over the name, the parent path as associated data, base64url without padding."""
    c = cipher()
    assert c.encode(("notes", "a.md")) == (
        reference_token(KEY, AGENT, (), b"notes"),
        reference_token(KEY, AGENT, ("notes",), b"a.md"),
    )
    # A pinned vector: a change of derivation would make every stored name unreadable.
    assert c.encode(("notes", "a.md")) == ("OSQqHaQj8WNpQ5VL3GvQbEKEtYj7", "C_AqtNP8aQzStlvsBs3BzBrguII")


def test_encoding_is_deterministic_across_instances() -> None:
    first = cipher().encode(("patients", "jane_doe_hiv.md"))
    second = cipher().encode(("patients", "jane_doe_hiv.md"))
    assert first == second
    assert cipher().encode_segment(("patients",), "jane_doe_hiv.md") == first[1]


def test_equal_names_under_different_parents_differ() -> None:
    c = cipher()
    tokens = {
        c.encode_segment(parent, "notes.md")
        for parent in [(), ("a",), ("b",), ("a", "b"), ("ab",), ("a", "b", "c")]
    }  # fmt: skip
    assert len(tokens) == 6


def test_a_token_decoded_under_another_parent_is_refused() -> None:
    c = cipher()
    token = c.encode_segment(("patients",), "jane_doe_hiv.md")
    assert c.decode_segment(("patients",), token) == "jane_doe_hiv.md"
    for parent in [(), ("public",), ("patients", "patients"), ("Patients",), ("patients ",)]:
        assert c.decode_segment(parent, token) is None, parent
    assert c.decode((token,), ("public",)) is None
    # A whole path moved below another directory: its first segment no longer authenticates.
    tokens = c.encode(("a", "b.md"))
    assert c.decode(tokens, ("x",)) is None


def test_another_agent_or_another_name_key_cannot_decode() -> None:
    tokens = cipher().encode(("patients", "jane_doe_hiv.md"))
    assert cipher(agent="agent-43").decode(tokens) is None
    assert cipher(agent="agent-4").decode(tokens) is None
    assert cipher(key=OTHER_KEY).decode(tokens) is None
    assert cipher(agent="agent-43").encode(("patients",)) != tokens[:1]
    assert cipher(key=OTHER_KEY).encode(("patients",)) != tokens[:1]


@CRYPTO_EXAMPLES
@given(SEGMENTS, st.data())
def test_any_changed_character_is_refused(name: str, data: st.DataObject) -> None:
    c = cipher()
    token = c.encode_segment(("dir",), name)
    position = data.draw(st.integers(0, len(token) - 1))
    replacement = data.draw(st.sampled_from([ch for ch in B64URL if ch != token[position]]))
    tampered = token[:position] + replacement + token[position + 1 :]
    assert c.decode_segment(("dir",), tampered) is None


def test_every_single_character_change_of_one_token_is_refused() -> None:
    c = cipher()
    token = c.encode_segment((), "jane_doe_hiv.md")
    accepted = [
        (position, replacement)
        for position, original in enumerate(token)
        for replacement in B64URL
        if replacement != original
        and c.decode_segment((), token[:position] + replacement + token[position + 1 :]) is not None
    ]
    assert accepted == []
    assert c.decode_segment((), token) == "jane_doe_hiv.md"


def test_a_non_canonical_encoding_of_the_same_bytes_is_refused() -> None:
    c = cipher()
    token = c.encode_segment((), "a")  # 17 bytes: 23 characters, the last one carries 2 unused bits
    assert len(token) == 23
    last = B64URL.index(token[-1])
    variant = token[:-1] + B64URL[last ^ 0b01]
    assert base64.urlsafe_b64decode(variant + "=") == base64.urlsafe_b64decode(token + "=")  # same bytes
    assert c.decode_segment((), variant) is None
    for other in [token + "=", token + "==", token.replace("-", "+").replace("_", "/") + "+/", " " + token]:
        assert c.decode_segment((), other) is None, other
    assert c.decode_segment((), token) == "a"


def test_too_short_tokens_are_refused() -> None:
    c = cipher()
    siv_only = reference_token(KEY, AGENT, (), b"")  # authentic, but the name is empty
    assert len(base64.urlsafe_b64decode(siv_only + "==")) == 16
    for token in ["", "A", "AA", "AAA", "AAAA", siv_only, siv_only[:-1]]:
        assert c.decode_segment((), token) is None, token
        assert c.decode((token,)) is None, token


@pytest.mark.parametrize("name", [b".", b"..", b"a/b", b"/", b"\xff\xfe", b"caf\xc3"])
def test_authentic_tokens_of_names_no_path_has_are_refused(name: bytes) -> None:
    """Even a token made with the right key is refused if it does not hold a valid segment."""
    token = reference_token(KEY, AGENT, ("dir",), name)
    assert cipher().decode_segment(("dir",), token) is None


def test_a_name_key_is_32_bytes() -> None:
    for key in (b"", bytes(16), bytes(31), bytes(33), bytes(64)):
        with pytest.raises(ValueError, match="a name key is 32 bytes"):
            NameCipher(key, AGENT)


# --- keyed names -------------------------------------------------------------------------


def test_keyed_name_is_32_hex_and_keyed() -> None:
    name = cipher().keyed_name("intent", "/memories/patients")
    assert re.fullmatch(r"[0-9a-f]{32}", name)
    _, mac_key = reference_keys(KEY, AGENT)
    assert name == hmac.new(mac_key, b"intent\0/memories/patients", hashlib.sha256).hexdigest()[:32]
    assert name != PLAIN.keyed_name("intent", "/memories/patients")
    assert name != hashlib.sha256(b"s3memory intent\0/memories/patients").hexdigest()[:32]
    assert name == cipher().keyed_name("intent", "/memories/patients")  # deterministic
    others = {
        cipher(key=OTHER_KEY).keyed_name("intent", "/memories/patients"),
        cipher(agent="agent-43").keyed_name("intent", "/memories/patients"),
        cipher().keyed_name("intent", "/memories/patient"),
        cipher().keyed_name("other", "/memories/patients"),
    }
    assert name not in others
    assert len(others) == 4


def test_keyed_name_pinned_vector() -> None:
    assert cipher().keyed_name("intent", "/memories/notes") == "32cf6504e11b8073f48c645d0be7fcf8"


def test_plain_keyed_name_is_the_sha256_name_existing_records_have() -> None:
    expected = hashlib.sha256(b"s3memory intent\0/memories/a").hexdigest()[:32]
    assert PlainNames().keyed_name("intent", "/memories/a") == expected
    assert PLAIN.keyed_name("intent", "/memories/a") == expected


def test_plain_names_are_stored_as_they_are() -> None:
    assert PLAIN.encrypted is False
    assert cipher().encrypted is True
    assert PLAIN.encode(("patients", "jane.md")) == ("patients", "jane.md")
    assert PLAIN.decode(("patients", "jane.md"), ("base",)) == ("patients", "jane.md")


# --- the key-length limit counts the expansion ----------------------------------------------

TOO_LONG = "it is too long to store (keys are limited to 1,024 bytes)"
# Two segments of 255 bytes take 362 key bytes each; a last one of 195 bytes takes 282:
# 16 (root) + 362 + 1 + 362 + 1 + 282 = 1,024. One more byte of name makes the last 283.
AT_LIMIT = "/memories/" + "x" * 255 + "/" + "x" * 255 + "/" + "y" * 195
OVER_LIMIT = AT_LIMIT + "y"


def encrypted_key(root: str, path: paths.MemoryPath) -> str:
    return root + "/".join(cipher().encode(path.segments))


def test_a_path_whose_encrypted_key_is_exactly_1024_bytes_passes() -> None:
    path = paths.parse(AT_LIMIT, key_root=ROOT, encrypted_names=True)
    assert len(encrypted_key(ROOT, path).encode("utf-8")) == 1024
    assert paths.key_bytes(ROOT, path, encrypted_names=True) == 1024


def test_one_byte_more_is_refused_with_the_exact_message() -> None:
    with pytest.raises(InvalidPath) as caught:
        paths.parse(OVER_LIMIT, key_root=ROOT, encrypted_names=True)
    assert str(caught.value) == f"Error: Invalid path {OVER_LIMIT}: {TOO_LONG}"
    path = paths.parse(OVER_LIMIT, key_root=ROOT)  # what it would be: 1,025 bytes
    assert len(encrypted_key(ROOT, path).encode("utf-8")) == 1025
    # The same path at the limit under a root one byte longer: refused too.
    with pytest.raises(InvalidPath) as caught:
        paths.parse(AT_LIMIT, key_root="agents/agent-420/", encrypted_names=True)
    assert str(caught.value) == f"Error: Invalid path {AT_LIMIT}: {TOO_LONG}"


def test_a_path_accepted_with_plain_names_can_be_refused_with_encrypted_names() -> None:
    plain = paths.parse(OVER_LIMIT, key_root=ROOT)
    assert len(paths.object_key(ROOT, plain).encode("utf-8")) == 724
    raw = "/memories/" + "/".join(["k" * 100] * 7)  # 16 + 706 plain key bytes; 16 + 7 * 155 + 6 encrypted
    assert paths.parse(raw, key_root=ROOT).segments == ("k" * 100,) * 7
    with pytest.raises(InvalidPath) as caught:
        paths.parse(raw, key_root=ROOT, encrypted_names=True)
    assert str(caught.value) == f"Error: Invalid path {raw}: {TOO_LONG}"


def test_bookkeeping_paths_are_counted_as_stored_in_clear() -> None:
    raw = "/memories/.s3memory/" + "/".join(["a" * 255, "b" * 255, "c" * 255, "d" * 230])  # exactly 1,024
    path = paths.parse(raw, key_root=ROOT, reserved_ok=True, encrypted_names=True)
    assert paths.key_bytes(ROOT, path, encrypted_names=True) == 1024
    with pytest.raises(InvalidPath) as caught:
        paths.parse(raw + "d", key_root=ROOT, reserved_ok=True, encrypted_names=True)
    assert str(caught.value) == f"Error: Invalid path {raw}d: {TOO_LONG}"


@CRYPTO_EXAMPLES
@given(PATHS)
def test_key_bytes_is_the_length_of_the_encrypted_key(segments: list[str]) -> None:
    path = paths.MemoryPath(tuple(segments))
    assert paths.key_bytes(ROOT, path, encrypted_names=True) == len(encrypted_key(ROOT, path).encode("utf-8"))
