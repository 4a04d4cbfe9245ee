"""`s3memory purge`, `prune` and `rewrap`: erasure of every version, age-based deletion, key migration.

An agent's first write creates its keystore (`.s3memory/keys/`: a claim and an index entry per
branch key). purge deletes it with everything else; prune, which deletes memory files, keeps it.
"""

from __future__ import annotations

import base64
import io
import re
import sys
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import boto3
import pytest
from moto.core.exceptions import JsonRESTError
from moto.kms.models import KmsBackend

from s3memory.admin.rewrap import rewrap
from s3memory.core.paths import MemoryPath
from s3memory.storage.admin_store import AdminStore
from s3memory.storage.concurrency import Pool
from s3memory.storage.keys import LocalKeys
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.kms import KmsKeys
from s3memory.storage.vault import Vault
from tests.support import BUCKET, LOCAL_KEY, REGION, ok
from tests.support.cli import run
from tests.support.legacy import data_key, put_format1
from tests.support.views import NoProgress


class TTYInput(io.StringIO):
    def isatty(self) -> bool:
        return True


def versions(s3, prefix: str) -> list[tuple[str, str, bool]]:
    resp = s3.list_object_versions(Bucket=BUCKET, Prefix=prefix)
    found = [(v["Key"], v["VersionId"], False) for v in resp.get("Versions", [])]
    found += [(m["Key"], m["VersionId"], True) for m in resp.get("DeleteMarkers", [])]
    return sorted(found)


def keystore(s3, agent: str) -> list[str]:
    """The keys of the agent's keystore objects: its first write made a claim and an index entry."""
    folder = f"agents/{agent}/.s3memory/keys/"
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=folder).get("Contents", []))
    assert [k.removeprefix(folder)[:9] for k in keys] == ["00000001", "00000001-"]
    return keys


@pytest.fixture
def ann_versions(versioned, make_tool):
    """Agent `ann` with several versions and delete markers, and neighbour `ann2` (a prefix-sharing id)."""
    s3 = versioned
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


def test_purge_erases_every_version_and_delete_marker(capsys, ann_versions):
    s3 = ann_versions
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
    assert lines[-1].endswith(f" s; nothing remains under s3://{BUCKET}/agents/ann/")
    assert err.splitlines()[-1] == f"purge: {len(before)}/{len(before)}"
    assert versions(s3, "agents/ann/") == []
    assert versions(s3, "agents/ann2/") == neighbour  # `ann2` starts with `ann` and is untouched


def test_purge_in_an_unversioned_bucket(capsys, env, make_tool, s3):
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    ok(make_tool("ann2"), command="create", path="/memories/b.md", file_text="b")
    keys, neighbour = keystore(s3, "ann"), keystore(s3, "ann2")
    code, out, _ = run(capsys, "purge", "--agent", "ann", "--yes", "-q")
    assert code == 0
    assert out.splitlines()[:3] == [
        *(f"deleted /memories/{k.removeprefix('agents/ann/')}" for k in keys),  # the keystore goes too
        "deleted /memories/a.md",
    ]
    assert out.splitlines()[3].startswith("purged 3 versions (0 delete markers) of agent ann in ")
    assert versions(s3, "agents/") == [*((k, "null", False) for k in neighbour), ("agents/ann2/b.md", "null", False)]


def test_purge_dry_run_deletes_nothing(capsys, ann_versions):
    before = versions(ann_versions, "agents/ann/")
    code, out, err = run(capsys, "purge", "--agent", "ann", "--dry-run")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == len(before) + 1
    assert all(line.startswith("would delete /memories/") for line in lines[:-1])
    assert lines[-1].startswith(f"would purge {len(before)} versions (")
    assert versions(ann_versions, "agents/ann/") == before


def test_purge_asks_for_the_agent_id(capsys, ann_versions, monkeypatch):
    before = versions(ann_versions, "agents/ann/")
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
    assert versions(ann_versions, "agents/ann/") == before
    monkeypatch.setattr(sys, "stdin", TTYInput("ann\n"))
    code, out, _ = run(capsys, "purge", "--agent", "ann", "-q")
    assert code == 0
    assert versions(ann_versions, "agents/ann/") == []


