"""Tampering is detected, and agents never see or touch each other's files.

The tamper matrix changes stored objects with raw boto3 on the moto bucket and runs the
commands that read them, with LocalKeys and with KmsKeys, on objects of format 2 (what the tool
writes: the header names the agent's branch key) and of format 1 (written by older versions,
still read: the header carries a wrapped data key).
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from s3memory import Keys, KmsKeys, Limits, LocalKeys
from tests.support import (
    BUCKET,
    LOCAL_KEY,
    assert_one_branch_key,
    called,
    err,
    is_keystore,
    keystore_names,
    ok,
    without_keystore,
)
from tests.support.legacy import DataKey, put_format1

NOTES = "/memories/notes.md"
NOTES_KEY = "agents/agent-42/notes.md"
OTHER_KEY = "agents/agent-42/other.md"
NOTES_TEXT = "Buy milk\nCall Ann about the Q3 report\n"
OTHER_TEXT = "Other notes\nFix the bike on Saturday!\n"  # as long as NOTES_TEXT


def integrity(display: str) -> str:
    return f"Error: The file {display} failed its integrity check and cannot be read"


def outcome(tool: Any, **command: Any) -> str:
    """The ToolError text of a command, or "succeeded: ..." (so a loop can list every wrong answer)."""
    succeeded, answer = called(tool, command)
    return f"succeeded: {answer}" if succeeded else str(answer)


def snapshot(s3: Any, key: str) -> tuple[bytes, dict[str, str], str]:
    obj = s3.get_object(Bucket=BUCKET, Key=key)
    return obj["Body"].read(), obj["Metadata"], obj["ETag"]


def put_raw(s3: Any, key: str, body: bytes, metadata: dict[str, str]) -> None:
    s3.put_object(Bucket=BUCKET, Key=key, Body=body, Metadata=metadata)


def all_keys(s3: Any) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def state(s3: Any) -> list[tuple[str, str, dict[str, str]]]:
    """Every object's key, ETag (MD5 of the body) and metadata."""
    contents = s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])
    return [(o["Key"], o["ETag"], s3.head_object(Bucket=BUCKET, Key=o["Key"])["Metadata"]) for o in contents]


def flip(data: bytes, index: int) -> bytes:
    out = bytearray(data)
    out[index] ^= 0x01
    return bytes(out)


def flip_b64(text: str, index: int) -> str:
    return base64.b64encode(flip(base64.b64decode(text), index)).decode("ascii")


@dataclass
class Ctx:
    s3: Any
    make_tool: Callable[..., Any]
    use_kms: bool
    version: int  # the format of the objects written
    writer: Any  # the tool that wrote the objects (its key cache is warm)
    other_window_meta: dict[str, str]  # metadata of an object of agent-42 under another key (branch or data key)
    originals: dict[str, tuple[bytes, dict[str, str]]]

    def restore(self) -> None:
        """Put the bucket back exactly as the fixture left it (same bytes, so the same ETags)."""
        for key in all_keys(self.s3):
            if key not in self.originals:
                self.s3.delete_object(Bucket=BUCKET, Key=key)
        for key, (body, meta) in self.originals.items():
            put_raw(self.s3, key, body, meta)


# Each tamper changes stored objects and returns (agent id, path) of the file that must now fail.
Tamper = Callable[[Ctx], tuple[str, str]]


def _body(change: Callable[[bytes], bytes]) -> Tamper:
    def tamper(ctx: Ctx) -> tuple[str, str]:
        body, meta, _ = snapshot(ctx.s3, NOTES_KEY)
        put_raw(ctx.s3, NOTES_KEY, change(body), meta)
        return "agent-42", NOTES

    return tamper


def _meta(change: Callable[[Ctx, dict[str, str]], dict[str, str]]) -> Tamper:
    def tamper(ctx: Ctx) -> tuple[str, str]:
        body, meta, _ = snapshot(ctx.s3, NOTES_KEY)
        put_raw(ctx.s3, NOTES_KEY, body, change(ctx, dict(meta)))
        return "agent-42", NOTES

    return tamper


def _drop(name: str) -> Tamper:
    return _meta(lambda _ctx, m: {k: v for k, v in m.items() if k != name})


def _set(name: str, value: Callable[[Ctx, dict[str, str]], str]) -> Tamper:
    return _meta(lambda ctx, m: {**m, name: value(ctx, m)})


def _other_provider(ctx: Ctx, _meta: dict[str, str]) -> str:
    return "local-0000000000000000" if ctx.use_kms else "aws-kms"


