"""The compliance profile (issue 36): a memory bucket under S3 Object Lock, a keystore bucket without.

moto and MiniStack honour Object Lock: with a default retention every new version is locked, DeleteObjects
answers AccessDenied per locked entry, and a plain DELETE only adds a delete marker. On such a
bucket crypto-shredding still erases an agent: `shred` destroys the branch keys (the keystore
bucket has no lock) and every locked version becomes ciphertext no key opens. `purge` and
`redact` refuse up front instead of deleting half; `prune`, `restore` and `doctor` say what the
lock means for them.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from s3memory import LocalKeys, S3MemoryTool
from tests.support import LOCAL_KEY, ok, unique_bucket
from tests.support import err as err_of
from tests.support.cli import run

ONE_DAY = {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 1}}}


def all_versions(s3: Any, bucket: str, prefix: str) -> list[tuple[str, str, bool]]:
    resp = s3.list_object_versions(Bucket=bucket, Prefix=prefix)
    found = [(v["Key"], v["VersionId"], False) for v in resp.get("Versions", [])]
    found += [(m["Key"], m["VersionId"], True) for m in resp.get("DeleteMarkers", [])]
    return sorted(found)


@pytest.fixture
def lock_bucket() -> str:
    """The name of the test's Object Lock bucket, its own: a shared endpoint keeps every locked
    bucket (its versions cannot be deleted for a day), so no two tests may meet in one."""
    return unique_bucket("locked")


@pytest.fixture
def locked(env: Any, keystore_bucket: str, lock_bucket: str, monkeypatch: Any) -> Any:
    """The CLI on `lock_bucket` (Object Lock, COMPLIANCE, one day) with the keys in `keystore_bucket`;
    agent `ann` has written two files (one edited) and deleted a third."""
    s3 = env
    s3.create_bucket(Bucket=lock_bucket, ObjectLockEnabledForBucket=True)
    s3.put_object_lock_configuration(Bucket=lock_bucket, ObjectLockConfiguration=ONE_DAY)
    monkeypatch.setenv("S3MEMORY_BUCKET", lock_bucket)
    monkeypatch.setenv("S3MEMORY_KEYSTORE_BUCKET", keystore_bucket)
    ann = S3MemoryTool(bucket=lock_bucket, agent_id="ann", keys=LocalKeys(LOCAL_KEY), prefix="agents/", s3_client=s3,
                       keystore_bucket=keystore_bucket)  # fmt: skip
    ok(ann, command="create", path="/memories/a.md", file_text="v1\n")
    ok(ann, command="str_replace", path="/memories/a.md", old_str="v1", new_str="v2")
    ok(ann, command="create", path="/memories/b.md", file_text="b\n")
    ok(ann, command="create", path="/memories/gone.md", file_text="bye")
    ok(ann, command="delete", path="/memories/gone.md")
    return s3


def fresh_tool(s3: Any, bucket: str, keystore_bucket: str) -> S3MemoryTool:
    return S3MemoryTool(bucket=bucket, agent_id="ann", keys=LocalKeys(LOCAL_KEY), prefix="agents/", s3_client=s3,
                        keystore_bucket=keystore_bucket)  # fmt: skip


def test_the_locked_bucket_refuses_to_delete_any_version(locked: Any, lock_bucket: str) -> None:
    s3 = locked
    stored = [(k, v) for k, v, marker in all_versions(s3, lock_bucket, "agents/ann/") if not marker]
    assert len(stored) == 4  # a.md twice, b.md, gone.md
    resp = s3.delete_objects(Bucket=lock_bucket, Delete={"Objects": [{"Key": k, "VersionId": v} for k, v in stored]})
    assert sorted(e["Code"] for e in resp["Errors"]) == ["AccessDenied"] * 4
    assert [(k, v) for k, v, m in all_versions(s3, lock_bucket, "agents/ann/") if not m] == stored


def test_shred_erases_a_locked_agent_whose_objects_cannot_be_deleted(
    capsys: Any, locked: Any, keystore_bucket: str, lock_bucket: str
) -> None:
    s3 = locked
    before = all_versions(s3, lock_bucket, "agents/ann/")
    assert len(all_versions(s3, keystore_bucket, "agents/ann/.s3memory/keys/")) == 2  # the claim and one key
    code, out, err = run(capsys, "shred", "--agent", "ann", "--yes")
    assert (code, err.splitlines()) == (0, ["shred: 1/2", "shred: 2/2"])  # progress only
    lines = out.splitlines()
    assert lines[0].startswith(
        f"s3://{lock_bucket} has Object Lock on (COMPLIANCE mode, default retention 1 day): 4 versions are locked "
        "(until "
    )
    assert lines[0].endswith(
        " UTC); shred destroyed the branch keys and deleted none of the agent's objects: every stored version is "
        "ciphertext no key can open any more; purge after their retention ends deletes them"
    )
    assert [line.split("/")[-1][:9] for line in lines[1:3]] == ["00000001", "00000001-"]
    assert [line.startswith("deleted /memories/.s3memory/keys/") for line in lines[1:3]] == [True, True]
    assert lines[-1].startswith("shredded 2 branch key versions of agent ann in ")
    # the objects are all still there, byte for byte ...
    assert all_versions(s3, lock_bucket, "agents/ann/") == before
    # ... and no key to open them survives: only the note that says they were destroyed
    left = all_versions(s3, keystore_bucket, "agents/ann/.s3memory/keys/")
    assert [(k.rsplit("/", 1)[1], m) for k, _, m in left] == [("shredded", False)]
    answer = err_of(fresh_tool(s3, lock_bucket, keystore_bucket), command="view", path="/memories/a.md")
    assert answer == (
        "Error: The file /memories/a.md cannot be read: the keys it was encrypted with were destroyed. "
        "Retrying will not help."
    )


def test_purge_of_a_locked_agent_deletes_nothing_and_says_why(
    capsys: Any, locked: Any, keystore_bucket: str, lock_bucket: str
) -> None:
    s3 = locked
    before = all_versions(s3, lock_bucket, "agents/ann/")
    keys = all_versions(s3, keystore_bucket, "agents/ann/")
    code, out, err = run(capsys, "purge", "--agent", "ann", "--yes")
    assert (code, out) == (1, "")
    assert err.startswith(
        f"s3memory: error: s3://{lock_bucket} has Object Lock on (COMPLIANCE mode, default retention 1 day): 4 of the "
        "5 versions under the agent's prefix are locked (until "
    )
    assert err.endswith(
        " UTC) and cannot be deleted before then, so purge deleted nothing. `s3memory shred --agent ann` destroys "
        "the agent's branch keys now, which leaves the locked versions unreadable; purge after their retention "
        "ends deletes them\n"
    )
    assert all_versions(s3, lock_bucket, "agents/ann/") == before
    assert all_versions(s3, keystore_bucket, "agents/ann/") == keys  # no `erasing` entry was left either


def test_redact_of_a_locked_version_deletes_nothing(capsys: Any, locked: Any, lock_bucket: str) -> None:
    s3 = locked
    before = all_versions(s3, lock_bucket, "agents/ann/")
    first = next(v for k, v, m in before if k == "agents/ann/a.md" and not m)
    code, out, err = run(capsys, "redact", "--agent", "ann", "/memories/a.md", "--version", first, "--yes")
    assert (code, out) == (1, "")
    assert err.startswith(
        f"s3memory: error: s3://{lock_bucket} has Object Lock on (COMPLIANCE mode, default retention 1 day): 1 of the "
        "1 versions to delete are locked (until "
    )
    assert err.endswith(
        " UTC), so redact deleted nothing. Until then only `s3memory shred` (of the whole agent) makes them "
        "unreadable\n"
    )
    assert all_versions(s3, lock_bucket, "agents/ann/") == before


def test_prune_and_restore_work_on_a_locked_bucket_and_say_what_stays(
    capsys: Any, locked: Any, keystore_bucket: str, lock_bucket: str
) -> None:
    s3 = locked
    note = (
        f"s3://{lock_bucket} has Object Lock on (COMPLIANCE mode, default retention 1 day): {{}} writes new versions "
        "and delete markers only; every version it replaces or hides stays in the bucket until its retention ends"
    )
    code, out, err = run(capsys, "prune", "--agent", "ann", "--older-than", "1d", "--yes")
    assert (code, out.splitlines()[0]) == (0, note.format("prune"))
    first = min(
        v["LastModified"] for v in s3.list_object_versions(Bucket=lock_bucket, Prefix="agents/ann/")["Versions"]
    )
    at = (first - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")  # before the agent's first file
    code, out, err = run(capsys, "restore", "--agent", "ann", "--at", at, "--yes")
    lines = out.splitlines()
    assert (code, "error" in err, lines[0]) == (0, False, note.format("restore"))
    assert lines[-1].startswith("restored 2 files to ")
    assert "(0 written, 2 deleted, 0 already as they were)" in lines[-1]
    tool = fresh_tool(s3, lock_bucket, keystore_bucket)
    assert err_of(tool, command="view", path="/memories/a.md") == (
        "The path /memories/a.md does not exist. Please provide a valid path."
    )
    stored = [v for v in all_versions(s3, lock_bucket, "agents/ann/") if not v[2] and "/.s3memory/" not in v[0]]
    assert len(stored) == 4  # every locked version is still there: restore hid them behind delete markers


def test_doctor_reports_the_profile(capsys: Any, locked: Any, lock_bucket: str) -> None:
    code, out, err = run(capsys, "doctor", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["object_lock"] == {
        "known": True, "enabled": True, "mode": "COMPLIANCE", "days": 1, "years": None,
        "keystore": {"known": True, "enabled": False, "mode": None, "days": None, "years": None},
        "keys_locked": False,
    }  # fmt: skip
    code, out, err = run(capsys, "doctor")
    assert (code, err) == (0, "")
    assert [line for line in out.splitlines() if line.startswith(("object lock", "KEYS"))] == [
        f"object lock: s3://{lock_bucket} has Object Lock on (COMPLIANCE mode, default retention 1 day)",
        "object lock: purge and redact refuse while a version they would delete is retained; shred destroys the "
        "keys and keeps the objects (unreadable); prune and restore add versions and delete markers; this check's "
        "own scratch versions under agents/.s3memory-doctor/ stay until their retention ends",
    ]


def test_keys_in_the_locked_bucket_are_refused_by_doctor_and_shred(
    capsys: Any, env: Any, monkeypatch: Any, lock_bucket: str
) -> None:
    s3 = env
    s3.create_bucket(Bucket=lock_bucket, ObjectLockEnabledForBucket=True)
    s3.put_object_lock_configuration(Bucket=lock_bucket, ObjectLockConfiguration=ONE_DAY)
    monkeypatch.setenv("S3MEMORY_BUCKET", lock_bucket)
    ann = S3MemoryTool(bucket=lock_bucket, agent_id="ann", keys=LocalKeys(LOCAL_KEY), prefix="agents/", s3_client=s3)
    ok(ann, command="create", path="/memories/a.md", file_text="a")
    code, out, err = run(capsys, "doctor")
    assert (code, err) == (1, "")
    assert out.splitlines()[-1] == (
        "KEYS LOCKED: the branch keys are in the memory bucket itself, which has Object Lock: shred cannot destroy "
        "them, so no agent can be erased before its retention ends; keep them in a bucket without Object Lock "
        "(S3MEMORY_KEYSTORE_BUCKET)"
    )
    before = all_versions(s3, lock_bucket, "agents/ann/")
    code, out, err = run(capsys, "shred", "--agent", "ann", "--yes")
    assert (code, out) == (1, "")
    assert err.startswith(
        f"s3memory: error: the agent's branch keys are in s3://{lock_bucket}, which has Object Lock on"
    )
    assert ": 2 branch key versions are locked (until " in err
    assert err.endswith(
        " UTC), so shred cannot destroy them and deleted nothing. Crypto-shredding needs the keys in a bucket "
        "without Object Lock: set S3MEMORY_KEYSTORE_BUCKET (the Terraform module's keystore bucket) for new agents\n"
    )
    assert all_versions(s3, lock_bucket, "agents/ann/") == before


def test_an_unlocked_bucket_reports_no_object_lock(capsys: Any, env: Any) -> None:
    code, out, err = run(capsys, "doctor", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["object_lock"]["enabled"] is False
    assert json.loads(out)["object_lock"]["known"] is True
    assert "object lock" not in run(capsys, "doctor")[1]