def test_purge_of_an_empty_agent(capsys, env):
    # A typo is not an erasure that worked: exit 1, naming the agent and the prefix (issue 23).
    assert run(capsys, "purge", "--agent", "nobody", "--yes") == (
        1, "", f"s3memory: error: agent nobody has no objects under s3://{BUCKET}/agents/nobody/ "
               "(prefix 'agents/'); check --agent and --prefix\n",
    )  # fmt: skip


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
    keys = keystore(s3, "ann")  # written with the first file, 100 days ago too
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
    code, out, err = run(capsys, "prune", "--yes", "--agent", "ann", "--older-than", "90d")
    assert code == 0
    assert out.splitlines()[0] == f"deleted /memories/dir/older.md (last modified {stamp}, 5 bytes)"
    assert out.splitlines()[2].startswith("pruned 2 objects, 8 bytes in ")
    assert err == "prune: 1/2\nprune: 2/2\n"
    kept = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="agents/ann/")["Contents"])
    assert kept == [*keys, "agents/ann/new.md"]  # bookkeeping, the keystore with it, is never pruned
    code, out, _ = run(capsys, "prune", "--yes", "--agent", "ann", "--older-than", "1h", "-q")
    assert out.startswith("pruned 0 objects, 0 bytes in ")


@pytest.mark.parametrize(
    "age",
    [["--older-than", "0d"], ["--older-than", "0h"], ["--older-than", "-1d"], ["--older-than=-1d"],
     ["--older-than", "90"], ["--older-than", "1.5d"]],
)  # fmt: skip
def test_prune_accepts_only_a_positive_whole_age_with_a_unit(capsys, env, make_tool, s3, age):
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    keys = keystore(s3, "ann")
    text = age[-1].removeprefix("--older-than=")
    assert run(capsys, "prune", "--yes", "--agent", "ann", *age) == (
        2, "", f"s3memory: error: --older-than: invalid age {text!r}: use a number followed by min, h, d or w, "
               "e.g. 90d, 2w, 12h or 30min (a whole number, 1 or more)\n",
    )  # fmt: skip
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="agents/ann/")["Contents"]] == [
        *keys,
        "agents/ann/a.md",
    ]


def test_prune_refuses_an_age_beyond_a_century(capsys, env, make_tool):
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a")
    assert run(capsys, "prune", "--yes", "--agent", "ann", "--older-than", "999999d") == (
        2, "", "s3memory: error: --older-than: invalid age '999999d': at most 36500d (100 years), e.g. 90d\n"
    )  # fmt: skip
    code, out, err = run(capsys, "prune", "--yes", "--agent", "ann", "--older-than", "36500d", "-q")
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


def copy_source_if_match(client, seen: list[tuple[str, str]]) -> list[tuple[str, object]]:
    """S3 answers 412 to a CopyObject whose CopySourceIfMatch is not the source's ETag; moto ignores it.
    The (event, handler) pairs that emulate S3 on an S3 client (`client` reads the source's ETag)."""

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

    return [("before-parameter-build.s3.CopyObject", remember), ("before-call.s3.CopyObject", check)]


def honour_copy_source_if_match(client, seen: list[tuple[str, str]]) -> None:
    """`client` answers as S3 does to a CopyObject with CopySourceIfMatch (see copy_source_if_match)."""
    for n, (event, handler) in enumerate(copy_source_if_match(client, seen)):
        client.meta.events.register(event, handler, unique_id=f"test-copy-if-match-{n}")


OLD = 1_700_000_000  # the content time of the format-1 files (s3memory 0.1 wrote them)
NOTE = (
    "note: objects in format 1 keep data keys under the old KMS key: `s3memory verify` counts them, "
    "`s3memory reseal` converts them (or run rewrap again with --objects)\n"
)


@pytest.fixture
def new_key(kms):
    key = kms.create_key(Description="new")["KeyMetadata"]["KeyId"]
    kms.create_alias(AliasName="alias/new", TargetKeyId=key)
    return key


@pytest.fixture
def kms_stocked(env, make_tool, new_key):
    """`ann` (3 files) and `bob` (1) written by the tool: format 2, one KMS branch key per agent."""
    for agent, count in (("ann", 3), ("bob", 1)):
        tool = make_tool(agent, use_kms=True)
        for i in range(count):
            ok(tool, command="create", path=f"/memories/f{i}.md", file_text=f"{agent} {i}\n")
    return new_key


