"""The name key (generation 0) and the name mode entries in a keystore listing. Pure."""

from __future__ import annotations

import pytest

from s3memory.core import keyring, mode_records
from s3memory.core.keyring import BranchRecord, Ring
from s3memory.errors import IntegrityError

NAME_KEY = BranchRecord("00000000-00112233445566aa", 1_767_225_600, "local-0011223344556677", b"n" * 60)
BRANCH = BranchRecord("00000001-8899aabbccddeeff", 1_767_225_601, "local-0011223344556677", b"b" * 60)


def test_the_name_key_claim_is_not_a_content_claim() -> None:
    ring = Ring.from_listing(
        [("00000000", "e0"), (NAME_KEY.index_name(), ""), ("00000001", "e1"), (BRANCH.index_name(), "")]
    )
    assert ring.name_claimed is True
    assert ring.claims == {1: "e1"}
    assert ring.active_generation == 1
    assert ring.indexed(0) == [NAME_KEY]
    assert ring.indexed(1) == [BRANCH]
    assert ring.names_state is None


def test_an_agent_with_only_its_name_key_has_no_active_branch_key() -> None:
    ring = Ring.from_listing([("00000000", "e0"), (NAME_KEY.index_name(), ""), ("names.00000001.encrypted", "")])
    assert ring.name_claimed is True
    assert ring.claims == {}
    assert ring.active_generation == 0
    assert ring.names_state == (1, "encrypted")


def test_no_name_key_claim_without_the_00000000_object() -> None:
    ring = Ring.from_listing([(NAME_KEY.index_name(), ""), ("00000001", "e1")])  # an index entry is not a claim
    assert ring.name_claimed is False
    assert ring.claims == {1: "e1"}


def test_the_highest_claimed_mode_is_in_force() -> None:
    """Modes 2 and up count once claimed (`names.{seq}`); their entry tells the mode."""
    ring = Ring.from_listing(
        [("names.00000001.encrypted", ""), ("names.00000002", "c2"), ("names.00000002.to-plain", "")]
    )
    assert ring.names_state == (2, "to-plain")
    assert ring.modes == {1: {"encrypted"}, 2: {"to-plain"}}
    assert ring.mode_claims == {2}
    assert ring.claims == {}
    assert ring.records == {}
    later = Ring.from_listing(
        [
            ("names.00000003.plain", ""),
            ("names.00000002", ""),
            ("names.00000003", ""),
            ("names.00000002.to-plain", ""),
        ]
    )  # listing order does not matter
    assert later.names_state == (3, "plain")


def test_an_entry_without_its_claim_is_not_in_force() -> None:
    ring = Ring.from_listing([("names.00000001.encrypted", ""), ("names.00000002.to-plain", "")])
    assert ring.names_state == (1, "encrypted")
    assert Ring.from_listing([("names.00000002.to-plain", "")]).names_state is None


def test_mode_one_is_only_ever_encrypted() -> None:
    """Mode 1 is claimed with generation 1; only a tool with encrypted names records it."""
    for state in ("plain", "to-plain", "to-encrypted"):
        assert Ring.from_listing([(f"names.00000001.{state}", "")]).names_state is None
    assert Ring.from_listing([("names.00000001", "")]).mode_claims == set()  # no claim of mode 1


def test_a_claim_without_a_single_entry_must_be_read() -> None:
    assert Ring.from_listing([("names.00000002", "")]).names_state == (2, "")
    both = Ring.from_listing([("names.00000002", ""), ("names.00000002.plain", ""), ("names.00000002.to-plain", "")])
    assert both.names_state == (2, "")


def test_names_claims() -> None:
    assert mode_records.names_claim(2) == "names.00000002"
    assert mode_records.names_claim(99_999_999) == "names.99999999"
    for seq in (0, 1, 100_000_000):
        with pytest.raises(ValueError, match=r"^name mode claim out of range$"):
            mode_records.names_claim(seq)
    assert mode_records.parse_names_claim(b"to-encrypted") == ("to-encrypted", "")  # written before tags
    tag = "A" * 22
    assert mode_records.parse_names_claim(f"plain.{tag}".encode()) == ("plain", tag)
    assert mode_records.claim_body("plain", tag) == f"plain.{tag}".encode()
    for body in (b"", b"Plain", b"plain\n", b"\xff", b"plain.", b"plain.short", f"plain.{tag}=".encode()):
        with pytest.raises(IntegrityError):
            mode_records.parse_names_claim(body)