def _swap_bodies(ctx: Ctx) -> tuple[str, str]:
    body1, meta1, _ = snapshot(ctx.s3, NOTES_KEY)
    body2, meta2, _ = snapshot(ctx.s3, OTHER_KEY)
    assert len(body1) == len(body2)
    put_raw(ctx.s3, NOTES_KEY, body2, meta1)
    put_raw(ctx.s3, OTHER_KEY, body1, meta2)
    return "agent-42", NOTES


def _swap_objects(ctx: Ctx) -> tuple[str, str]:
    body1, meta1, _ = snapshot(ctx.s3, NOTES_KEY)
    body2, meta2, _ = snapshot(ctx.s3, OTHER_KEY)
    put_raw(ctx.s3, NOTES_KEY, body2, meta2)
    put_raw(ctx.s3, OTHER_KEY, body1, meta1)
    return "agent-42", NOTES


def _copy_within_agent(ctx: Ctx) -> tuple[str, str]:
    source = {"Bucket": BUCKET, "Key": NOTES_KEY}
    ctx.s3.copy_object(Bucket=BUCKET, Key="agents/agent-42/projects/copy.md", CopySource=source)
    return "agent-42", "/memories/projects/copy.md"


def _copy_to_other_agent(ctx: Ctx) -> tuple[str, str]:
    ctx.s3.copy_object(Bucket=BUCKET, Key="agents/agent-b/notes.md", CopySource={"Bucket": BUCKET, "Key": NOTES_KEY})
    return "agent-b", NOTES


def _overwrite_with_other_path(ctx: Ctx) -> tuple[str, str]:
    ctx.s3.copy_object(Bucket=BUCKET, Key=NOTES_KEY, CopySource={"Bucket": BUCKET, "Key": OTHER_KEY})
    return "agent-42", NOTES


def _other_version(_ctx: Ctx, meta: dict[str, str]) -> str:
    return "1" if meta["s3m-v"] == "2" else "2"


def _flip_branch_id(_ctx: Ctx, meta: dict[str, str]) -> str:
    """A well-formed branch id of the same generation that the keystore does not hold."""
    branch = meta["s3m-bk"]
    return branch[:-1] + ("0" if branch[-1] != "0" else "1")


