"""The per-agent key hierarchy: branch keys in the keystore, what they cost, and how writers converge."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from s3memory import S3MemoryTool
from s3memory.core import keyring
from s3memory.core.envelope import Header
from s3memory.storage.keys import LocalKeys
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.keystore import Keystore
from s3memory.storage.kms import KmsKeys
from s3memory.storage.store import ObjectStore
from tests.support import BUCKET, LOCAL_KEY, CallCounter, err, keystore_keys, ok

AGENT = "agent-42"
ROOT = f"agents/{AGENT}/"
FOLDER = ROOT + ".s3memory/keys/"
INTEGRITY = "Error: The file /memories/a.md failed its integrity check and cannot be read"


def header_of(s3: Any, key: str) -> Header:
    return Header.from_metadata(s3.head_object(Bucket=BUCKET, Key=key)["Metadata"])


def test_first_write_creates_generation_one_and_the_object_names_it(tool: S3MemoryTool, s3: Any) -> None:
    ok(tool, command="create", path="/memories/a.md", file_text="hello")
    names = keystore_keys(s3, ROOT)
    assert len(names) == 2
    assert names[0] == "00000001"
    record = keyring.parse_index(names[1])
    assert record is not None
    assert record.generation == 1
    header = header_of(s3, f"agents/{AGENT}/a.md")
    assert (header.version, header.branch_id, header.wrapped_key) == (2, record.branch_id, b"")
    assert set(s3.head_object(Bucket=BUCKET, Key=f"agents/{AGENT}/a.md")["Metadata"]) == {
        "s3m-v", "s3m-kp", "s3m-bk", "s3m-salt", "s3m-cm", "s3m-mt", "s3m-at"
    }  # fmt: skip


def test_cold_reader_of_30_files_from_30_writers_makes_one_kms_call(
    make_tool: Callable[..., S3MemoryTool], s3: Any, kms: Any, kms_key: str
) -> None:
    for i in range(30):  # 30 tool instances, each with its own key cache, as 30 processes have
        writer = make_tool(keys=KmsKeys(kms_key, kms_client=kms))
        ok(writer, command="create", path=f"/memories/f{i:02d}.md", file_text=f"file {i}")
    counter = CallCounter(s3, kms)
    reader = make_tool(keys=KmsKeys(kms_key, kms_client=kms))
    for i in range(30):
        assert ok(reader, command="view", path=f"/memories/f{i:02d}.md").endswith(f"1\tfile {i}")
    assert counter.count("kms") == 1
    # The first view lists the root (intents, file count) and finds the keystore there: no extra LIST.
    assert counter.by_op().get("s3:ListObjectsV2") == 1
    assert counter.count("s3") == 31


def test_40_creates_and_40_views_in_one_process_make_one_kms_call(
    make_tool: Callable[..., S3MemoryTool], s3: Any, kms: Any, kms_key: str
) -> None:
    counter = CallCounter(s3, kms)
    tool = make_tool(keys=KmsKeys(kms_key, kms_client=kms))
    for i in range(40):
        ok(tool, command="create", path=f"/memories/n{i}.md", file_text="x")
    for i in range(40):
        ok(tool, command="view", path=f"/memories/n{i}.md")
    assert counter.by_op().get("kms:GenerateDataKey") == 1
    assert counter.count("kms") == 1


def test_warm_tool_makes_no_keystore_request(tool: S3MemoryTool, s3: Any, counter: CallCounter) -> None:
    ok(tool, command="create", path="/memories/a.md", file_text="a")
    touched: list[str] = []
    s3.meta.events.register(
        "before-parameter-build.s3.*", lambda params, **_: touched.append(params.get("Key") or params.get("Prefix"))
    )
    counter.reset()
    ok(tool, command="create", path="/memories/b.md", file_text="b")
    ok(tool, command="view", path="/memories/a.md")
    assert counter.count("kms") == 0
    assert touched
    assert not [t for t in touched if ".s3memory" in str(t)]


@pytest.mark.parametrize("writers", [8])
def test_concurrent_first_writers_converge_on_one_key(
    make_tool: Callable[..., S3MemoryTool], s3: Any, writers: int
) -> None:
    tools = [make_tool(keys=LocalKeys(LOCAL_KEY)) for _ in range(writers)]
    barrier = threading.Barrier(writers)
    errors: list[BaseException] = []

    def first_write(i: int) -> None:
        try:
            barrier.wait()
            ok(tools[i], command="create", path=f"/memories/w{i}.md", file_text=f"writer {i}")
            ok(tools[i], command="create", path=f"/memories/again{i}.md", file_text="second")
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=first_write, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    names = keystore_keys(s3, ROOT)
    assert [n for n in names if keyring.parse_index(n)] == names[1:]
    assert names[0] == "00000001"
    assert len(names) == 2  # one claim, one index entry: one key
    bid = keyring.parse_index(names[1]).branch_id  # type: ignore[union-attr]
    used = {header_of(s3, f"agents/{AGENT}/{p}{i}.md").branch_id for i in range(writers) for p in ("w", "again")}
    assert used == {bid}
    reader = make_tool(keys=LocalKeys(LOCAL_KEY))
    for i in range(writers):
        assert ok(reader, command="view", path=f"/memories/w{i}.md").endswith(f"writer {i}")


def test_rotation_on_schedule_and_old_objects_stay_readable(make_tool: Callable[..., S3MemoryTool], s3: Any) -> None:
    keys = LocalKeys(LOCAL_KEY)
    tool = make_tool(keys=keys)
    ok(tool, command="create", path="/memories/old.md", file_text="old")
    clock = [0.0]
    keystore = tool.memory.vault.keystore
    keystore._clock = lambda: clock[0]
    import time

    clock[0] = time.time() + 31 * 86400
    ok(tool, command="create", path="/memories/new.md", file_text="new")
    old, new = header_of(s3, f"agents/{AGENT}/old.md"), header_of(s3, f"agents/{AGENT}/new.md")
    assert (keyring.generation_of(old.branch_id), keyring.generation_of(new.branch_id)) == (1, 2)
    assert sorted(n for n in keystore_keys(s3, ROOT) if keyring.parse_index(n) is None) == ["00000001", "00000002"]
    fresh = make_tool(keys=LocalKeys(LOCAL_KEY))
    assert ok(fresh, command="view", path="/memories/old.md").endswith("1\told")
    assert ok(fresh, command="view", path="/memories/new.md").endswith("1\tnew")


def test_claim_without_index_entry_is_read_once_and_healed(
    make_tool: Callable[..., S3MemoryTool], s3: Any, counter: CallCounter
) -> None:
    ok(make_tool(), command="create", path="/memories/a.md", file_text="a")
    index = next(n for n in keystore_keys(s3, ROOT) if keyring.parse_index(n))
    s3.delete_object(Bucket=BUCKET, Key=FOLDER + index)  # as if the writer stopped after its claim
    counter.reset()
    reader = make_tool()
    assert ok(reader, command="view", path="/memories/a.md").endswith("1\ta")
    assert counter.by_op() == {"s3:ListObjectsV2": 1, "s3:GetObject": 2, "s3:PutObject": 1}
    assert index in keystore_keys(s3, ROOT)
    counter.reset()
    assert ok(reader, command="view", path="/memories/a.md").endswith("1\ta")
    assert counter.by_op() == {"s3:GetObject": 1}  # the claim was read once, not at every command


def test_object_naming_an_unknown_branch_key_fails_integrity(tool: S3MemoryTool, s3: Any) -> None:
    ok(tool, command="create", path="/memories/a.md", file_text="a")
    key = f"agents/{AGENT}/a.md"
    obj = s3.get_object(Bucket=BUCKET, Key=key)
    metadata = dict(obj["Metadata"], **{"s3m-bk": "00000009-0000000000000000"})
    s3.put_object(Bucket=BUCKET, Key=key, Body=obj["Body"].read(), Metadata=metadata)
    assert err(tool, command="view", path="/memories/a.md") == INTEGRITY


def test_keystore_in_its_own_bucket(
    make_tool: Callable[..., S3MemoryTool], s3: Any, counter: CallCounter, keystore_bucket: str
) -> None:
    tool = make_tool(keystore_bucket=keystore_bucket)
    ok(tool, command="create", path="/memories/a.md", file_text="a")
    assert keystore_keys(s3, ROOT) == []
    assert keystore_keys(s3, ROOT, bucket=keystore_bucket)[0] == "00000001"
    counter.reset()
    reader = make_tool(keystore_bucket=keystore_bucket)
    assert ok(reader, command="view", path="/memories/a.md").endswith("1\ta")
    # The root listing of the memory bucket cannot stand in for the keystore's: one LIST of it.
    assert counter.by_op() == {"s3:ListObjectsV2": 2, "s3:GetObject": 1}
    plain = make_tool()  # the same agent without the keystore bucket cannot open the file
    assert err(plain, command="view", path="/memories/a.md") == INTEGRITY


def test_forged_index_entry_in_the_memory_bucket_is_ignored_with_a_keystore_bucket(
    make_tool: Callable[..., S3MemoryTool], s3: Any, keystore_bucket: str
) -> None:
    ok(make_tool(keystore_bucket=keystore_bucket), command="create", path="/memories/a.md", file_text="a")
    s3.put_object(Bucket=BUCKET, Key=FOLDER + "00000005", Body=b"{}")
    keystore = Keystore(ObjectStore(s3, keystore_bucket), LocalKeys(LOCAL_KEY), AgentKeyspace("agents/", AGENT))
    assert keystore.ring().active_generation == 1


def test_format_1_objects_stay_readable_and_an_edit_writes_format_2(tool: S3MemoryTool, s3: Any) -> None:
    from tests.support.legacy import put_format1

    put_format1(s3, LocalKeys(LOCAL_KEY), AGENT, "v1.md", "one\ntwo\n", modified=5)
    assert header_of(s3, f"agents/{AGENT}/v1.md").version == 1
    assert ok(tool, command="view", path="/memories/v1.md") == (
        "Here's the content of /memories/v1.md with line numbers:\n     1\tone\n     2\ttwo"
    )
    ok(tool, command="str_replace", path="/memories/v1.md", old_str="two", new_str="deux")
    edited = header_of(s3, f"agents/{AGENT}/v1.md")
    assert edited.version == 2
    assert edited.wrapped_key == b""
    assert ok(tool, command="view", path="/memories/v1.md").endswith("2\tdeux")


def test_a_tool_with_another_key_source_refuses_to_write(make_tool: Callable[..., S3MemoryTool], s3: Any) -> None:
    ok(make_tool(), command="create", path="/memories/a.md", file_text="a")
    other = make_tool(keys=LocalKeys(bytes(32)))
    assert err(other, command="create", path="/memories/b.md", file_text="b") == (
        "Error: The encryption key cannot be used (BranchKeyOfAnotherKeySource); nothing was changed. "
        "An operator must fix the key configuration."
    )
    assert keystore_keys(s3, ROOT)[0] == "00000001"
    assert len(keystore_keys(s3, ROOT)) == 2  # it minted no key of its own


def test_a_keystore_without_a_key_source_reads_listings_and_refuses_keys(tool: S3MemoryTool, s3: Any) -> None:
    """What `admin.names.name_mode` uses: it lists the keystore, and never unwraps or makes a key."""
    from s3memory.errors import KeyMisconfigured

    ok(tool, command="create", path="/memories/a.md", file_text="a")
    before = keystore_keys(s3, ROOT)
    reader = Keystore(ObjectStore(s3, BUCKET), None, AgentKeyspace("agents/", AGENT))
    ring = reader.ring()
    assert ring.active_generation == 1
    assert reader.caches.rings.get(reader.location) is ring  # its own caches: no provider's
    record = reader.record(ring, 1)
    for refused in (reader.active, reader.rotate, lambda: reader.unwrap(record)):
        with pytest.raises(KeyMisconfigured):
            refused()
    assert keystore_keys(s3, ROOT) == before  # nothing was written


def test_a_keystore_uses_the_caches_it_is_given(tool: S3MemoryTool, s3: Any) -> None:
    """Listings and unwrapped keys go to the caches given (by default the provider's), not elsewhere."""
    ok(tool, command="create", path="/memories/a.md", file_text="a")
    keys = LocalKeys(LOCAL_KEY)
    space = AgentKeyspace("agents/", AGENT)
    default = Keystore(ObjectStore(s3, BUCKET), keys, space)
    assert default.caches is keys.caches
    from s3memory.storage.keycache import KeyCaches

    given = KeyCaches.create()
    keystore = Keystore(ObjectStore(s3, BUCKET), keys, space, caches=given)
    branch = keystore.active()
    assert given.rings.get(keystore.location) is not None
    assert given.unwraps.get((AGENT, branch.provider, keystore.record(keystore.ring(), 1).wrapped)) == branch.plaintext
    assert keys.caches.rings.get(keystore.location) is None


def test_rotate_voids_a_claim_made_while_it_runs(tool: S3MemoryTool, s3: Any) -> None:
    """Issue 21 item 1: a stolen agent credential claims the generation after the one `rotate` is
    creating, between rotate's listing and its claim. Rotate lists again after its claim, voids that
    claim, and its own key is active."""
    ok(tool, command="create", path="/memories/a.md", file_text="a")
    keys = LocalKeys(LOCAL_KEY)
    keystore = Keystore(ObjectStore(s3, BUCKET), keys, AgentKeyspace("agents/", AGENT))
    planted = f"{3:08d}-{'cd' * 8}"

    def plant(params: dict[str, Any], **_: Any) -> None:
        if params.get("Key") == FOLDER + "00000002":  # rotate is about to claim generation 2
            wrapped = keys.new_branch_key(AGENT, planted)[1]
            record = keyring.BranchRecord(planted, 1, keys.provider_id, wrapped)
            s3.meta.events.unregister("before-parameter-build.s3.PutObject", plant)
            s3.put_object(Bucket=BUCKET, Key=FOLDER + record.claim_name(), Body=record.claim_body())
            s3.put_object(Bucket=BUCKET, Key=FOLDER + record.index_name(), Body=b"")

    s3.meta.events.register("before-parameter-build.s3.PutObject", plant)
    rotation = keystore.rotate()
    assert (rotation.active.generation, rotation.created, rotation.voided) == (2, True, (3,))
    ring = keystore.ring(refresh=True)
    assert (ring.active_generation, ring.out_of_sequence) == (2, [3])
    assert "void.00000003" in keystore_keys(s3, ROOT)
    writer = S3MemoryTool(bucket=BUCKET, agent_id=AGENT, keys=LocalKeys(LOCAL_KEY), s3_client=s3, prefix="agents/")
    ok(writer, command="create", path="/memories/b.md", file_text="b")  # a new process: never the planted key
    assert header_of(s3, ROOT + "b.md").branch_id == rotation.active.branch_id
    writer.close()
