"""`s3memory purge`, `prune` and `rewrap`: erasure of every version, age-based deletion, key migration."""

from __future__ import annotations

import base64
import io
import sys
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import boto3
import pytest
from moto.core.exceptions import JsonRESTError
from moto.kms.models import KmsBackend

from s3memory.admin.common import NoProgress
from s3memory.admin.rewrap import rewrap
from s3memory.config import StorageSettings
from s3memory.storage.admin_store import AdminStore
from s3memory.storage.concurrency import Pool
from s3memory.storage.keys import KmsKeys
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.vault import Vault
from tests.support import BUCKET, REGION, ok
from tests.support.cli import run


class TTYInput(io.StringIO):
    def isatty(self) -> bool:
        return True


def versions(s3, prefix: str) -> list[tuple[str, str, bool]]:
    resp = s3.list_object_versions(Bucket=BUCKET, Prefix=prefix)
    found = [(v["Key"], v["VersionId"], False) for v in resp.get("Versions", [])]
    found += [(m["Key"], m["VersionId"], True) for m in resp.get("DeleteMarkers", [])]
    return sorted(found)


@pytest.fixture
def versioned(env, s3, make_tool):
    """Agent `ann` with several versions and delete markers, and neighbour `ann2` (a prefix-sharing id)."""
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    ann = make_tool("ann")
    ok(ann, command="create", path="/memories/a.md", file_text="v1\n")
    ok(ann, command="str_replace", path="/memories/a.md", old_str="v1", new_str="v2")
    ok(ann, command="create", path="/memories/gone.md", file_text="bye")
    ok(ann, command="delete", path="/memories/gone.md")
    ok(ann, command="create", path="/memories/dir/x.md", file_text="x")
    ok(ann, command="rename", old_path="/memories/dir", new_path="/memories/dir2")  # intent record + markers
    ann2 = make_tool("ann2")
    ok(ann2, command="create", path="/memories/keep.md", file_text="keep")
    ok(ann2, command="str_replace", path="/memories/keep.md", old_str="keep", new_str="kept")
    return s3


# --- purge -----------------------------------------------------------------------------


def test_purge_erases_every_version_and_delete_marker(capsys, versioned):
    s3 = versioned
    before = versions(s3, "agents/ann/")
    neighbour = versions(s3, "agents/ann2/")
    markers = sum(marker for *_, marker in before)
    assert markers >= 3  # the fixture really made history: delete markers ...
    assert len(before) - markers >= 5  # ... and several versions
    code, out, err = run(capsys, "purge", "--agent", "ann", "--yes")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == len(before) + 1
    assert lines[0].startswith("deleted /memories/.s3memory/intents/")
    assert "deleted /memories/a.md (version " in out
    assert "deleted /memories/gone.md (delete marker " in out
    assert lines[-1].startswith(f"purged {len(before)} versions ({markers} delete markers) of agent ann in ")
    assert lines[-1].endswith(" s; nothing remains under s3://s3memory-test-bucket/agents/ann/")
    assert err.splitlines()[-1] == f"purge: {len(before)}/{len(before)}"
    assert versions(s3, "agents/ann/") == []
    assert versions(s3, "agents/ann2/") == neighbour  # `ann2` starts with `ann` and is untouched


def test_purge_in_an_unversioned_bucket(capsys, env, make_tool, s3):
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    ok(make_tool("ann2"), command="create", path="/memories/b.md", file_text="b")
    code, out, _ = run(capsys, "purge", "--agent", "ann", "--yes", "-q")
    assert code == 0
    assert out.splitlines()[0] == "deleted /memories/a.md"
    assert out.splitlines()[1].startswith("purged 1 version (0 delete markers) of agent ann in ")
    assert versions(s3, "agents/") == [("agents/ann2/b.md", "null", False)]


def test_purge_dry_run_deletes_nothing(capsys, versioned):
    before = versions(versioned, "agents/ann/")
    code, out, err = run(capsys, "purge", "--agent", "ann", "--dry-run")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == len(before) + 1
    assert all(line.startswith("would delete /memories/") for line in lines[:-1])
    assert lines[-1].startswith(f"would purge {len(before)} versions (")
    assert versions(versioned, "agents/ann/") == before