TAMPERS: dict[str, Tamper] = {
    "body-flip-first": _body(lambda b: flip(b, 0)),
    "body-flip-middle": _body(lambda b: flip(b, len(b) // 2)),
    "body-flip-tag": _body(lambda b: flip(b, -1)),
    "body-truncate-1": _body(lambda b: b[:-1]),
    "body-truncate-to-tag": _body(lambda b: b[-16:]),
    "body-truncate-15": _body(lambda b: b[:15]),
    "body-empty": _body(lambda b: b""),
    "body-append": _body(lambda b: b + b"\x00"),
    "drop-s3m-v": _drop("s3m-v"),
    "drop-s3m-kp": _drop("s3m-kp"),
    "drop-s3m-salt": _drop("s3m-salt"),
    "drop-s3m-cm": _drop("s3m-cm"),
    "drop-all-metadata": _meta(lambda _c, _m: {}),
    "alter-s3m-v": _set("s3m-v", _other_version),
    "alter-s3m-kp": _set("s3m-kp", _other_provider),
    "alter-s3m-salt": _set("s3m-salt", lambda _c, m: flip_b64(m["s3m-salt"], 0)),
    "alter-s3m-cm": _set("s3m-cm", lambda _c, m: flip_b64(m["s3m-cm"], 31)),
    "alter-header-from-other-window": _meta(lambda c, _m: dict(c.other_window_meta)),
    "extra-s3m-entry": _set("s3m-extra", lambda _c, _m: "1"),
    "swap-bodies": _swap_bodies,
    "swap-objects": _swap_objects,
    "copy-to-another-path": _copy_within_agent,
    "overwrite-with-another-path": _overwrite_with_other_path,
    "copy-to-another-agent": _copy_to_other_agent,
}
# The entry that names the key: a wrapped data key (format 1) or the id of a branch key (format 2).
KEY_TAMPERS: dict[int, dict[str, Tamper]] = {
    1: {
        "drop-s3m-wk": _drop("s3m-wk"),
        "alter-s3m-wk-flip": _set("s3m-wk", lambda _c, m: flip_b64(m["s3m-wk"], -1)),
        "alter-s3m-wk-other-window": _set("s3m-wk", lambda c, _m: c.other_window_meta["s3m-wk"]),
    },
    2: {
        "drop-s3m-bk": _drop("s3m-bk"),
        "alter-s3m-bk-flip": _set("s3m-bk", _flip_branch_id),
        "alter-s3m-bk-other-branch": _set("s3m-bk", lambda c, _m: c.other_window_meta["s3m-bk"]),
    },
}


def tampers(version: int) -> dict[str, Tamper]:
    return {**TAMPERS, **KEY_TAMPERS[version]}


KEY_ENTRY = {1: "s3m-wk", 2: "s3m-bk"}


def put_v1(s3: Any, key: Keys | DataKey, path: str, text: str) -> DataKey:
    """Store the file at `path` of agent-42 as a format-1 object (see `put_format1`)."""
    return put_format1(s3, key, "agent-42", path.removeprefix("/memories/"), text, modified=int(time.time()))


@pytest.fixture(
    params=[(False, 2), (True, 2), (False, 1), (True, 1)], ids=["local", "kms", "local-format1", "kms-format1"]
)
def ctx(request: pytest.FixtureRequest, s3: Any, kms: Any, make_tool: Callable[..., Any]) -> Ctx:
    use_kms, version = request.param

    def new_keys() -> Any:  # a key provider instance with empty caches
        if use_kms:
            return KmsKeys(request.getfixturevalue("kms_key"), kms_client=kms)
        return LocalKeys(LOCAL_KEY)

    keys = new_keys()
    writer = make_tool(keys=keys)
    if version == 2:
        ok(writer, command="create", path=NOTES, file_text=NOTES_TEXT)
        ok(writer, command="create", path="/memories/other.md", file_text=OTHER_TEXT)
        # Another branch key of the same agent: generation 2, made active by a rotation.
        rotated = make_tool(keys=new_keys())
        rotated.memory.vault.keystore.rotate()
        ok(rotated, command="create", path="/memories/window2.md", file_text=NOTES_TEXT)
    else:
        window = put_v1(s3, keys, NOTES, NOTES_TEXT)  # one data key for both, as 0.2's writers did
        put_v1(s3, window, "/memories/other.md", OTHER_TEXT)
        # A second key provider instance (another process) used another data key for the same agent.
        put_v1(s3, new_keys(), "/memories/window2.md", NOTES_TEXT)
        ok(writer, command="view", path=NOTES)  # the writer's key cache now holds the data key
    other_meta = snapshot(s3, "agents/agent-42/window2.md")[1]
    notes_meta = snapshot(s3, NOTES_KEY)[1]
    assert notes_meta["s3m-v"] == other_meta["s3m-v"] == str(version)
    assert other_meta[KEY_ENTRY[version]] != notes_meta[KEY_ENTRY[version]]
    originals = {key: snapshot(s3, key)[:2] for key in all_keys(s3)}
    return Ctx(s3, make_tool, use_kms, version, writer, other_meta, originals)


def test_untampered_control(ctx: Ctx) -> None:
    """Rewriting an object byte for byte with raw boto3 keeps it readable: the harness itself breaks nothing."""
    body, meta, _ = snapshot(ctx.s3, NOTES_KEY)
    put_raw(ctx.s3, NOTES_KEY, body, meta)
    tool = ctx.make_tool(use_kms=ctx.use_kms)
    assert ok(tool, command="view", path=NOTES) == (
        "Here's the content of /memories/notes.md with line numbers:\n"
        "     1\tBuy milk\n"
        "     2\tCall Ann about the Q3 report"
    )


def test_tampered_objects_are_never_returned_or_edited(ctx: Ctx) -> None:
    """Every tamper of the format, one after the other on a restored bucket; all failures are listed at the end."""
    wrong: list[tuple[str, object]] = []
    for name, tamper in tampers(ctx.version).items():
        ctx.restore()
        agent, display = tamper(ctx)
        before = state(ctx.s3)
        fresh = ctx.make_tool(agent, use_kms=ctx.use_kms)  # an empty key cache
        tools = [fresh, ctx.writer] if agent == "agent-42" else [fresh]  # and the writer's warm one
        for tool in tools:
            got = [
                outcome(tool, command="view", path=display),
                outcome(tool, command="view", path=display, view_range=[1, 1]),
                outcome(tool, command="str_replace", path=display, old_str="Buy", new_str="Sell"),
                outcome(tool, command="str_replace", path=display, old_str="Other", new_str="x"),
                outcome(tool, command="insert", path=display, insert_line=0, insert_text="x"),
                outcome(tool, command="rename", old_path=display, new_path="/memories/moved.md"),
            ]
            if got != [integrity(display)] * 6:
                wrong.append((name, got))
        if state(ctx.s3) != before:
            wrong.append((name, "the failed commands changed the bucket"))
    assert sorted({name for name, _ in wrong}) == []  # the tampers that got through, by name
    assert wrong == []
    assert len(tampers(ctx.version)) == 27


def test_swapped_bodies_fail_on_both_paths(ctx: Ctx) -> None:
    _swap_bodies(ctx)
    tool = ctx.make_tool(use_kms=ctx.use_kms)
    assert err(tool, command="view", path=NOTES) == integrity(NOTES)
    assert err(tool, command="view", path="/memories/other.md") == integrity("/memories/other.md")
    assert ok(tool, command="view", path="/memories/window2.md").endswith("2\tCall Ann about the Q3 report")


def test_copy_leaves_the_source_readable(ctx: Ctx) -> None:
    _copy_within_agent(ctx)
    _copy_to_other_agent(ctx)
    tool = ctx.make_tool(use_kms=ctx.use_kms)
    assert ok(tool, command="view", path=NOTES).endswith("2\tCall Ann about the Q3 report")


def test_tampered_file_can_still_be_deleted(ctx: Ctx) -> None:
    TAMPERS["body-flip-tag"](ctx)
    tool = ctx.make_tool(use_kms=ctx.use_kms)
    assert ok(tool, command="delete", path=NOTES) == "Successfully deleted /memories/notes.md"
    assert NOTES_KEY not in all_keys(ctx.s3)


def test_object_written_under_another_local_master_key(s3: Any, make_tool: Callable[..., Any]) -> None:
    """Another local key is a configuration error naming its code (issue 34 item 2), not tampering;
    nothing is read or changed."""
    ok(make_tool(), command="create", path=NOTES, file_text=NOTES_TEXT)
    before = state(s3)
    stranger = make_tool(keys=LocalKeys(bytes(32)))
    assert err(stranger, command="view", path=NOTES) == (
        "Error: The encryption key cannot be used (OtherLocalKey); nothing was changed. "
        "An operator must fix the key configuration."
    )
    assert state(s3) == before


# --- isolation between agents whose ids share a prefix ---------------------------------

ANN2_FILES = {
    "/memories/secret.md": "ann2's secret\n",
    "/memories/d/x.md": "ann2 x\n",
    "/memories/d/sub/y.md": "ann2 y\n",
    "/memories/only2/z.md": "ann2 z\n",
}


@pytest.fixture(params=["agents/", ""], ids=["prefix", "no-prefix"])
def pair(request: pytest.FixtureRequest, s3: Any, make_tool: Callable[..., Any]) -> tuple[Any, Any, str]:
    prefix = str(request.param)
    ann2 = make_tool("ann2", prefix=prefix)
    for path, text in ANN2_FILES.items():
        ok(ann2, command="create", path=path, file_text=text)
    ann = make_tool("ann", prefix=prefix)
    ok(ann, command="create", path="/memories/d/a.md", file_text="ann a\n")
    ok(ann, command="create", path="/memories/mine.md", file_text="ann mine\n")
    return ann, ann2, prefix


def ann2_state(s3: Any, prefix: str) -> list[tuple[str, str]]:
    contents = s3.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}ann2/").get("Contents", [])
    return [(o["Key"], o["ETag"]) for o in contents]


def test_views_show_only_own_files(pair: tuple[Any, Any, str]) -> None:
    ann, _, _ = pair
    assert ok(ann, command="view", path="/memories") == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories\n"
        "4.0K\t/memories/d/\n"
        "6B\t/memories/d/a.md\n"
        "9B\t/memories/mine.md"
    )
    assert ok(ann, command="view", path="/memories/d") == (
        "Here're the files and directories up to 2 levels deep in /memories/d, "
        "excluding hidden items and node_modules:\n"
        "4.0K\t/memories/d\n"
        "6B\t/memories/d/a.md"
    )


