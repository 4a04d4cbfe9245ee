"""Branch-key records and keystore names (format 2): pure parsing, no storage."""

from __future__ import annotations

import base64

import pytest

from s3memory.core import keyring
from s3memory.core.keyring import BranchRecord, Ring
from s3memory.errors import IntegrityError

BID = "00000003-0123456789abcdef"
RECORD = BranchRecord(BID, 1_767_225_600, "aws-kms", b"\xfa\xfb" * 92)


def test_index_name_round_trips_and_uses_url_safe_base64_without_padding() -> None:
    name = RECORD.index_name()
    assert name.startswith("00000003-0123456789abcdef.1767225600.aws-kms.")
    blob = name.rsplit(".", 1)[1]
    assert "=" not in blob
    assert "+" not in blob
    assert "/" not in blob
    assert keyring.parse_index(name) == RECORD


@pytest.mark.parametrize(
    "name",
    [
        "00000003",  # a claim, not an index entry
        "0000003-0123456789abcdef.1.aws-kms.AAAA",  # 7 digits
        "00000003-0123456789ABCDEF.1.aws-kms.AAAA",  # upper-case hex
        "00000003-0123456789abcdef.01.aws-kms.AAAA",  # leading zero in the time
        "00000003-0123456789abcdef.1.AWS.AAAA",  # provider chars
        "00000003-0123456789abcdef.1.aws-kms.AB",  # non-canonical base64 (pad bits)
        "00000003-0123456789abcdef.1.aws-kms.",  # empty blob
        "00000003-0123456789abcdef.1.aws-kms.AA==",  # padding
        "00000003-0123456789abcdef.1.aws-kms." + "A" * 1400,  # longer than any wrapped key
    ],
)
def test_parse_index_refuses_what_no_writer_produces(name: str) -> None:
    assert keyring.parse_index(name) is None


def test_claim_body_is_canonical_json_and_parses_back() -> None:
    body = RECORD.claim_body()
    wrapped = base64.b64encode(RECORD.wrapped).decode()
    assert body == (
        b'{"created":1767225600,"id":"00000003-0123456789abcdef","provider":"aws-kms","v":1,"wrapped":"'
        + wrapped.encode()
        + b'"}'
    )
    assert keyring.parse_claim(body, 3) == RECORD


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b'{"v":1}',
        b'{"created":"1","id":"00000003-0123456789abcdef","provider":"aws-kms","v":1,"wrapped":"AAAA"}',
        b'{"created":1,"id":"00000003-0123456789abcdef","provider":"aws-kms","v":2,"wrapped":"AAAA"}',
        b'{"created":1,"id":"00000003-0123456789abcdef","provider":"aws-kms","v":1,"wrapped":"!!"}',
    ],
)
def test_parse_claim_refuses_malformed_records(body: bytes) -> None:
    with pytest.raises(IntegrityError):
        keyring.parse_claim(body, 3)


def test_a_claim_of_another_generation_is_refused() -> None:
    with pytest.raises(IntegrityError):
        keyring.parse_claim(RECORD.claim_body(), 4)


def test_ring_active_generation_is_the_highest_claim() -> None:
    first = BranchRecord("00000001-aaaaaaaaaaaaaaaa", 1, "aws-kms", b"k1")
    second = BranchRecord("00000002-bbbbbbbbbbbbbbbb", 2, "aws-kms", b"k2")
    stray = BranchRecord("00000009-cccccccccccccccc", 3, "aws-kms", b"k9")  # an index entry without claim
    ring = Ring.from_listing(
        [("00000001", "e1"), (first.index_name(), ""), ("00000002", "e2"), (second.index_name(), ""),
         (stray.index_name(), ""), ("00000000", "zero"), ("notes", "x")]
    )  # fmt: skip
    assert ring.active_generation == 2
    assert ring.claims == {1: "e1", 2: "e2"}
    assert ring.indexed(2) == [second]
    assert ring.indexed(3) == []
    assert Ring().active_generation == 0


def test_rotation_is_due_after_the_period_and_never_for_a_clock_behind() -> None:
    assert RECORD.due(RECORD.created + 30 * 86400, 30 * 86400)
    assert not RECORD.due(RECORD.created + 30 * 86400 - 1, 30 * 86400)
    assert not RECORD.due(RECORD.created - 5, 30 * 86400)


def test_branch_ids_are_generation_and_random() -> None:
    a, b = keyring.new_branch_id(1), keyring.new_branch_id(1)
    assert a != b
    assert keyring.generation_of(a) == 1
    assert keyring.generation_of(keyring.new_branch_id(12345678)) == 12345678
    with pytest.raises(ValueError, match="out of range"):
        keyring.new_branch_id(0)
    with pytest.raises(IntegrityError):
        keyring.generation_of("1-abc")