def test_purge_asks_for_the_agent_id(capsys, versioned, monkeypatch):
    before = versions(versioned, "agents/ann/")
    monkeypatch.setattr(sys, "stdin", io.StringIO("ann\n"))  # not a terminal
    code, out, err = run(capsys, "purge", "--agent", "ann")
    assert (code, out) == (2, "")
    assert err == (
        "s3memory: error: purge asks for the agent id to be typed again, but stdin is not a terminal; pass --yes\n"
    )
    monkeypatch.setattr(sys, "stdin", TTYInput("ann2\n"))
    code, out, err = run(capsys, "purge", "--agent", "ann")
    assert (code, out) == (1, "")
    assert err.startswith(f"This permanently deletes {len(before)} versions (")
    assert err.endswith(
        "Type the agent id (ann) to confirm: "
        "s3memory: error: purge cancelled: the typed id does not match; nothing was deleted\n"
    )
    assert versions(versioned, "agents/ann/") == before
    monkeypatch.setattr(sys, "stdin", TTYInput("ann\n"))
    code, out, _ = run(capsys, "purge", "--agent", "ann", "-q")
    assert code == 0
    assert versions(versioned, "agents/ann/") == []


def test_purge_of_an_empty_agent(capsys, env):
    code, out, _ = run(capsys, "purge", "--agent", "nobody", "--yes")
    assert (code, out) == (0, "nothing is stored under s3://s3memory-test-bucket/agents/nobody/\n")


# --- prune -----------------------------------------------------------------------------


@pytest.mark.moto_only  # back-dates objects through moto's clock
def test_prune_deletes_only_files_older_than_the_cutoff(capsys, env, make_tool, monkeypatch, s3):
    tool = make_tool("ann")
    past = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(days=100)
    with monkeypatch.context() as m:
        m.setattr("moto.s3.models.utcnow", lambda: past)  # these objects were last written 100 days ago
        ok(tool, command="create", path="/memories/old.md", file_text="old")
        ok(tool, command="create", path="/memories/dir/older.md", file_text="older")
    ok(tool, command="create", path="/memories/new.md", file_text="new")
    code, out, err = run(capsys, "prune", "--agent", "ann", "--older-than", "90d", "--dry-run")
    assert (code, err) == (0, "")
    stamp = past.strftime("%Y-%m-%d %H:%M:%S UTC")
    lines = out.splitlines()
    assert lines[:2] == [
        f"would delete /memories/dir/older.md (last modified {stamp}, 5 bytes)",
        f"would delete /memories/old.md (last modified {stamp}, 3 bytes)",
    ]
    assert lines[2].startswith("would prune 2 objects, 8 bytes in ")
    assert len(lines) == 3
    code, out, err = run(capsys, "prune", "--agent", "ann", "--older-than", "90d")
    assert code == 0
    assert out.splitlines()[0] == f"deleted /memories/dir/older.md (last modified {stamp}, 5 bytes)"
    assert out.splitlines()[2].startswith("pruned 2 objects, 8 bytes in ")
    assert err == "prune: 1/2\nprune: 2/2\n"
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="agents/ann/")["Contents"])
    assert keys == ["agents/ann/new.md"]
    code, out, _ = run(capsys, "prune", "--agent", "ann", "--older-than", "1h", "-q")
    assert out.startswith("pruned 0 objects, 0 bytes in ")


@pytest.mark.parametrize(
    "age",
    [["--older-than", "0d"], ["--older-than", "0h"], ["--older-than", "-1d"], ["--older-than=-1d"],
     ["--older-than", "90"], ["--older-than", "1.5d"]],
)  # fmt: skip
def test_prune_accepts_only_a_positive_whole_age_with_a_unit(capsys, env, make_tool, s3, age):
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    text = age[-1].removeprefix("--older-than=")
    assert run(capsys, "prune", "--agent", "ann", *age) == (
        2, "", f"s3memory: error: --older-than: invalid age {text!r}: use a number followed by d, h or m, "
               "e.g. 90d, 12h or 30m (a whole number, 1 or more)\n",
    )  # fmt: skip
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="agents/ann/")["Contents"]] == [
        "agents/ann/a.md"
    ]