def test_other_agents_files_do_not_exist(pair: tuple[Any, Any, str], s3: Any) -> None:
    ann, _, prefix = pair
    before = ann2_state(s3, prefix)
    for path in ("/memories/secret.md", "/memories/only2", "/memories/only2/z.md", "/memories/d/sub/y.md"):
        assert err(ann, command="view", path=path) == f"The path {path} does not exist. Please provide a valid path."
        assert err(ann, command="delete", path=path) == f"Error: The path {path} does not exist"
        assert err(ann, command="rename", old_path=path, new_path="/memories/stolen") == (
            f"Error: The path {path} does not exist"
        )
    for path in ("/memories/secret.md", "/memories/only2/z.md"):
        assert err(ann, command="str_replace", path=path, old_str="ann2", new_str="x") == (
            f"Error: The path {path} does not exist. Please provide a valid path."
        )
        assert err(ann, command="insert", path=path, insert_line=0, insert_text="x") == (
            f"Error: The path {path} does not exist"
        )
    assert err(ann, command="view", path="/memories/../ann2/secret.md") == (
        "Error: Invalid path /memories/../ann2/secret.md: it contains '..'"
    )
    assert ann2_state(s3, prefix) == before


def test_same_names_are_separate_files(pair: tuple[Any, Any, str], s3: Any) -> None:
    ann, ann2, prefix = pair
    before = ann2_state(s3, prefix)
    assert ok(ann, command="create", path="/memories/secret.md", file_text="ann's own\n") == (
        "File created successfully at: /memories/secret.md"
    )
    assert ok(ann, command="rename", old_path="/memories/mine.md", new_path="/memories/only2/z.md") == (
        "Successfully renamed /memories/mine.md to /memories/only2/z.md"
    )
    assert ok(ann, command="view", path="/memories/secret.md").endswith("1\tann's own")
    assert ok(ann2, command="view", path="/memories/secret.md").endswith("1\tann2's secret")
    assert ok(ann2, command="view", path="/memories/only2/z.md").endswith("1\tann2 z")
    assert ann2_state(s3, prefix) == before


