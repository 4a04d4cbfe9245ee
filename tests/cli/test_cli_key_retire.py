"""Issue 21 item 2: rotation is not revocation. `retire` (after `reseal`) makes an agent's older
branch keys unusable: an object sealed under one is refused with an honest message and reported by
`verify`, and writes never go back to an older key when a newer generation is deleted."""

from __future__ import annotations

import json
import re
from typing import Any

from s3memory.core import keyring
from s3memory.core.envelope import Header
from tests.support import BUCKET, err, ok
from tests.support.cli import run

ANN = "agents/ann/"
KEYS = ANN + ".s3memory/keys/"
RETIRED = (
    "Error: The file /memories/a.md cannot be read: the key it was encrypted with was retired by an operator. "
    "Retrying will not help."
)
INTEGRITY = "Error: The file /memories/a.md failed its integrity check and cannot be read"


def header(s3: Any, key: str) -> Header:
    return Header.from_metadata(s3.head_object(Bucket=BUCKET, Key=key)["Metadata"])


def names(s3: Any) -> list[str]:
    resp = s3.list_objects_v2(Bucket=BUCKET, Prefix=KEYS)
    return [o["Key"][len(KEYS) :] for o in resp.get("Contents", [])]


def test_retire_after_reseal_refuses_objects_sealed_under_an_old_key(capsys: Any, env: Any, make_tool: Any) -> None:
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="sealed under generation 1")
    old = env.get_object(Bucket=BUCKET, Key=ANN + "a.md")  # what a holder of the old key can seal
    body, metadata = old["Body"].read(), old["Metadata"]
    assert run(capsys, "rotate", "--agent", "ann")[0] == 0
    assert run(capsys, "reseal", "--yes", "--agent", "ann")[0] == 0
    code, out, _ = run(capsys, "retire", "--yes", "--agent", "ann")
    assert (code, out) == (0, "retired 1 branch key of agent ann (up to generation 1)\n")
    assert "retired.00000001" in names(env)
    env.put_object(Bucket=BUCKET, Key=ANN + "a.md", Body=body, Metadata=metadata)
    assert err(make_tool("ann"), command="view", path="/memories/a.md") == RETIRED
    code, out, _ = run(capsys, "verify", "--agent", "ann")
    assert code == 1
    assert (
        "failed: ann:/memories/a.md: it is sealed under a retired branch key (s3memory retire); it is never read "
        "(reseal before retiring)\n"
    ) in out


def test_retire_refuses_while_current_objects_are_sealed_under_old_keys(capsys: Any, env: Any, make_tool: Any) -> None:
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    assert run(capsys, "rotate", "--agent", "ann")[0] == 0
    code, out, _ = run(capsys, "retire", "--agent", "ann", "--dry-run")
    assert (code, out) == (
        0,
        "would retire 1 branch key of agent ann (up to generation 1); 1 current object still sealed under them; "
        "nothing was changed (--dry-run)\n",
    )
    code, out, _ = run(capsys, "retire", "--yes", "--agent", "ann", "--json")
    assert code == 1
    report = json.loads(out)
    assert (report["generation"], report["sealed"], report["retired"]) == (1, 1, False)
    assert report["problems"] == [{"agent": "ann", "path": "keystore", "reason": (
        "not retired: 1 current object still sealed under them; run `s3memory reseal` first")}]  # fmt: skip
    assert not [n for n in names(env) if n.startswith("retired.")]
    assert ok(make_tool("ann"), command="view", path="/memories/a.md").endswith("1\ta")


def test_retire_with_one_key_has_nothing_to_retire(capsys: Any, env: Any, make_tool: Any) -> None:
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    code, out, _ = run(capsys, "retire", "--yes", "--agent", "ann")
    assert (code, out) == (0, "nothing to retire: agent ann has no branch key older than its active one still in use\n")


def test_a_deleted_newer_generation_never_sends_writes_back_to_a_retired_key(
    capsys: Any, env: Any, make_tool: Any
) -> None:
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    assert run(capsys, "rotate", "--agent", "ann")[0] == 0
    assert run(capsys, "reseal", "--yes", "--agent", "ann")[0] == 0
    second = header(env, ANN + "a.md").branch_id
    assert run(capsys, "retire", "--yes", "--agent", "ann")[0] == 0
    for name in names(env):  # someone with delete rights removes generation 2
        if name.startswith("00000002"):
            env.delete_object(Bucket=BUCKET, Key=KEYS + name)
    ok(make_tool("ann"), command="create", path="/memories/b.md", file_text="b")
    written = header(env, ANN + "b.md").branch_id
    assert keyring.generation_of(written) == 2  # a new key, not generation 1 again
    assert written != second
    assert re.fullmatch(r"00000002-[0-9a-f]{16}", written)


def test_retire_also_retires_keys_claimed_out_of_sequence(capsys: Any, env: Any, make_tool: Any) -> None:
    from tests.cli.test_cli_key_sequence import plant

    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    first = header(env, ANN + "a.md").branch_id
    stray = plant(env, 99999999)  # a stolen agent credential's key
    assert run(capsys, "rotate", "--agent", "ann")[0] == 0
    assert run(capsys, "reseal", "--yes", "--agent", "ann")[0] == 0
    code, out, _ = run(capsys, "retire", "--yes", "--agent", "ann", "--json")
    assert code == 0
    report = json.loads(out)
    assert (report["generation"], report["keys"], report["sealed"], report["retired"]) == (1, [first, stray], 0, True)
    obj = env.get_object(Bucket=BUCKET, Key=ANN + "a.md")  # an object naming the planted key
    metadata = dict(obj["Metadata"], **{"s3m-bk": stray})
    env.put_object(Bucket=BUCKET, Key=ANN + "a.md", Body=obj["Body"].read(), Metadata=metadata)
    # a key claimed out of sequence never opens anything (retired or not): it is not a key of the run
    assert err(make_tool("ann"), command="view", path="/memories/a.md") == INTEGRITY
