"""Failover to a replica region and failback (issue 36), with two regions on moto or an endpoint
(MiniStack: `bash scripts/test-endpoint.sh ministack tests/reliability/test_failover.py`).

The replica buckets are filled by `tests.support.replication.Replicator`, which does what S3
replication does: same bytes and metadata, new version ids, keys in any order, some late. The
keys are the local key source, but in the KMS test: moto's multi-region replica keys do not
decrypt what the primary key wrapped (moto 5.2), MiniStack's do, so that test (`real_conditions`)
runs on MiniStack only.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import boto3
import pytest

from s3memory import KmsKeys, LocalKeys, S3MemoryTool
from tests.support import LOCAL_KEY, ok, unique_bucket
from tests.support import err as err_of
from tests.support.cli import run
from tests.support.endpoint import ENDPOINT, ON_MOTO, empty_bucket
from tests.support.replication import Replicator

REPLICA_REGION = "eu-west-1"
FILES = {
    "/memories/notes.md": "first line\nsecond line\n",
    "/memories/customers/acme.md": "acme: gold tier\n",
    "/memories/customers/globex.md": "globex: trial\n",
    "/memories/customers/initech.md": "initech: churned\n",
}


@dataclass(frozen=True)
class Regions:
    """The test's two sides: their S3 clients, buckets (names of their own) and replicators."""

    east: Any
    west: Any
    primary: str
    keys: str
    replica: str
    replica_keys: str
    memory_replication: Replicator
    keys_replication: Replicator


@pytest.fixture
def regions(aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Regions]:
    """Versioned memory and keystore buckets in two regions (names of the test's own, see
    `unique_bucket`), and the replicators between them."""
    east = boto3.client("s3", region_name="us-east-1", endpoint_url=ENDPOINT)
    west = boto3.client("s3", region_name=REPLICA_REGION, endpoint_url=ENDPOINT)
    names = [unique_bucket(tag) for tag in ("dr-primary", "dr-keys", "dr-replica", "dr-rkeys")]
    made = [(east, names[0]), (east, names[1]), (west, names[2]), (west, names[3])]
    for client, bucket in made:
        if client is west:
            client.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REPLICA_REGION})
        else:
            client.create_bucket(Bucket=bucket)
        client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    monkeypatch.setenv("S3MEMORY_PREFIX", "agents/")
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", base64.b64encode(LOCAL_KEY).decode())
    monkeypatch.setenv("S3MEMORY_FENCE_SECONDS", "0")
    if ENDPOINT:
        monkeypatch.setenv("S3MEMORY_ENDPOINT_URL", ENDPOINT)
    yield Regions(
        east, west, *names,
        memory_replication=Replicator(east, names[0], west, names[2], "agents/"),
        keys_replication=Replicator(east, names[1], west, names[3], "agents/"),
    )  # fmt: skip
    if not ON_MOTO:  # a shared endpoint keeps buckets: leave none behind
        for client, bucket in made:
            empty_bucket(client, bucket)
            client.delete_bucket(Bucket=bucket)


def tool(r: Regions, agent: str, side: str = "primary", workers: int = 4, keys: Any = None) -> S3MemoryTool:
    """A tool of `agent` on one side (the local test key unless `keys`)."""
    s3, bucket, keystore = (r.east, r.primary, r.keys) if side == "primary" else (r.west, r.replica, r.replica_keys)
    return S3MemoryTool(bucket=bucket, agent_id=agent, keys=keys or LocalKeys(LOCAL_KEY), s3_client=s3,
                        prefix="agents/", keystore_bucket=keystore, max_workers=workers)  # fmt: skip


def on(monkeypatch: pytest.MonkeyPatch, r: Regions, side: str) -> None:
    """Point the CLI at one side (S3MEMORY_BUCKET, _KEYSTORE_BUCKET, _REGION)."""
    bucket, keys, region = (
        (r.primary, r.keys, "us-east-1") if side == "primary" else (r.replica, r.replica_keys, REPLICA_REGION)
    )
    monkeypatch.setenv("S3MEMORY_BUCKET", bucket)
    monkeypatch.setenv("S3MEMORY_KEYSTORE_BUCKET", keys)
    monkeypatch.setenv("S3MEMORY_REGION", region)


def view(t: S3MemoryTool, path: str) -> str:
    return ok(t, command="view", path=path)