@pytest.fixture
def kms_format1(env, s3, kms, kms_key, new_key):
    """`ann` (3 files) and `bob` (1) as s3memory 0.1 left them: format 1, one KMS data key per agent."""
    keys = KmsKeys(kms_key, kms_client=kms)
    for agent, count in (("ann", 3), ("bob", 1)):
        window = data_key(keys, agent)
        for i in range(count):
            put_format1(s3, window, agent, f"f{i}.md", f"{agent} {i}\n", modified=OLD)
    return new_key


def with_s3_semantics(cli_clients, s3) -> list[tuple[str, str]]:
    """The CLI's S3 client honours CopySourceIfMatch; returns the copies it makes."""
    copies: list[tuple[str, str]] = []
    for event, handler in copy_source_if_match(s3, copies):
        cli_clients.hook(event, handler)
    return copies


def listing(s3, prefix: str) -> dict[str, str]:
    return {o["Key"]: o["ETag"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])}


@pytest.mark.moto_only  # rewrap needs KMS ReEncrypt, which MiniStack lacks
def test_rewrap_then_read_with_the_old_key_disabled(
    capsys, kms_format1, make_tool, kms, kms_key, s3, monkeypatch, aws_disabled_keys, cli_clients
):
    """`--objects`: each format-1 object is copied onto itself with its data key rewrapped; a
    format-2 object (ann's new.md, written since) is skipped: its agent's branch key moves instead."""
    ok(make_tool("ann", use_kms=True), command="create", path="/memories/new.md", file_text="format 2\n")
    copies = with_s3_semantics(cli_clients, s3)
    names = ("agents/ann/f0.md", "agents/bob/f0.md", "agents/ann/new.md")
    before = {k: s3.head_object(Bucket=BUCKET, Key=k) for k in names}
    old_blob = base64.b64decode(before["agents/ann/f0.md"]["Metadata"]["s3m-wk"])

    code, out, err = run(capsys, "rewrap", "--yes", "--to-key", "alias/new", "--objects")
    assert code == 0
    # The branch keys of both agents (bob has none), then the 5 objects.
    assert err == "rewrap: 1/2\nrewrap: 2/2\nrewrap: 1/5\nrewrap: 2/5\nrewrap: 3/5\nrewrap: 4/5\nrewrap: 5/5\n"
    assert re.fullmatch(
        r"rewrapped 1 branch key in \d+\.\d\d s \(0 already under alias/new, 3 KMS calls; "
        r"4 format-1 objects rewrapped, 0 already\)\n",
        out,
    )  # ann's branch key, and one data key per agent
    assert sorted(copies) == sorted((key, s3.head_object(Bucket=BUCKET, Key=key)["ETag"]) for key, _ in copies)
    assert len(copies) == 4
    assert "agents/ann/new.md" not in dict(copies)
    for key in ("agents/ann/f0.md", "agents/bob/f0.md"):
        head, after = before[key], s3.head_object(Bucket=BUCKET, Key=key)
        assert after["Metadata"]["s3m-wk"] != head["Metadata"]["s3m-wk"]
        assert after["Metadata"]["s3m-salt"] == head["Metadata"]["s3m-salt"]
        assert after["ETag"] == head["ETag"]  # the ciphertext is untouched
    after = s3.head_object(Bucket=BUCKET, Key="agents/ann/new.md")
    assert (after["Metadata"], after["LastModified"]) == (
        before[names[2]]["Metadata"],
        before[names[2]]["LastModified"],
    )

    kms.disable_key(KeyId=kms_key)
    with pytest.raises(kms.exceptions.DisabledException):
        kms.decrypt(CiphertextBlob=old_blob, EncryptionContext={"s3memory:agent": "ann"})
    code, out, _ = run(capsys, "cat", "--agent", "ann", "/memories/f2.md", "--kms-key-id", kms_format1)
    assert (code, out) == (0, "Here's the content of /memories/f2.md with line numbers:\n     1\tann 2\n")
    code, out, _ = run(capsys, "cat", "--agent", "ann", "/memories/new.md", "--kms-key-id", kms_format1)
    assert (code, out) == (0, "Here's the content of /memories/new.md with line numbers:\n     1\tformat 2\n")
    code, out, _ = run(capsys, "verify", "--kms-key-id", "alias/new", "-q")
    assert code == 0
    assert out.startswith("formats: 1: 4 objects, 2: 1 object\nbranch key ann ")
    assert out.splitlines()[-1].startswith("verified 5 objects, ")

    code, out, _ = run(
        capsys, "rewrap", "--yes", "--to-key", kms_format1, "--agent", "ann", "--objects", "-q"
    )  # resumable
    assert code == 0
    assert re.fullmatch(
        rf"rewrapped 0 branch keys in \d+\.\d\d s \(1 already under {kms_format1}, 2 KMS calls; "
        r"0 format-1 objects rewrapped, 3 already\)\n",
        out,
    )
    assert len(copies) == 4


