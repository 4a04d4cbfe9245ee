"""The branch-key commands end to end: rotate, reseal, verify's key report, shred, rewrap of branch keys."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from s3memory.core import keyring
from s3memory.core.envelope import Header
from s3memory.core.paths import MemoryPath
from s3memory.errors import IntegrityError
from s3memory.storage.keys import LocalKeys
from tests.support import BUCKET, LOCAL_KEY, CallCounter, ok
from tests.support.cli import run
from tests.support.legacy import put_format1

ANN = "agents/ann/"
KEYS = ANN + ".s3memory/keys/"


def header(s3: Any, key: str) -> Header:
    return Header.from_metadata(s3.head_object(Bucket=BUCKET, Key=key)["Metadata"])


def keystore(s3: Any, bucket: str = BUCKET) -> list[str]:
    resp = s3.list_objects_v2(Bucket=bucket, Prefix=KEYS)
    return [o["Key"][len(KEYS) :] for o in resp.get("Contents", [])]


def test_rotate_makes_a_new_key_active_and_old_objects_stay_readable(capsys: Any, env: Any, make_tool: Any) -> None:
    ann = make_tool("ann")
    ok(ann, command="create", path="/memories/old.md", file_text="old")
    first = header(env, ANN + "old.md").branch_id
    code, out, _ = run(capsys, "rotate", "--agent", "ann")
    assert code == 0
    index = next(n for n in keystore(env) if n.startswith("00000002-"))
    second = keyring.parse_index(index).branch_id  # type: ignore[union-attr]
    assert re.fullmatch(rf"ann: branch key {second} is active \(was {first}\)\nrotated 1 agent in \d+\.\d\d s\n", out)
    fresh = make_tool("ann")  # a new process reads the keystore and writes under generation 2
    ok(fresh, command="create", path="/memories/new.md", file_text="new")
    assert header(env, ANN + "new.md").branch_id == second
    assert ok(fresh, command="view", path="/memories/old.md").endswith("1\told")


def test_rotate_of_an_agent_without_keys_creates_its_first(capsys: Any, env: Any) -> None:
    put_format1(
        env, LocalKeys(LOCAL_KEY), "ann", "legacy.md", "from 0.1\n"
    )  # an agent from before branch keys (one with nothing is refused)
    code, out, _ = run(capsys, "rotate", "--agent", "ann")
    assert code == 0
    assert re.fullmatch(r"ann: branch key 00000001-[0-9a-f]{16} is active \(its first\)\nrotated 1 agent in .*\n", out)


def test_reseal_converts_format_1_keeps_the_content_time_and_is_resumable(
    capsys: Any, env: Any, make_tool: Any
) -> None:
    put_format1(env, LocalKeys(LOCAL_KEY), "ann", "legacy.md", "from 0.1\n", modified=1_700_000_000)
    put_format1(env, LocalKeys(LOCAL_KEY), "ann", "notes/older.md", "no time\n")
    ann = make_tool("ann")
    ok(ann, command="create", path="/memories/new.md", file_text="new")
    assert ok(ann, command="view", path="/memories/legacy.md").endswith("1\tfrom 0.1")
    last_write = int(env.head_object(Bucket=BUCKET, Key=ANN + "notes/older.md")["LastModified"].timestamp())
    code, out, _ = run(capsys, "verify", "--agent", "ann")
    assert code == 0
    assert "formats: 1: 2 objects, 2: 1 object\n" in out
    active = header(env, ANN + "new.md").branch_id

    code, out, _ = run(capsys, "reseal", "--yes", "--agent", "ann")
    assert code == 0
    assert re.fullmatch(rf"resealed 2 objects in \d+\.\d\d s \(1 already under branch key {active}\)\n", out)
    for rel in ("legacy.md", "notes/older.md", "new.md"):
        assert (header(env, ANN + rel).version, header(env, ANN + rel).branch_id) == (2, active)
    assert header(env, ANN + "legacy.md").modified == 1_700_000_000
    assert header(env, ANN + "notes/older.md").modified == last_write
    assert ok(make_tool("ann"), command="view", path="/memories/legacy.md").endswith("1\tfrom 0.1")

    code, out, _ = run(capsys, "reseal", "--yes", "--agent", "ann")  # run again: nothing left to do
    assert code == 0
    assert re.fullmatch(rf"resealed 0 objects in \d+\.\d\d s \(3 already under branch key {active}\)\n", out)


def test_reseal_moves_objects_to_the_new_key_and_verify_reports_references(
    capsys: Any, env: Any, make_tool: Any
) -> None:
    ann = make_tool("ann")
    for name in ("a", "b", "c"):
        ok(ann, command="create", path=f"/memories/{name}.md", file_text=name)
    first = header(env, ANN + "a.md").branch_id
    assert run(capsys, "rotate", "--agent", "ann")[0] == 0
    code, out, _ = run(capsys, "verify", "--agent", "ann", "--json")
    assert code == 0
    report = json.loads(out)
    second = next(b["id"] for b in report["branch_keys"] if b["active"])
    assert report["formats"] == {"2": 3}
    assert report["branch_keys"] == [
        {"agent": "ann", "id": first, "active": False, "objects": 3},
        {"agent": "ann", "id": second, "active": True, "objects": 0},
    ]
    assert run(capsys, "reseal", "--yes", "--agent", "ann")[0] == 0
    code, out, _ = run(capsys, "verify", "--agent", "ann")
    assert code == 0
    assert f"branch key ann {first} (unreferenced): 0 objects\n" in out
    assert f"branch key ann {second} (active): 3 objects\n" in out


def test_reseal_never_clobbers_a_concurrent_write(env: Any, make_tool: Any) -> None:
    from s3memory.admin.reseal import reseal
    from s3memory.storage.concurrency import Pool
    from s3memory.storage.store import ObjectStore
    from s3memory.storage.vault import Vault
    from tests.support.views import NoProgress

    ann = make_tool("ann")
    ok(ann, command="create", path="/memories/a.md", file_text="before")
    vault = Vault(ObjectStore(env, BUCKET), LocalKeys(LOCAL_KEY), "ann", "agents/")
    vault.keystore.rotate()
    writer = make_tool("ann")
    edited = []

    def edit_once(params: Any, **_: Any) -> None:
        if params.get("Key") == ANN + "a.md" and params.get("IfMatch") and not edited:
            edited.append(True)  # another writer edits between reseal's GET and its conditional PUT
            ok(writer, command="str_replace", path="/memories/a.md", old_str="before", new_str="after")

    env.meta.events.register("before-parameter-build.s3.PutObject", edit_once)
    with Pool(2) as pool:
        report = reseal(vault, pool, NoProgress())
    # The edit wins; it was sealed under the active key already, so reseal has nothing left to do.
    assert (report.resealed, report.already, report.problems, edited) == (0, 1, [], [True])
    assert header(env, ANN + "a.md").branch_id == report.active
    assert ok(make_tool("ann"), command="view", path="/memories/a.md").endswith("1\tafter")


def test_shred_keys_only_leaves_objects_that_nobody_can_open(capsys: Any, versioned: Any, make_tool: Any) -> None:
    env = versioned
    ann = make_tool("ann")
    ok(ann, command="create", path="/memories/a.md", file_text="secret")
    ok(ann, command="str_replace", path="/memories/a.md", old_str="secret", new_str="still secret")
    assert run(capsys, "rotate", "--agent", "ann")[0] == 0
    code, out, _ = run(capsys, "shred", "--agent", "ann", "--keys-only", "--yes")
    assert code == 0
    assert out.count("deleted /memories/.s3memory/keys/") == 4
    assert re.search(r"\nshredded 4 branch key versions of agent ann in \d+\.\d\d s\n$", out)
    versions = env.list_object_versions(Bucket=BUCKET, Prefix=KEYS)
    # No key is left, only the note that tells a reader its keys were destroyed (no key, no secret).
    assert [v["Key"] for v in versions.get("Versions", [])] == [KEYS + "shredded"]
    assert versions.get("DeleteMarkers", []) == []
    # Every version of the file is still there, and none can be opened any more.
    old = env.list_object_versions(Bucket=BUCKET, Prefix=ANN + "a.md")["Versions"]
    assert len(old) == 2
    from s3memory.storage.store import ObjectStore
    from s3memory.storage.vault import Vault

    vault = Vault(ObjectStore(env, BUCKET), LocalKeys(LOCAL_KEY), "ann", "agents/")
    for v in old:
        obj = env.get_object(Bucket=BUCKET, Key=ANN + "a.md", VersionId=v["VersionId"])
        stored = type("O", (), {"body": obj["Body"].read(), "metadata": obj["Metadata"]})
        with pytest.raises(IntegrityError):
            vault.open(MemoryPath(("a.md",)), stored)  # type: ignore[arg-type]


def test_shred_destroys_keys_then_purges_every_version(capsys: Any, versioned: Any, make_tool: Any) -> None:
    env = versioned
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="x")
    ok(make_tool("ann2"), command="create", path="/memories/keep.md", file_text="keep")
    code, out, _ = run(capsys, "shred", "--agent", "ann", "--dry-run")
    assert code == 0
    assert out.count("would delete /memories/.s3memory/keys/") == 2
    assert "would delete /memories/a.md\n" not in out
    assert "would shred 2 branch key versions under s3://" in out
    assert "then 1 version under" in out
    code, out, _ = run(capsys, "shred", "--agent", "ann", "--yes")
    assert code == 0
    assert re.search(r"\nshredded 2 branch key versions of agent ann and purged 1 version in \d+\.\d\d s\n$", out)
    assert env.list_object_versions(Bucket=BUCKET, Prefix=ANN).get("Versions", []) == []
    assert ok(make_tool("ann2"), command="view", path="/memories/keep.md").endswith("1\tkeep")


def test_shred_refuses_without_a_terminal_or_yes(capsys: Any, env: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    code, _, err = run(capsys, "shred", "--agent", "ann")
    assert code == 2
    assert "shred asks for the agent id to be typed again, but stdin is not a terminal; pass --yes" in err


def test_keystore_bucket_from_the_environment(
    capsys: Any, env: Any, make_tool: Any, monkeypatch: Any, keystore_bucket: str
) -> None:
    monkeypatch.setenv("S3MEMORY_KEYSTORE_BUCKET", keystore_bucket)
    ok(make_tool("ann", keystore_bucket=keystore_bucket), command="create", path="/memories/a.md", file_text="a")
    assert keystore(env) == []
    assert keystore(env, keystore_bucket)[0] == "00000001"
    code, out, _ = run(capsys, "cat", "--agent", "ann", "/memories/a.md")
    assert (code, out) == (0, "Here's the content of /memories/a.md with line numbers:\n     1\ta\n")
    code, _, _ = run(capsys, "shred", "--agent", "ann", "--yes")
    assert code == 0
    assert keystore(env, keystore_bucket) == []


@pytest.mark.moto_only  # KMS ReEncrypt: MiniStack answers InvalidAction
def test_rewrap_moves_branch_keys_with_a_few_requests(
    capsys: Any, env: Any, make_tool: Any, kms: Any, kms_key: str, monkeypatch: Any
) -> None:
    monkeypatch.delenv("S3MEMORY_LOCAL_KEY")
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", kms_key)
    ann = make_tool("ann", use_kms=True)
    for i in range(20):
        ok(ann, command="create", path=f"/memories/f{i}.md", file_text=str(i))
    new_key = kms.create_key(Description="next")["KeyMetadata"]["KeyId"]
    code, out, _ = run(capsys, "rewrap", "--yes", "--to-key", new_key, "--agent", "ann")
    assert code == 0
    assert re.fullmatch(
        rf"rewrapped 1 branch key in \d+\.\d\d s \(0 already under {new_key}, 1 KMS call\)\n"
        r"note: objects in format 1 keep data keys under the old KMS key: .*\n",
        out,
    )
    kms.disable_key(KeyId=kms_key)
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", new_key)
    from s3memory.storage.kms import KmsKeys

    reader = make_tool("ann", keys=KmsKeys(new_key, kms_client=kms))
    assert ok(reader, command="view", path="/memories/f7.md").endswith("1\t7")
    code, out, _ = run(capsys, "rewrap", "--yes", "--to-key", new_key, "--agent", "ann")  # again: nothing to do
    assert code == 0
    assert "rewrapped 0 branch keys" in out
    assert "(1 already under" in out


@pytest.mark.moto_only  # KMS ReEncrypt: MiniStack answers InvalidAction
def test_rewrap_of_branch_keys_costs_requests_per_key_not_per_object(
    env: Any, make_tool: Any, kms: Any, kms_key: str
) -> None:
    from s3memory.admin.branch_keys import rewrap_keys
    from s3memory.storage.admin_store import AdminStore
    from s3memory.storage.keyspace import AgentKeyspace
    from s3memory.storage.keystore import Keystore
    from s3memory.storage.kms import KmsKeys
    from tests.support.views import NoProgress

    ann = make_tool("ann", use_kms=True)
    for i in range(20):
        ok(ann, command="create", path=f"/memories/f{i}.md", file_text=str(i))
    new_key = kms.create_key(Description="next")["KeyMetadata"]["KeyId"]
    keys = KmsKeys(new_key, kms_client=kms)
    counter = CallCounter(env, kms)
    store = Keystore(AdminStore(env, BUCKET), keys, AgentKeyspace("agents/", "ann"))
    report = rewrap_keys([store], keys, new_key, NoProgress(), source=kms_key)
    assert (report.rewrapped, report.already, report.kms_calls, report.problems) == (1, 0, 1, [])
    # One LIST of the keystore, a new index entry, the claim rewritten, the old entry deleted.
    assert counter.by_op() == {"s3:ListObjectsV2": 1, "kms:ReEncrypt": 1, "s3:PutObject": 2, "s3:DeleteObject": 1}
    assert len(keystore(env)) == 2


@pytest.mark.moto_only  # KMS ReEncrypt: MiniStack answers InvalidAction
def test_rewrap_reports_a_local_branch_key_and_moves_the_kms_ones(
    env: Any, make_tool: Any, kms: Any, kms_key: str
) -> None:
    """An agent switched from a local key to KMS (`rotate` with the new source) keeps a local generation 1."""
    from s3memory.admin.branch_keys import rewrap_keys
    from s3memory.admin.common import Problem
    from s3memory.storage.admin_store import AdminStore
    from s3memory.storage.keyspace import AgentKeyspace
    from s3memory.storage.keystore import Keystore
    from s3memory.storage.kms import KmsKeys
    from tests.support.views import NoProgress

    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="local")
    space = AgentKeyspace("agents/", "ann")
    rotation = Keystore(AdminStore(env, BUCKET), KmsKeys(kms_key, kms_client=kms), space).rotate()
    assert rotation.active.provider == "aws-kms"
    new_key = kms.create_key(Description="next")["KeyMetadata"]["KeyId"]
    keys = KmsKeys(new_key, kms_client=kms)
    report = rewrap_keys([Keystore(AdminStore(env, BUCKET), keys, space)], keys, new_key, NoProgress())
    local = header(env, ANN + "a.md")
    assert report.problems == [
        Problem(
            "ann", f"branch key {local.branch_id}", f"it is not wrapped by KMS ({local.provider}); it stays as it is"
        )
    ]
    assert (report.rewrapped, report.already, report.kms_calls) == (1, 0, 1)