def text_of(t: S3MemoryTool, path: str) -> str:
    """The file's text, from `view`'s numbered lines."""
    lines = view(t, path).splitlines()[1:]
    return "".join(line.split("\t", 1)[1] + "\n" for line in lines)


def seed(r: Regions, agent: str, keys: Any = None) -> None:
    t = tool(r, agent, keys=keys)
    for path, text in FILES.items():
        ok(t, command="create", path=path, file_text=text)
    ok(t, command="str_replace", path="/memories/notes.md", old_str="second", new_str="2nd")


def versions(s3: Any, bucket: str, prefix: str) -> set[str]:
    resp = s3.list_object_versions(Bucket=bucket, Prefix=prefix)
    return {v["VersionId"] for v in resp.get("Versions", []) + resp.get("DeleteMarkers", [])}


def test_the_replica_reads_every_file_takes_writes_and_fails_back(
    capsys: Any, regions: Regions, monkeypatch: pytest.MonkeyPatch
) -> None:
    for agent in ("ann", "bob"):
        seed(regions, agent)
    copied = regions.memory_replication.run(seed=7) + regions.keys_replication.run(seed=11)
    assert len(copied) == 2 * (5 + 2)  # per agent: five versions of four files; a claim and one key
    # new version ids on the replica, none of the primary's
    assert not versions(regions.east, regions.primary, "agents/") & versions(regions.west, regions.replica, "agents/")
    on(monkeypatch, regions, "replica")
    code, out, err = run(capsys, "verify", "--json")
    report = json.loads(out)
    assert (code, report["ok"], report["problems"]) == (0, True, [])
    assert (report["verified"], report["failed"], report["bytes"]) == (8, 0, 134)  # the edit arrived too
    assert [b["agent"] for b in report["branch_keys"]] == ["ann", "bob"]
    for agent in ("ann", "bob"):
        replica = tool(regions, agent, "replica")
        expected = dict(FILES, **{"/memories/notes.md": "first line\n2nd line\n"})
        assert {path: text_of(replica, path) for path in FILES} == expected
    # failover: writes on the replica
    replica = tool(regions, "ann", "replica")
    ok(replica, command="create", path="/memories/after-failover.md", file_text="written in eu-west-1\n")
    ok(replica, command="str_replace", path="/memories/customers/acme.md", old_str="gold", new_str="platinum")
    code, out, err = run(
        capsys, "doctor", "--replica", regions.primary, "--replica-keystore-bucket", regions.keys, "--json"
    )
    lag = json.loads(out)
    assert err == ""
    assert (code, lag["in_sync"], lag["only_primary"]["objects"], lag["differing"]) == (
        1,
        False,
        ["agents/ann/after-failover.md"],
        ["agents/ann/customers/acme.md"],
    )  # fmt: skip  (seen from the replica: the primary lacks the new file, acme.md differs)
    # failback: the primary returns; replication back, then the primary serves again
    back = regions.memory_replication.back()
    assert [e.key for e in back.run()] == ["agents/ann/after-failover.md", "agents/ann/customers/acme.md"]
    assert regions.keys_replication.back().run() == []  # no new branch key was made on the replica
    on(monkeypatch, regions, "primary")
    code, out, _err = run(capsys, "doctor", "--replica", regions.replica, "--replica-keystore-bucket",
                          regions.replica_keys, "--replica-region", REPLICA_REGION)  # fmt: skip
    assert (code, out.splitlines()[-1]) == (0, "in sync: 26 current objects compared")
    primary = tool(regions, "ann")
    assert text_of(primary, "/memories/after-failover.md") == "written in eu-west-1\n"
    assert text_of(primary, "/memories/customers/acme.md") == "acme: platinum tier\n"
    assert regions.memory_replication.run() == []  # nothing loops back