@pytest.mark.moto_only  # rewrap needs KMS ReEncrypt, which MiniStack lacks
def test_rewrap_of_branch_keys_then_read_with_the_old_key_disabled(
    capsys, kms_stocked, kms, kms_key, s3, monkeypatch, aws_disabled_keys, cli_clients
):
    """Without `--objects` only the agents' keystores change: no object is copied or rewritten."""
    copies = with_s3_semantics(cli_clients, s3)
    objects = {k: s3.head_object(Bucket=BUCKET, Key=k) for k in listing(s3, "agents/") if "/.s3memory/" not in k}
    assert len(objects) == 4
    ann, bob = listing(s3, "agents/ann/.s3memory/keys/"), listing(s3, "agents/bob/.s3memory/keys/")

    code, out, err = run(capsys, "rewrap", "--yes", "--to-key", "alias/new", "--agent", "ann")
    assert code == 0
    assert err == "rewrap: 1/1\n"
    assert re.fullmatch(
        rf"rewrapped 1 branch key in \d+\.\d\d s \(0 already under alias/new, 1 KMS call\)\n{re.escape(NOTE)}", out
    )
    moved = listing(s3, "agents/ann/.s3memory/keys/")
    claim = "agents/ann/.s3memory/keys/00000001"
    assert moved[claim] != ann[claim]  # the claim was rewritten with the new wrapped key
    assert len(moved) == 2  # a new index entry; the old one is gone
    assert set(moved) != set(ann)
    assert listing(s3, "agents/bob/.s3memory/keys/") == bob  # another agent is untouched

    code, out, err = run(capsys, "rewrap", "--yes", "--to-key", "alias/new")
    assert code == 0
    assert err == "rewrap: 1/2\nrewrap: 2/2\n"
    assert re.fullmatch(
        rf"rewrapped 1 branch key in \d+\.\d\d s \(1 already under alias/new, 2 KMS calls\)\n{re.escape(NOTE)}", out
    )
    assert listing(s3, "agents/ann/.s3memory/keys/") == moved
    assert copies == []
    for key, head in objects.items():
        after = s3.head_object(Bucket=BUCKET, Key=key)
        assert (after["ETag"], after["Metadata"], after["LastModified"]) == (
            head["ETag"], head["Metadata"], head["LastModified"]
        )  # fmt: skip

    kms.disable_key(KeyId=kms_key)
    for agent, rel, text in (("ann", "f2.md", "ann 2"), ("bob", "f0.md", "bob 0")):
        code, out, _ = run(capsys, "cat", "--agent", agent, f"/memories/{rel}", "--kms-key-id", kms_stocked)
        assert (code, out) == (0, f"Here's the content of /memories/{rel} with line numbers:\n     1\t{text}\n")
    code, out, _ = run(capsys, "verify", "--kms-key-id", "alias/new", "-q")
    assert code == 0
    assert out.startswith("formats: 2: 4 objects\n")
    assert out.splitlines()[-1].startswith("verified 4 objects, ")

    code, out, _ = run(capsys, "rewrap", "--yes", "--to-key", kms_stocked, "-q")  # resumable, idempotent
    assert code == 0
    assert re.fullmatch(
        rf"rewrapped 0 branch keys in \d+\.\d\d s \(2 already under {kms_stocked}, 2 KMS calls\)\n{re.escape(NOTE)}",
        out,
    )
    assert listing(s3, "agents/ann/.s3memory/keys/") == moved