def test_the_active_generation_is_the_top_of_the_unbroken_run_from_one() -> None:
    ring = Ring(claims={1: "e1", 2: "e2", 99999999: "far", 5: "e5"})
    assert ring.active_generation == 2
    assert ring.out_of_sequence == [5, 99999999]
    assert ring.next_generation() == (3, "")
    assert Ring(claims={2: "e2"}).active_generation == 0
    assert Ring(claims={2: "e2"}).next_generation() == (
        0,
        "generation 2 was claimed out of sequence, and creating generation 1 would make that key active; "
        "the active key is unchanged",
    )
    assert Ring().out_of_sequence == []


def test_a_rotation_past_the_last_generation_is_refused_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyring, "MAX_GENERATION", 3)
    assert Ring(claims={1: "", 2: "", 3: ""}).next_generation() == (0, "the branch key generations are used up (3)")


def test_a_voided_claim_links_the_run_but_is_never_active() -> None:
    """`rotate` voids a claim out of sequence its key would join (issue 21 item 1): the run goes on
    through it, the key after it is active, and it stays listed as out of sequence."""
    planted = Ring.from_listing([("00000001", "e1"), ("00000003", "e3"), ("00000004", "e4"), ("00000009", "e9")])
    assert planted.next_generation()[0] == 0  # a tool's scheduled rotation refuses: 3 would become active
    assert planted.next_generation(voiding=True) == (2, "")
    assert planted.joining(2) == [3, 4]
    rotated = Ring.from_listing(
        [("00000001", ""), ("00000002", ""), ("00000003", ""), ("00000004", ""), ("00000009", ""),
         ("void.00000003", ""), ("void.00000004", "")]
    )  # fmt: skip
    assert (rotated.run_end, rotated.active_generation) == (4, 2)
    assert rotated.out_of_sequence == [3, 4, 9]
    assert rotated.next_generation() == (5, "")
    assert rotated.joining(5) == []
    assert rotated.copy().void == {3, 4}
    assert Ring.from_listing([("void.00000002", "")]).active_generation == 0  # a void entry claims nothing


def test_an_index_entry_is_trusted_only_with_its_claims_tag() -> None:
    """Issue 32: the claim tag binds an entry to the ETag of its generation's claim."""
    real = BranchRecord("00000001-aaaaaaaaaaaaaaaa", 1, "aws-kms", b"k1", tag=keyring.claim_tag('"etag-1"'))
    planted = BranchRecord("00000002-bbbbbbbbbbbbbbbb", 2, "aws-kms", b"k2", tag=keyring.claim_tag('"guess"'))
    legacy = BranchRecord("00000003-cccccccccccccccc", 3, "aws-kms", b"k3")
    ring = Ring.from_listing(
        [("00000001", '"etag-1"'), ("00000002", '"etag-2"'), ("00000003", '"etag-3"')]
        + [(r.index_name(), "") for r in (real, planted, legacy)]
    )
    assert ring.trusted(1) == [real]
    assert ring.trusted(2) == []  # a tag made before the claim existed
    assert ring.trusted(3) == []  # an entry of an earlier release: read the claim
    assert ring.trusted(4) == []  # not claimed
    twin = BranchRecord("00000001-dddddddddddddddd", 1, "aws-kms", b"k9", tag=real.tag)
    ring = Ring.from_listing([("00000001", '"etag-1"'), (real.index_name(), ""), (twin.index_name(), "")])
    assert ring.trusted(1) == []  # two keys claim one generation: the claim decides
    ring.confirm(1, '"etag-1"', real)
    assert ring.trusted(1) == [real]


def test_bounds_recorded_by_any_entry_count_and_parse_back() -> None:
    bounded = BranchRecord("00000003-0123456789abcdef", 5, "aws-kms", b"k3", retired=2, void=(4, 7), tag="A" * 22)
    name = bounded.index_name()
    assert name.endswith(".r2.v4-7.c" + "A" * 22)
    parsed = keyring.parse_index(name)
    assert parsed is not None
    assert (parsed.retired, parsed.void, parsed.tag) == (2, (4, 7), "A" * 22)
    ring = Ring.from_listing([("00000001", "e1"), ("00000002", "e2"), ("00000003", "e3"), (name, "")])
    assert (ring.retired, ring.listed_retired, sorted(ring.void), sorted(ring.listed_void)) == (2, 0, [4, 7], [])
    assert keyring.parse_claim(bounded.claim_body(), 3).retired == 2
    assert b'"retired":2' in bounded.claim_body()
    assert b'"void":[4,7]' in bounded.claim_body()