def test_a_directory_rename_replicated_mid_flight_completes_on_the_replica(regions: Regions) -> None:
    seed(regions, "ann")

    class Crash(Exception):
        pass

    puts = [0]

    def die_at_the_fourth_put(**_: Any) -> None:
        puts[0] += 1
        if puts[0] == 4:  # the intent record, two copies, then the primary region goes away
            raise Crash()

    actor = tool(regions, "ann", workers=1)
    regions.east.meta.events.register("before-call.s3.PutObject", die_at_the_fourth_put, unique_id="dr-crash")
    try:
        with pytest.raises(Crash):
            actor.call({"command": "rename", "old_path": "/memories/customers", "new_path": "/memories/clients"})
    finally:
        regions.east.meta.events.unregister("before-call.s3.PutObject", unique_id="dr-crash")
    listed = regions.east.list_objects_v2(Bucket=regions.primary, Prefix="agents/ann/")["Contents"]
    intents = [o["Key"] for o in listed if "/.s3memory/intents/" in o["Key"]]
    assert len(intents) == 1
    # replicated out of order, one of the sources late: it never reaches the replica before failover
    regions.memory_replication.run(seed=3, late=lambda key: key == "agents/ann/customers/initech.md")
    regions.keys_replication.run()
    replica = tool(regions, "ann", "replica")
    listing = view(replica, "/memories/clients")  # the first command completes the replicated change
    assert "acme.md" in listing
    assert "globex.md" in listing
    assert err_of(replica, command="view", path="/memories/customers/acme.md") == (
        "The path /memories/customers/acme.md does not exist. Please provide a valid path."
    )
    assert text_of(replica, "/memories/clients/acme.md") == "acme: gold tier\n"
    assert text_of(replica, "/memories/clients/globex.md") == "globex: trial\n"
    left = [
        o["Key"] for o in regions.west.list_objects_v2(Bucket=regions.replica, Prefix="agents/ann/").get("Contents", [])
    ]
    assert [k for k in left if "/.s3memory/intents/" in k] == []  # the record is released