@pytest.mark.moto_only  # rewrap needs KMS ReEncrypt, which MiniStack lacks
def test_rewrap_reports_objects_it_cannot_move(capsys, kms_format1, s3):
    put_format1(s3, LocalKeys(LOCAL_KEY), "carol", "local.md", "local key", modified=OLD)
    s3.put_object(Bucket=BUCKET, Key="agents/carol/raw.md", Body=b"no header")
    code, out, _ = run(capsys, "rewrap", "--yes", "--to-key", "alias/new", "--objects", "-q")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("failed: carol:/memories/local.md: its data key is not wrapped by KMS (local-")
    assert lines[0].endswith("); export and import it instead")
    assert lines[1] == "failed: carol:/memories/raw.md: failed its integrity check"
    assert re.fullmatch(
        r"rewrapped 0 branch keys in \d+\.\d\d s \(0 already under alias/new, 2 KMS calls; "
        r"4 format-1 objects rewrapped, 0 already\); 2 failed",
        lines[2],
    )
    assert len(lines) == 3


def concurrent_rewrap_run(s3, kms, kms_key, write) -> tuple[object, list[tuple[str, str]], KmsKeys]:
    """rewrap --objects of agent `ann`, with `write()` run once just before its first CopyObject."""
    put_format1(s3, KmsKeys(kms_key, kms_client=kms), "ann", "a.md", "before\n", modified=OLD)
    new_key = kms.create_key()["KeyMetadata"]["KeyId"]
    copies: list[tuple[str, str]] = []
    raced: list[bool] = []

    def concurrent_writer(**_):
        if not raced:
            raced.append(True)
            write()

    s3.meta.events.register_first("before-call.s3.CopyObject", concurrent_writer)
    honour_copy_source_if_match(s3, copies)
    keys = KmsKeys(new_key, kms_client=kms)
    with Pool(2) as pool:
        report = rewrap(AdminStore(s3, BUCKET), [AgentKeyspace("agents/", "ann")], keys, new_key, pool, NoProgress())
    return report, copies, KmsKeys(new_key, kms_client=boto3.client("kms", region_name=REGION))


@pytest.mark.moto_only  # rewrap needs KMS ReEncrypt, which MiniStack lacks
def test_rewrap_retries_when_the_object_changes_between_head_and_copy(s3, kms, kms_key):
    # The concurrent writer is an s3memory 0.1 process (format 1, a data key of its own).
    keys = KmsKeys(kms_key, kms_client=kms)
    report, copies, fresh = concurrent_rewrap_run(
        s3, kms, kms_key, lambda: put_format1(s3, keys, "ann", "a.md", "after\n", modified=OLD)
    )
    assert (report.rewrapped, report.already, report.format2, report.problems) == (1, 0, 0, [])
    assert len(copies) == 2  # the first copy was refused (412), the second carried the new ETag
    assert copies[0][1] != copies[1][1]
    assert report.kms_calls == 2  # the data key of each version
    text, _ = Vault(AdminStore(s3, BUCKET), fresh, "ann", "agents/").read(MemoryPath(("a.md",)))
    assert text == "after\n"  # the concurrent edit survived and reads under the new key


@pytest.mark.moto_only  # rewrap needs KMS ReEncrypt, which MiniStack lacks
def test_rewrap_leaves_an_object_rewritten_in_format_2_meanwhile(s3, kms, kms_key, make_tool):
    tool = make_tool("ann", use_kms=True)
    report, copies, _ = concurrent_rewrap_run(
        s3,
        kms,
        kms_key,
        lambda: ok(tool, command="str_replace", path="/memories/a.md", old_str="before", new_str="after"),
    )
    # The copy was refused (412); read again, the object is in format 2 now: nothing to rewrap in it.
    assert (report.rewrapped, report.already, report.format2, report.problems) == (0, 0, 1, [])
    assert len(copies) == 1
    assert s3.head_object(Bucket=BUCKET, Key="agents/ann/a.md")["Metadata"]["s3m-v"] == "2"
    assert ok(make_tool("ann", use_kms=True), command="view", path="/memories/a.md").endswith("1\tafter")
