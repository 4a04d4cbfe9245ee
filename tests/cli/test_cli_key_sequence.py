"""Issue 21 item 1: a branch key claimed out of sequence (a stolen agent credential claiming
generation 99999999, or one after a gap) is never made active; rotation goes on after the
unbroken run; `verify` reports the gap and the keys no tool or operator created."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from s3memory.core import keyring
from s3memory.core.envelope import Header
from s3memory.core.keyring import BranchRecord
from s3memory.storage.keys import LocalKeys
from tests.support import BUCKET, LOCAL_KEY, err, ok
from tests.support.cli import run

ANN = "agents/ann/"
KEYS = ANN + ".s3memory/keys/"


def header(s3: Any, key: str) -> Header:
    return Header.from_metadata(s3.head_object(Bucket=BUCKET, Key=key)["Metadata"])


def plant(s3: Any, generation: int) -> str:
    """What an agent credential can do: claim a generation with a key whose plaintext it keeps."""
    branch_id = f"{generation:08d}-{'ab' * 8}"
    keys = LocalKeys(LOCAL_KEY)
    _plaintext, wrapped = keys.new_branch_key("ann", branch_id)
    record = BranchRecord(branch_id, int(time.time()), keys.provider_id, wrapped)
    s3.put_object(Bucket=BUCKET, Key=KEYS + record.claim_name(), Body=record.claim_body())
    s3.put_object(Bucket=BUCKET, Key=KEYS + record.index_name(), Body=b"")
    return branch_id


def test_a_claim_beyond_a_gap_is_never_the_active_key(env: Any, make_tool: Any) -> None:
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    first = header(env, ANN + "a.md").branch_id
    plant(env, 99999999)
    writer = make_tool("ann")  # a new process lists the keystore
    ok(writer, command="create", path="/memories/b.md", file_text="b")
    assert header(env, ANN + "b.md").branch_id == first


def test_scheduled_rotation_after_a_far_claim_makes_the_next_generation(env: Any, make_tool: Any) -> None:
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    plant(env, 99999999)
    writer = make_tool("ann", key_rotation_days=1)
    writer.memory.vault.keystore._clock = lambda: time.time() + 2 * 86400
    ok(writer, command="create", path="/memories/b.md", file_text="b")  # once a bare ValueError
    assert keyring.generation_of(header(env, ANN + "b.md").branch_id) == 2


def test_a_first_write_refuses_to_join_a_claim_out_of_sequence(env: Any, make_tool: Any) -> None:
    plant(env, 2)  # generation 1 would make it active
    message = err(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    assert message == (  # not "Try again": waiting does not help, an operator must act
        "Error: The encryption key cannot be used (OutOfSequenceClaim); nothing was changed. "
        "An operator must fix the key configuration."
    )


def test_rotate_after_a_far_claim_makes_an_operator_key_active_and_verify_reports_it(
    capsys: Any, env: Any, make_tool: Any
) -> None:
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    first = header(env, ANN + "a.md").branch_id
    stray = plant(env, 99999999)
    code, out, _ = run(capsys, "rotate", "--agent", "ann", "--json")
    assert code == 0  # once exit 1, "unexpected ValueError"
    rotated = json.loads(out)["rotated"]
    assert [(r["previous"], keyring.generation_of(r["active"]), r["created"]) for r in rotated] == [(first, 2, True)]
    second = rotated[0]["active"]
    code, out, _ = run(capsys, "verify", "--agent", "ann", "--json")
    assert code == 1  # once exit 0, with the planted key listed as active
    report = json.loads(out)
    assert [(b["id"], b["active"]) for b in report["branch_keys"]] == [(first, False), (second, True), (stray, False)]
    assert report["problems"] == [
        {"agent": "ann", "path": f"branch key {stray}", "reason": (
            "claimed out of sequence: no tool or operator created it, and it is never used to write; "
            "objects sealed under it fail their integrity check")},
        {"agent": "ann", "path": "keystore", "reason": (
            "branch key generation 3 is missing; the claims after it (1) are out of sequence and never used to write")},
    ]  # fmt: skip


@pytest.mark.parametrize("planted", [[3], [3, 4], [3, 5], [3, 4, 99999999]], ids=str)
def test_rotate_voids_a_claim_that_its_key_would_join_and_makes_its_own_key_active(
    capsys: Any, env: Any, make_tool: Any, planted: list[int]
) -> None:
    """Issue 21 item 1's caveat: generation active + 2 (and more) claimed by a stolen agent credential.
    `rotate` refused before ("creating generation 2 would make that key active"); now it voids the
    claims its key would join to the run, and its own key is active; the planted keys are never used
    to write, and `verify` still reports them."""
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    first = header(env, ANN + "a.md").branch_id
    strays = {g: plant(env, g) for g in planted}
    joined = [3, 4] if 4 in planted else [3]
    code, out, _ = run(capsys, "rotate", "--agent", "ann", "--json")
    assert code == 0  # once exit 1: "generation 3 was claimed out of sequence ..."
    (rotated,) = json.loads(out)["rotated"]
    assert (rotated["previous"], keyring.generation_of(rotated["active"])) == (first, 2)
    assert (rotated["created"], rotated["voided"]) == (True, joined)
    assert [k[len(KEYS) :] for k in _names(env) if "void." in k] == [f"void.{g:08d}" for g in joined]
    # A new process writes under the operator's key, never under a planted one.
    writer = make_tool("ann")
    ok(writer, command="create", path="/memories/b.md", file_text="b")
    assert header(env, ANN + "b.md").branch_id == rotated["active"]
    # The next rotation goes on after the run (voided claims included) and is active too.
    code, out, _ = run(capsys, "rotate", "--agent", "ann", "--json")
    (again,) = json.loads(out)["rotated"]
    assert keyring.generation_of(again["active"]) == max(joined) + 1
    assert again["voided"] == ([5] if 5 in planted else [])  # generation 5 joins now: voided in turn
    ok(make_tool("ann"), command="create", path="/memories/c.md", file_text="c")
    assert header(env, ANN + "c.md").branch_id == again["active"]
    code, out, _ = run(capsys, "verify", "--agent", "ann", "--json")
    assert code == 1
    report = json.loads(out)
    assert [b["id"] for b in report["branch_keys"] if b["active"]] == [again["active"]]
    reported = {p["path"].removeprefix("branch key ") for p in report["problems"] if p["path"] != "keystore"}
    assert reported == set(strays.values())
    for problem in report["problems"]:
        if problem["path"] == f"branch key {strays[3]}":
            assert problem["reason"] == (
                "claimed out of sequence: no tool or operator created it, and it is voided by s3memory rotate; "
                "objects sealed under it fail their integrity check"
            )


def _names(s3: Any) -> list[str]:
    resp = s3.list_objects_v2(Bucket=BUCKET, Prefix=KEYS)
    return [o["Key"] for o in resp.get("Contents", [])]


def test_rotate_dry_run_says_what_the_real_run_does(capsys: Any, env: Any, make_tool: Any) -> None:
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    first = header(env, ANN + "a.md").branch_id
    plant(env, 3)
    before = _names(env)
    code, out, _ = run(capsys, "rotate", "--agent", "ann", "--dry-run")
    assert (code, out) == (
        0,
        f"ann: would make branch key generation 2 active (now {first}); voided generation 3 (claimed out of "
        "sequence; s3memory verify lists it)\n"
        "would rotate 1 agent; nothing was changed (--dry-run)\n",
    )
    assert _names(env) == before
    code, out, _ = run(capsys, "rotate", "--agent", "ann")
    assert code == 0
    assert out.splitlines()[0].endswith(
        f"(was {first}); voided generation 3 (claimed out of sequence; s3memory verify lists it)"
    )