def test_history_and_show_on_the_replica_use_its_own_version_ids(
    capsys: Any, regions: Regions, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(regions, "ann")
    regions.memory_replication.run()
    regions.keys_replication.run()
    on(monkeypatch, regions, "replica")
    old = sorted(versions(regions.east, regions.primary, "agents/ann/notes.md"))[0]
    code, out, err = run(capsys, "show", "--agent", "ann", "/memories/notes.md", "--version", old)
    assert (code, out) == (1, "")
    assert err == f"s3memory: error: /memories/notes.md has no version {old}; `s3memory history` lists them\n"
    code, out, err = run(capsys, "history", "--agent", "ann", "/memories/notes.md", "--json")
    assert (code, err) == (0, err if err.endswith(" s\n") else "")  # its summary only
    entries = json.loads(out)["changes"] if isinstance(json.loads(out), dict) else json.loads(out)
    ids = [e["version"] for e in entries]
    assert len(ids) == 2
    assert set(ids) <= versions(regions.west, regions.replica, "agents/ann/notes.md")
    code, out, err = run(capsys, "show", "--agent", "ann", "/memories/notes.md", "--version", ids[-1])
    assert (code, out) == (
        0,
        "Here's the content of /memories/notes.md with line numbers:\n     1\tfirst line\n     2\tsecond line\n",
    )


def history_of(capsys: Any, *argv: str) -> list[dict[str, Any]]:
    code, out, err = run(capsys, "history", "--agent", "ann", *argv, "--json")
    entries: list[dict[str, Any]] = json.loads(out)
    assert (code, re.sub(r"in \S+ s", "in T s", err)) == (0, f"{len(entries)} versions in T s\n")  # its summary only
    return entries


def test_history_on_the_replica_shows_the_writes_as_on_the_primary_with_its_own_version_ids(
    capsys: Any, regions: Regions, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(regions, "ann")
    t = tool(regions, "ann")
    ok(t, command="delete", path="/memories/customers/globex.md")
    time.sleep(1.1)  # S3's times have whole seconds: the copies are stored a second later than every write
    regions.memory_replication.run(seed=5)
    regions.keys_replication.run()
    on(monkeypatch, regions, "primary")
    primary = history_of(capsys)
    on(monkeypatch, regions, "replica")
    replica = history_of(capsys)

    def seen(entries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        """Each file's changes, newest first (files in path order)."""
        found = [(e["path"], e["action"], e["size"], e["command"], e["current"]) for e in entries]
        return sorted(found, key=lambda change: change[0])

    assert seen(replica) == seen(primary) == [
        ("/memories/customers/acme.md", "created", 16, "create", True),
        ("/memories/customers/globex.md", "deleted", None, None, True),
        ("/memories/customers/globex.md", "created", 14, "create", False),
        ("/memories/customers/initech.md", "created", 17, "create", True),
        ("/memories/notes.md", "edited", 20, "str_replace", True),
        ("/memories/notes.md", "created", 23, "create", False),
    ]  # fmt: skip
    # the writes' own (sealed) times, not the times of replication; a delete marker has S3's time only
    written = {(e["path"], e["size"]): e["time"] for e in primary if e["size"] is not None}
    assert {(e["path"], e["size"]): e["time"] for e in replica if e["size"] is not None} == written
    deleted = [e["time"] for e in replica + primary if e["action"] == "deleted"]
    assert deleted[0] > deleted[1]  # stored on the replica later
    # the replica's own version ids, none of the primary's
    ids = {e["version"] for e in replica}
    assert ids == versions(regions.west, regions.replica, "agents/ann/") - versions(
        regions.west, regions.replica, "agents/ann/.s3memory/"
    )
    assert not ids & {e["version"] for e in primary}


def test_restore_on_the_replica_goes_by_the_writes_times_and_leaves_a_replicated_deletion_alone(
    capsys: Any, regions: Regions, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = tool(regions, "ann")
    for name in ("notes", "kept", "gone"):
        ok(t, command="create", path=f"/memories/{name}.md", file_text=f"{name} v1\n")
    at = datetime.now(timezone.utc)  # after those three writes' sealed times, before the next ones'
    ok(t, command="str_replace", path="/memories/notes.md", old_str="v1", new_str="v2")
    ok(t, command="delete", path="/memories/gone.md")
    ok(t, command="create", path="/memories/new.md", file_text="new\n")
    time.sleep(1.1)  # S3's times have whole seconds: every copy is stored after `at`
    regions.memory_replication.run(seed=9)
    regions.keys_replication.run()
    on(monkeypatch, regions, "replica")
    when = at.isoformat()
    listed = regions.west.list_object_versions(Bucket=regions.replica, Prefix="agents/ann/notes.md")["Versions"]
    first_of_notes = listed[-1]["VersionId"]  # listed newest first
    left_alone = (
        f"left alone /memories/gone.md: its state at {when} is unknown (its versions were stored after that time "
        "(by replication from another region), and a deletion of it records no time of its own; restore it on the "
        "bucket it was written to, or `s3memory show` a version)"
    )
    code, out, err = run(capsys, "restore", "--agent", "ann", "--at", at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "--dry-run")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        left_alone,
        "would delete /memories/new.md",
        f"would write /memories/notes.md (version {first_of_notes})",
        f"would restore 2 files to {when}, 1 file left alone: state then unknown",
    ]
    code, out, err = run(capsys, "restore", "--agent", "ann", "--at", at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "--yes")
    assert (code, err.count("error")) == (0, 0)
    lines = out.splitlines()
    assert lines[0] == left_alone
    assert re.sub(r"in \S+ s$", "in T s", lines[1]) == (
        f"restored 2 files to {when} (1 written, 1 deleted, 0 already as they were, 1 file left alone: state then "
        "unknown) in T s"
    )
    replica = tool(regions, "ann", "replica")
    assert text_of(replica, "/memories/notes.md") == "notes v1\n"
    assert text_of(replica, "/memories/kept.md") == "kept v1\n"  # current at `at`: left as it is
    for gone in ("/memories/new.md", "/memories/gone.md"):
        assert err_of(replica, command="view", path=gone) == (
            f"The path {gone} does not exist. Please provide a valid path."
        )


def test_a_tool_on_the_replica_holding_a_file_edits_the_version_replication_delivers_late(regions: Regions) -> None:
    primary = tool(regions, "ann")
    ok(primary, command="create", path="/memories/notes.md", file_text="line one\nline two\n")
    regions.memory_replication.run()
    regions.keys_replication.run()
    replica = tool(regions, "ann", "replica")
    assert text_of(replica, "/memories/notes.md") == "line one\nline two\n"  # now held, with its ETag
    # a write on the primary from before the failover reaches the replica only now
    ok(primary, command="str_replace", path="/memories/notes.md", old_str="line two", new_str="line 2")
    assert [e.key for e in regions.memory_replication.run()] == ["agents/ann/notes.md"]
    ok(replica, command="str_replace", path="/memories/notes.md", old_str="line one", new_str="line 1")
    # applied to the version S3 holds now (If-Match on the held ETag failed): the late write is kept
    assert text_of(tool(regions, "ann", "replica"), "/memories/notes.md") == "line 1\nline 2\n"


@pytest.mark.real_conditions  # moto's multi-region replica keys do not decrypt the primary key's ciphertext
def test_a_tool_and_the_cli_on_the_replica_unwrap_with_the_replica_kms_key_while_the_primary_key_is_out(
    capsys: Any, regions: Regions, monkeypatch: pytest.MonkeyPatch
) -> None:
    east = boto3.client("kms", region_name="us-east-1", endpoint_url=ENDPOINT)
    west = boto3.client("kms", region_name=REPLICA_REGION, endpoint_url=ENDPOINT)
    key = east.create_key(Description="s3memory failover test", MultiRegion=True)["KeyMetadata"]
    replica_key = east.replicate_key(KeyId=key["KeyId"], ReplicaRegion=REPLICA_REGION)["ReplicaKeyMetadata"]["Arn"]
    assert replica_key != key["Arn"]  # the same key id, another region's ARN
    for agent in ("ann", "bob"):
        seed(regions, agent, keys=KmsKeys(key["Arn"], kms_client=east))
    regions.memory_replication.run(seed=4)
    regions.keys_replication.run()
    east.disable_key(KeyId=key["KeyId"])  # the primary region's KMS key is out of reach
    primary = tool(regions, "ann", keys=KmsKeys(key["Arn"], kms_client=east))
    assert err_of(primary, command="view", path="/memories/notes.md") == (
        "Error: The encryption key cannot be used (DisabledException); nothing was changed. An operator must fix "
        "the key configuration."
    )
    expected = dict(FILES, **{"/memories/notes.md": "first line\n2nd line\n"})
    for agent in ("ann", "bob"):  # every replicated file, its branch key unwrapped by the replica key
        replica = tool(regions, agent, "replica", keys=KmsKeys(replica_key, kms_client=west))
        assert {path: text_of(replica, path) for path in FILES} == expected
    replica = tool(regions, "ann", "replica", keys=KmsKeys(replica_key, kms_client=west))
    ok(replica, command="create", path="/memories/after-failover.md", file_text="written in eu-west-1\n")
    fresh = tool(regions, "ann", "replica", keys=KmsKeys(replica_key, kms_client=west))
    assert text_of(fresh, "/memories/after-failover.md") == "written in eu-west-1\n"
    # the CLI with the failover settings: S3MEMORY_KMS_KEY_ID = the replica key
    on(monkeypatch, regions, "replica")
    monkeypatch.delenv("S3MEMORY_LOCAL_KEY")
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", replica_key)
    code, out, _err = run(capsys, "verify", "--json")
    report = json.loads(out)
    assert (code, report["ok"], report["problems"]) == (0, True, [])
    assert (report["verified"], report["failed"]) == (9, 0)  # four files of each agent, and the new one
    assert [b["agent"] for b in report["branch_keys"]] == ["ann", "bob"]


def replicating(regions: Regions) -> None:
    """Replication rules on the primary's memory and keystore buckets, as the Terraform module sets them."""
    for source, destination in ((regions.primary, regions.replica), (regions.keys, regions.replica_keys)):
        regions.east.put_bucket_replication(
            Bucket=source,
            ReplicationConfiguration={
                "Role": "arn:aws:iam::123456789012:role/s3memory-replication",
                "Rules": [{"ID": "memory", "Priority": 1, "Status": "Enabled", "Filter": {"Prefix": "agents/"},
                           "DeleteMarkerReplication": {"Status": "Enabled"},
                           "Destination": {"Bucket": f"arn:aws:s3:::{destination}"}}],
            },
        )  # fmt: skip


def stored(regions: Regions, side: str, agent: str = "ann") -> tuple[int, int]:
    """Every version and delete marker of `agent` on one side: (in the memory bucket, in the keystore bucket)."""
    s3, memory, keys = (
        (regions.east, regions.primary, regions.keys)
        if side == "primary"
        else (regions.west, regions.replica, regions.replica_keys)
    )
    return len(versions(s3, memory, f"agents/{agent}/")), len(versions(s3, keys, f"agents/{agent}/"))


# what each command leaves of an agent it erased: purge keeps the branch keys, shred destroys them
LEFT = {"purge": (0, 2), "shred": (0, 0)}


@pytest.mark.parametrize("command", ["purge", "shred"])
def test_an_erase_on_a_replicated_bucket_names_the_replica_flag_and_deletes_nothing(
    capsys: Any, regions: Regions, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    seed(regions, "ann")
    regions.memory_replication.run()
    regions.keys_replication.run()
    replicating(regions)
    on(monkeypatch, regions, "primary")
    before = (stored(regions, "primary"), stored(regions, "replica"))
    assert before == ((5, 2), (5, 2))  # five versions of four files; a claim and a key entry
    code, out, err = run(capsys, command, "--agent", "ann", "--yes")
    assert (code, out) == (2, "")
    assert err == (
        f"s3memory: error: s3://{regions.primary} replicates to s3://{regions.replica}, and S3 never replicates the "
        f"deletion of a version: {command} here would leave the agent's copies there. Pass --replica "
        f"{regions.replica} (with --replica-keystore-bucket and --replica-region) to erase both sides, or "
        "--this-region-only to erase this side alone; nothing was deleted\n"
    )
    assert (stored(regions, "primary"), stored(regions, "replica")) == before
    # the replica's keystore must be named when the keys have a bucket of their own
    code, out, err = run(capsys, command, "--agent", "ann", "--yes", "--replica", regions.replica)
    assert (code, out) == (2, "")
    assert err == (
        f"s3memory: error: the branch keys are in their own bucket (S3MEMORY_KEYSTORE_BUCKET={regions.keys}): "
        "name the replica's with --replica-keystore-bucket BUCKET\n"
    )
    assert (stored(regions, "primary"), stored(regions, "replica")) == before
    # this side alone, when asked for: the replica keeps its copies, every one of them
    kept = versions(regions.west, regions.replica, "agents/ann/") | versions(regions.west, regions.replica_keys, "")
    code, out, err = run(capsys, command, "--agent", "ann", "--yes", "--this-region-only")
    assert code == 0
    assert stored(regions, "primary") == LEFT[command]
    # (a store that replicates, as MiniStack does, also copies the erase's `erasing` entry to the replica's keystore)
    assert kept <= versions(regions.west, regions.replica, "agents/ann/") | versions(
        regions.west, regions.replica_keys, ""
    )
    assert stored(regions, "replica")[0] == 5


@pytest.mark.parametrize("command", ["purge", "shred"])
def test_an_erase_with_the_replica_named_erases_the_agent_on_both_sides(
    capsys: Any, regions: Regions, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    for agent in ("ann", "bob"):
        seed(regions, agent)
    regions.memory_replication.run()
    regions.keys_replication.run()
    replicating(regions)
    on(monkeypatch, regions, "primary")
    both = ("--replica", regions.replica, "--replica-keystore-bucket", regions.replica_keys,
            "--replica-region", REPLICA_REGION)  # fmt: skip
    code, out, _err = run(capsys, command, "--agent", "ann", "--dry-run", *both)
    summaries = [line.split(" under ")[0] for line in out.splitlines() if line.startswith(f"would {command}")]
    assert (code, len(summaries)) == (0, 2)  # one summary a side, the same counts
    assert (
        summaries[0]
        == summaries[1]
        == {
            "purge": "would purge 5 versions (0 delete markers) of 4 objects",
            "shred": "would shred 2 branch key versions",
        }[command]
    )
    assert (stored(regions, "primary"), stored(regions, "replica")) == ((5, 2), (5, 2))
    code, out, _err = run(capsys, command, "--agent", "ann", "--yes", *both)
    assert code == 0
    assert out.count("the replica: ") == 1
    assert f"the replica: s3://{regions.replica} (keys s3://{regions.replica_keys}, region {REPLICA_REGION})" in out
    assert (stored(regions, "primary"), stored(regions, "replica")) == (LEFT[command], LEFT[command])
    assert (stored(regions, "primary", "bob"), stored(regions, "replica", "bob")) == ((5, 2), (5, 2))  # only ann
    replica = tool(regions, "ann", "replica")
    assert err_of(replica, command="view", path="/memories/notes.md") == (
        "The path /memories/notes.md does not exist. Please provide a valid path."
    )