def test_prune_refuses_an_age_beyond_a_century(capsys, env):
    assert run(capsys, "prune", "--agent", "ann", "--older-than", "999999d") == (
        2, "", "s3memory: error: --older-than: invalid age '999999d': at most 36500d (100 years), e.g. 90d\n"
    )  # fmt: skip
    code, out, err = run(capsys, "prune", "--agent", "ann", "--older-than", "36500d", "-q")
    assert (code, err) == (0, "")
    assert out.startswith("pruned 0 objects, 0 bytes in ")


# --- rewrap ----------------------------------------------------------------------------


@pytest.fixture
def aws_disabled_keys(monkeypatch):
    """AWS refuses Decrypt and ReEncrypt under a disabled key (DisabledException); moto does not. Emulate AWS."""
    original = KmsBackend.decrypt

    def decrypt(self, ciphertext_blob, encryption_context, key_id=None):
        plaintext, arn = original(self, ciphertext_blob, encryption_context, key_id)
        if self.keys[arn.rsplit("/", 1)[-1]].key_state != "Enabled":
            raise JsonRESTError("DisabledException", f"{arn} is disabled.")
        return plaintext, arn

    monkeypatch.setattr(KmsBackend, "decrypt", decrypt)


def honour_copy_source_if_match(client, seen: list[tuple[str, str]]) -> None:
    """S3 answers 412 to a CopyObject whose CopySourceIfMatch is not the source's ETag; moto ignores it. Emulate S3."""

    def remember(params, context, **_):
        context["copy"] = dict(params)

    def check(context, **_):
        params = context["copy"]
        head = client.head_object(Bucket=params["Bucket"], Key=params["Key"])  # rewrap copies an object onto itself
        seen.append((params["Key"], params.get("CopySourceIfMatch", "")))
        if params.get("CopySourceIfMatch") not in (None, head["ETag"]):
            error = {"Code": "PreconditionFailed", "Message": "At least one of the pre-conditions did not hold"}
            return SimpleNamespace(status_code=412, headers={}), {"Error": error, "ResponseMetadata": {}}
        return None

    # unique ids: registering again on a reused client is a no-op
    client.meta.events.register("before-parameter-build.s3.CopyObject", remember, unique_id="test-copy-remember")
    client.meta.events.register("before-call.s3.CopyObject", check, unique_id="test-copy-if-match")


@pytest.fixture
def kms_stocked(env, make_tool, kms, kms_key):
    for agent, count in (("ann", 3), ("bob", 1)):
        tool = make_tool(agent, use_kms=True)
        for i in range(count):
            ok(tool, command="create", path=f"/memories/f{i}.md", file_text=f"{agent} {i}\n")
    new_key = kms.create_key(Description="new")["KeyMetadata"]["KeyId"]
    kms.create_alias(AliasName="alias/new", TargetKeyId=new_key)
    return new_key