@pytest.mark.parametrize(
    "name",
    [
        "names.1.plain",  # not 8 digits
        "names.000000001.plain",  # 9 digits
        "names.00000001.bogus",  # no such state
        "names.00000001.Plain",  # states are lower case
        "names.00000001.plain.x",
        "names.00000001.",
        "Names.00000001.plain",
        "names.0000000a.plain",
        "xnames.00000001.plain",
    ],
)
def test_malformed_mode_entries_are_ignored(name: str) -> None:
    ring = Ring.from_listing([(name, ""), ("00000001", "e1")])
    assert ring.modes == {}
    assert ring.mode_claims == set()
    assert ring.names_state is None
    assert ring.claims == {1: "e1"}
    assert ring.records == {}
    assert ring.name_claimed is False


def test_a_malformed_entry_does_not_hide_a_valid_one() -> None:
    ring = Ring.from_listing([("names.00000001.encrypted", ""), ("names.00000009.bogus", ""), ("names.2.plain", "")])
    assert ring.names_state == (1, "encrypted")


def test_copy_keeps_the_name_key_and_modes_apart_from_the_original() -> None:
    ring = Ring.from_listing([("00000000", "e0"), ("names.00000001.encrypted", "")])
    copied = ring.copy()
    assert (copied.name_claimed, copied.modes, copied.mode_claims) == (True, {1: {"encrypted"}}, set())
    copied.modes[2] = {"to-plain"}
    copied.mode_claims.add(2)
    assert ring.names_state == (1, "encrypted")
    assert copied.names_state == (2, "to-plain")


def test_names_entry_names() -> None:
    assert mode_records.names_entry(1, "plain") == "names.00000001.plain"
    assert mode_records.names_entry(2, "to-encrypted") == "names.00000002.to-encrypted"
    assert mode_records.names_entry(99_999_999, "encrypted") == "names.99999999.encrypted"
    assert mode_records.names_entry(12, "to-plain") == "names.00000012.to-plain"
    for seq, state in [(2, "to-encrypted"), (99_999_999, "encrypted")]:
        listing = [(mode_records.names_claim(seq), ""), (mode_records.names_entry(seq, state), "")]
        assert Ring.from_listing(listing).names_state == (seq, state)


@pytest.mark.parametrize(
    ("seq", "state"),
    [(0, "plain"), (-1, "plain"), (100_000_000, "plain"), (1, "bogus"), (1, ""), (1, "Plain"), (1, "to-")],
)
def test_names_entry_out_of_range(seq: int, state: str) -> None:
    with pytest.raises(ValueError, match=r"^name mode entry out of range$"):
        mode_records.names_entry(seq, state)


def test_the_name_key_is_generation_zero() -> None:
    name_key_id = keyring.new_name_key_id()
    assert keyring.generation_of(name_key_id) == keyring.NAME_KEY_GENERATION == 0
    assert name_key_id != keyring.new_name_key_id()
    assert keyring.claim_name(0) == "00000000"
    assert NAME_KEY.claim_name() == "00000000"
    assert keyring.parse_index(NAME_KEY.index_name()) == NAME_KEY
    assert keyring.parse_claim(NAME_KEY.claim_body(), 0) == NAME_KEY


def test_a_mode_tag_binds_the_agent_the_seq_and_the_mode() -> None:
    key = mode_records.mode_key(bytes(range(32)), "agent-42")
    tag = mode_records.mode_tag(key, 2, "plain")
    assert len(tag) == mode_records.TAG_CHARS
    assert mode_records.tag_holds(key, 2, "plain", tag)
    assert not mode_records.tag_holds(key, 3, "plain", tag)  # not movable to another seq
    assert not mode_records.tag_holds(key, 2, "to-plain", tag)  # nor to another mode
    other = mode_records.mode_key(bytes(range(32)), "agent-43")
    assert not mode_records.tag_holds(other, 2, "plain", tag)  # nor to another agent
    assert not mode_records.tag_holds(mode_records.mode_key(bytes(32), "agent-42"), 2, "plain", tag)


def test_a_tagged_entry_is_read_with_its_tag() -> None:
    tag = "b" * 22
    ring = Ring.from_listing([("names.00000002", ""), (f"names.00000002.plain.{tag}", "")])
    assert ring.names_state == (2, "plain")
    assert ring.tags == {(2, "plain"): tag}
    assert mode_records.names_entry(2, "plain", tag) == f"names.00000002.plain.{tag}"
    assert ring.copy().tags == ring.tags