def test_recursive_delete_and_rename_leave_the_other_agent_alone(pair: tuple[Any, Any, str], s3: Any) -> None:
    ann, ann2, prefix = pair
    before = ann2_state(s3, prefix)  # ann2's files and its keystore
    assert without_keystore(k for k, _ in before) == [
        f"{prefix}ann2/d/sub/y.md",
        f"{prefix}ann2/d/x.md",
        f"{prefix}ann2/only2/z.md",
        f"{prefix}ann2/secret.md",
    ]
    assert_one_branch_key([k for k, _ in before], f"{prefix}ann2/")
    ok(ann, command="create", path="/memories/d/deep/b.md", file_text="ann b\n")
    assert ok(ann, command="rename", old_path="/memories/d", new_path="/memories/e") == (
        "Successfully renamed /memories/d to /memories/e"
    )
    assert ann2_state(s3, prefix) == before
    assert ok(ann, command="delete", path="/memories/e") == "Successfully deleted /memories/e"
    assert ok(ann, command="delete", path="/memories/mine.md") == "Successfully deleted /memories/mine.md"
    assert ann2_state(s3, prefix) == before
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]
    assert [k for k in keys if not is_keystore(k, f"{prefix}ann/")] == [k for k, _ in before]
    assert_one_branch_key(keys, f"{prefix}ann/")  # deleting files keeps ann's keystore
    # ann2 still reads everything.
    for path, text in ANN2_FILES.items():
        assert ok(ann2, command="view", path=path).endswith("1\t" + text.rstrip("\n"))


def test_quota_counts_only_own_files(s3: Any, make_tool: Callable[..., Any]) -> None:
    ann2 = make_tool("ann2")
    for i in range(5):
        ok(ann2, command="create", path=f"/memories/f{i}.md", file_text="x" * 100)
    ann = make_tool("ann", limits=Limits(max_agent_files=2, max_agent_bytes=250))
    ok(ann, command="create", path="/memories/a.md", file_text="y" * 100)
    ok(ann, command="create", path="/memories/b.md", file_text="y" * 100)
    assert err(ann, command="create", path="/memories/c.md", file_text="y") == (
        "Error: Cannot create /memories/c.md: this memory already holds 2 files, the limit is 2. "
        "Delete or merge files first. Nothing was changed."
    )
    assert err(ann, command="str_replace", path="/memories/a.md", old_str="y" * 100, new_str="z" * 151) == (
        "Error: Cannot write /memories/a.md: memory would hold 259 bytes, over the limit of "
        "250 bytes for this agent. Delete or shorten files first. Nothing was changed."
    )


def test_clear_all_memory_erases_only_this_agent(make_tool, s3):
    ann, ann2 = make_tool("ann"), make_tool("ann2")
    for tool in (ann, ann2):
        ok(tool, command="create", path="/memories/a.md", file_text="a")
        ok(tool, command="create", path="/memories/d/b.md", file_text="b")
    keystore_before = keystore_names(all_keys(s3), "agents/ann/")
    assert ann.clear_all_memory() == "All memory cleared"
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", []))
    assert without_keystore(keys) == ["agents/ann2/a.md", "agents/ann2/d/b.md"]
    assert_one_branch_key(keys, "agents/ann/")
    assert keystore_names(keys, "agents/ann/") == keystore_before  # clearing keeps the agent's keystore as it was
    assert_one_branch_key(keys, "agents/ann2/")
    assert ok(ann, command="view", path="/memories") == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories"
    )