@pytest.mark.moto_only  # rewrap needs KMS ReEncrypt, which MiniStack lacks
def test_rewrap_then_read_with_the_old_key_disabled(
    capsys, kms_stocked, kms, kms_key, s3, monkeypatch, aws_disabled_keys
):
    copies: list[tuple[str, str]] = []
    clients = StorageSettings.clients

    def clients_with_s3_semantics(self):
        s3_client, kms_client = clients(self)
        honour_copy_source_if_match(s3_client, copies)
        return s3_client, kms_client

    monkeypatch.setattr(StorageSettings, "clients", clients_with_s3_semantics)
    before = {k: s3.head_object(Bucket=BUCKET, Key=k) for k in ("agents/ann/f0.md", "agents/bob/f0.md")}
    old_blob = base64.b64decode(before["agents/ann/f0.md"]["Metadata"]["s3m-wk"])

    code, out, err = run(capsys, "rewrap", "--to-key", "alias/new")
    assert code == 0
    assert err == "rewrap: 1/4\nrewrap: 2/4\nrewrap: 3/4\nrewrap: 4/4\n"
    assert out.startswith("rewrapped 4 objects in ")
    assert out.endswith(" s (0 already under alias/new, 2 KMS calls)\n")  # one data key per agent
    assert sorted(copies) == sorted((key, s3.head_object(Bucket=BUCKET, Key=key)["ETag"]) for key, _ in copies)
    assert len(copies) == 4
    for key, head in before.items():
        after = s3.head_object(Bucket=BUCKET, Key=key)
        assert after["Metadata"]["s3m-wk"] != head["Metadata"]["s3m-wk"]
        assert after["Metadata"]["s3m-salt"] == head["Metadata"]["s3m-salt"]
        assert after["ETag"] == head["ETag"]  # the ciphertext is untouched

    kms.disable_key(KeyId=kms_key)
    with pytest.raises(kms.exceptions.DisabledException):
        kms.decrypt(CiphertextBlob=old_blob, EncryptionContext={"s3memory:agent": "ann"})
    code, out, _ = run(capsys, "cat", "--agent", "ann", "/memories/f2.md", "--kms-key-id", kms_stocked)
    assert (code, out) == (0, "Here's the content of /memories/f2.md with line numbers:\n     1\tann 2\n")
    code, out, _ = run(capsys, "verify", "--kms-key-id", "alias/new", "-q")
    assert code == 0
    assert out.startswith("verified 4 objects, ")

    code, out, _ = run(capsys, "rewrap", "--to-key", kms_stocked, "--agent", "ann", "-q")  # resumable, idempotent
    assert code == 0
    assert out.startswith("rewrapped 0 objects in ")
    assert out.endswith(f" s (3 already under {kms_stocked}, 1 KMS call)\n")
    assert len(copies) == 4


@pytest.mark.moto_only  # rewrap needs KMS ReEncrypt, which MiniStack lacks
def test_rewrap_reports_objects_it_cannot_move(capsys, env, make_tool, kms, kms_stocked, s3):
    ok(make_tool("carol"), command="create", path="/memories/local.md", file_text="local key")
    s3.put_object(Bucket=BUCKET, Key="agents/carol/raw.md", Body=b"no header")
    code, out, _ = run(capsys, "rewrap", "--to-key", "alias/new", "-q")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("failed: carol:/memories/local.md: its data key is not wrapped by KMS (local-")
    assert lines[0].endswith("); export and import it instead")
    assert lines[1] == "failed: carol:/memories/raw.md: failed its integrity check"
    assert lines[2].startswith("rewrapped 4 objects in ")
    assert lines[2].endswith("; 2 failed")


@pytest.mark.moto_only  # rewrap needs KMS ReEncrypt, which MiniStack lacks
def test_rewrap_retries_when_the_object_changes_between_head_and_copy(s3, kms, kms_key, make_tool):
    tool = make_tool("ann", use_kms=True)
    ok(tool, command="create", path="/memories/a.md", file_text="before\n")
    new_key = kms.create_key()["KeyMetadata"]["KeyId"]
    copies: list[tuple[str, str]] = []
    raced: list[bool] = []

    def concurrent_writer(**_):
        if not raced:
            raced.append(True)
            ok(tool, command="str_replace", path="/memories/a.md", old_str="before", new_str="after")

    s3.meta.events.register_first("before-call.s3.CopyObject", concurrent_writer)
    honour_copy_source_if_match(s3, copies)
    store = AdminStore(s3, BUCKET)
    keys = KmsKeys(new_key, kms_client=kms)
    with Pool(2) as pool:
        report = rewrap(store, [AgentKeyspace("agents/", "ann")], keys, new_key, pool, NoProgress())
    assert (report.rewrapped, report.already, report.problems) == (1, 0, [])
    assert len(copies) == 2  # the first copy was refused (412), the second carried the new ETag
    assert copies[0][1] != copies[1][1]
    fresh = KmsKeys(new_key, kms_client=boto3.client("kms", region_name=REGION))
    text, _ = Vault(store, fresh, "ann", "agents/").read(tool.memory.vault.parse("/memories/a.md"))
    assert text == "after\n"  # the concurrent edit survived and reads under the new key
