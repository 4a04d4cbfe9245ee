"""Mounted shared stores as the model sees them: listings, reads, refusals, and who wrote.

A curator's tool mounts the store read-write and fills it; the tools under test mount it as
`/memories/guidelines/`, read-only unless a test says otherwise. Every refusal is an exact string
and is pinned to send no request at all.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from s3memory import Mount
from s3memory.core.envelope import Header
from tests.support import CallCounter, err, listed_keys, ok

HEADER = "Here're the files and directories up to 2 levels deep in {}, excluding hidden items and node_modules:"
REFUNDS = "Refund within 30 days.\nAsk for the order number first.\n"
STORE = "support-guidelines"
G = "/memories/guidelines"


def read_only(path: str, mount: str = G) -> str:
    return (
        f"Error: Cannot change {path}: {mount} is a read-only shared store. "
        "Nothing was changed; retrying will not help."
    )


def across(old: str, new: str) -> str:
    return (
        f"Error: Cannot rename {old} to {new}: a rename cannot move files between this memory and a shared store, "
        "or between two stores. Nothing was changed; create the file at the new path and delete the old one instead."
    )


@pytest.fixture
def curated(make_tool: Callable[..., Any]) -> Any:
    """The store, filled by a curator (another agent, with an actor) through a read-write mount."""
    curator = make_tool("curator", actor="team-lead", mounts={"g": Mount(STORE, read_only=False)})
    ok(curator, command="create", path="/memories/g/refunds.md", file_text=REFUNDS)
    ok(curator, command="create", path="/memories/g/tone/voice.md", file_text="Be kind.\n")
    ok(curator, command="create", path="/memories/g/tone/deep/x.md", file_text="x")
    return curator


@pytest.fixture
def agent(make_tool: Callable[..., Any], curated: Any) -> Any:
    """agent-42 with its own notes and the store mounted read-only at /memories/guidelines."""
    tool = make_tool("agent-42", mounts={"guidelines": Mount(STORE)})
    ok(tool, command="create", path="/memories/customer.md", file_text="Ann, order 1234\n")
    ok(tool, command="create", path="/memories/tickets/t1.md", file_text="open")
    return tool


def test_view_root_lists_the_mounts_beside_the_own_entries(agent: Any) -> None:
    assert ok(agent, command="view", path="/memories") == "\n".join([
        HEADER.format("/memories"),
        "4.0K\t/memories",
        "16B\t/memories/customer.md",
        "4.0K\t/memories/guidelines/",
        "55B\t/memories/guidelines/refunds.md",
        "4.0K\t/memories/guidelines/tone/",
        "4.0K\t/memories/tickets/",
        "4B\t/memories/tickets/t1.md",
    ])  # fmt: skip


def test_view_in_a_mount_reads_the_store(agent: Any) -> None:
    listing = "\n".join([
        HEADER.format(G),
        f"4.0K\t{G}",
        f"55B\t{G}/refunds.md",
        f"4.0K\t{G}/tone/",
        f"4.0K\t{G}/tone/deep/",
        f"9B\t{G}/tone/voice.md",
    ])  # fmt: skip
    assert ok(agent, command="view", path=G) == listing
    assert ok(agent, command="view", path=G + "/") == listing
    assert ok(agent, command="view", path=f"{G}/refunds.md") == (
        f"Here's the content of {G}/refunds.md with line numbers:\n"
        "     1\tRefund within 30 days.\n     2\tAsk for the order number first."
    )
    assert ok(agent, command="view", path=f"{G}/refunds.md", view_range=[2, -1]) == (
        f"Here's the content of {G}/refunds.md with line numbers:\n     2\tAsk for the order number first."
    )
    assert err(agent, command="view", path=f"{G}/missing.md") == (
        f"The path {G}/missing.md does not exist. Please provide a valid path."
    )
    assert err(agent, command="view", path=f"{G}/refunds.md", view_range=[3, 1]) == (
        "Error: Invalid `view_range` parameter: [3, 1]. It should be within the range of lines of the file: [1, 2]"
    )


WRITES: dict[str, tuple[dict[str, Any], str]] = {
    "create": ({"command": "create", "path": f"{G}/new.md", "file_text": "x"}, f"{G}/new.md"),
    "create over a file": ({"command": "create", "path": f"{G}/refunds.md", "file_text": "x"}, f"{G}/refunds.md"),
    "create the mount point": ({"command": "create", "path": G, "file_text": "x"}, G),
    "str_replace": (
        {"command": "str_replace", "path": f"{G}/refunds.md", "old_str": "30", "new_str": "90"},
        f"{G}/refunds.md",
    ),
    "insert": (
        {"command": "insert", "path": f"{G}/tone/voice.md", "insert_line": 0, "insert_text": "x"},
        f"{G}/tone/voice.md",
    ),
    "delete a file": ({"command": "delete", "path": f"{G}/refunds.md"}, f"{G}/refunds.md"),
    "delete a directory": ({"command": "delete", "path": f"{G}/tone/"}, f"{G}/tone"),
    "rename out of it": (
        {"command": "rename", "old_path": f"{G}/refunds.md", "new_path": "/memories/mine.md"},
        f"{G}/refunds.md",
    ),
    "rename into it": (
        {"command": "rename", "old_path": "/memories/customer.md", "new_path": f"{G}/customer.md"},
        f"{G}/customer.md",
    ),
    "rename within it": (
        {"command": "rename", "old_path": f"{G}/refunds.md", "new_path": f"{G}/old.md"},
        f"{G}/refunds.md",
    ),
}


@pytest.mark.parametrize("case", list(WRITES))
def test_every_write_into_a_read_only_mount_is_refused_before_any_request(
    case: str, agent: Any, counter: CallCounter
) -> None:
    command, path = WRITES[case]
    counter.reset()
    assert err(agent, **command) == read_only(path)
    assert counter.by_op() == {}


def test_mount_points_cannot_be_deleted_or_renamed(make_tool: Callable[..., Any], curated: Any, counter: Any) -> None:
    tool = make_tool("agent-42", mounts={"guidelines": Mount(STORE), "notes": Mount("team-notes", read_only=False)})
    counter.reset()
    for mount in (G, "/memories/notes"):
        assert err(tool, command="delete", path=mount) == f"Error: Cannot delete the mounted store {mount} itself"
        assert err(tool, command="delete", path=mount + "/") == f"Error: Cannot delete the mounted store {mount} itself"
        assert err(tool, command="rename", old_path=mount, new_path="/memories/x") == (
            f"Error: Cannot rename the mounted store {mount} itself"
        )
    assert err(tool, command="delete", path="/memories") == "Error: Cannot delete the /memories directory itself"
    assert err(tool, command="rename", old_path="/memories", new_path=f"{G}/x") == (
        "Error: Cannot rename the /memories directory itself"
    )
    assert counter.by_op() == {}


def test_renames_across_owners_are_refused_and_within_a_store_work(
    make_tool: Callable[..., Any], curated: Any, counter: Any, s3: Any
) -> None:
    tool = make_tool("agent-42", mounts={"a": Mount(STORE, read_only=False), "b": Mount("team-notes", read_only=False)})
    ok(tool, command="create", path="/memories/mine.md", file_text="mine")
    counter.reset()
    for old, new in [
        ("/memories/mine.md", "/memories/a/mine.md"),
        ("/memories/a/refunds.md", "/memories/refunds.md"),
        ("/memories/a/refunds.md", "/memories/b/refunds.md"),
        ("/memories/a/tone", "/memories/b/tone"),
        ("/memories/a/refunds.md", "/memories"),
        ("/memories/mine.md", "/memories/b"),
    ]:
        assert err(tool, command="rename", old_path=old, new_path=new) == across(old, new)
    assert counter.by_op() == {}
    assert ok(tool, command="rename", old_path="/memories/a/tone", new_path="/memories/a/style") == (
        "Successfully renamed /memories/a/tone to /memories/a/style"
    )
    assert ok(tool, command="rename", old_path="/memories/a/refunds.md", new_path="/memories/a/style/r.md") == (
        "Successfully renamed /memories/a/refunds.md to /memories/a/style/r.md"
    )
    assert err(tool, command="rename", old_path="/memories/a/style", new_path="/memories/a/style/in") == (
        "Error: Cannot move /memories/a/style into itself"
    )
    assert [k for k in listed_keys(s3, prefix="agents/_stores/") if "/.s3memory/" not in k] == [
        "agents/_stores/support-guidelines/style/deep/x.md",
        "agents/_stores/support-guidelines/style/r.md",
        "agents/_stores/support-guidelines/style/voice.md",
    ]


def test_a_read_write_mount_answers_with_the_mounted_paths(make_tool: Callable[..., Any], curated: Any) -> None:
    tool = make_tool("agent-42", mounts={"notes": Mount(STORE, read_only=False)})
    n = "/memories/notes"
    created = ok(tool, command="create", path=f"{n}/new.md", file_text="a\n")
    assert created == f"File created successfully at: {n}/new.md"
    assert err(tool, command="create", path=f"{n}/new.md", file_text="a") == f"Error: File {n}/new.md already exists"
    assert err(tool, command="create", path=n, file_text="a") == f"Error: File {n} already exists"
    assert err(tool, command="create", path=f"{n}/new.md/x.md", file_text="a") == (
        f"Error: Cannot create {n}/new.md/x.md: {n}/new.md is a file"
    )
    assert ok(tool, command="insert", path=f"{n}/new.md", insert_line=1, insert_text="b") == (
        f"The file {n}/new.md has been edited."
    )
    # The model's own text is echoed as sent, even where it looks like a path.
    assert err(tool, command="str_replace", path=f"{n}/new.md", old_str="/memories/x", new_str="y") == (
        f"No replacement was performed, old_str `/memories/x` did not appear verbatim in {n}/new.md."
    )
    assert ok(tool, command="str_replace", path=f"{n}/new.md", old_str="b", new_str="/memories/c") == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\ta\n     2\t/memories/c"
    )
    assert err(tool, command="insert", path=f"{n}/none.md", insert_line=0, insert_text="x") == (
        f"Error: The path {n}/none.md does not exist"
    )
    assert ok(tool, command="delete", path=f"{n}/new.md") == f"Successfully deleted {n}/new.md"
    assert ok(tool, command="delete", path=f"{n}/tone") == f"Successfully deleted {n}/tone"
    assert err(tool, command="delete", path=f"{n}/tone") == f"Error: The path {n}/tone does not exist"
    assert err(tool, command="view", path=f"{n}/" + "x" * 300) == (
        f"Error: Invalid path {n}/{'x' * 300}: a segment is longer than 255 bytes"
    )


def test_a_write_to_a_store_records_the_agent_and_the_actor(
    make_tool: Callable[..., Any], curated: Any, s3: Any
) -> None:
    tool = make_tool("agent-42", actor="ticket-7", mounts={"g": Mount(STORE, read_only=False)})
    ok(tool, command="str_replace", path="/memories/g/refunds.md", old_str="30", new_str="60")
    store = tool.commands.stores["g"][1]
    for path, expected in [("refunds.md", ("ticket-7", "agent-42", "str_replace")),
                           ("tone/voice.md", ("team-lead", "curator", "create"))]:  # fmt: skip
        memory_path = store.vault.parse(f"/memories/{path}")
        header = Header.from_metadata(store.vault.store.get(store.vault.key(memory_path)).metadata)
        record = store.vault.attribution_of(memory_path, header)
        assert (record.actor, record.agent, record.command) == expected
    own = tool.memory.vault
    ok(tool, command="create", path="/memories/own.md", file_text="x")
    own_path = own.parse("/memories/own.md")
    record = own.attribution_of(own_path, Header.from_metadata(own.store.get(own.key(own_path)).metadata))
    assert (record.actor, record.agent) == ("ticket-7", "")  # the agent's own objects name no agent


def test_a_read_only_mount_never_sends_a_write_request(
    make_tool: Callable[..., Any], curated: Any, s3: Any, counter: CallCounter
) -> None:
    from s3memory.core.paths import MemoryPath

    # An interrupted change left in the store (its record), which only a writer may complete.
    curated.commands.stores["g"][1].vault.write(MemoryPath((".s3memory", "intents", "left")), "{}")
    writes = {"s3:PutObject", "s3:DeleteObject", "s3:DeleteObjects", "s3:PutObjectTagging", "s3:CopyObject"}
    counter.reset()
    tool = make_tool("agent-42", track_access=True, mounts={"guidelines": Mount(STORE)})
    ok(tool, command="view", path="/memories")
    ok(tool, command="view", path=f"{G}/refunds.md")
    ok(tool, command="view", path=f"{G}/tone")
    for command, path in WRITES.values():
        assert err(tool, **command) == read_only(path)
    seen = counter.by_op()
    assert sorted(op for op in seen if op in writes) == []
    # Own root; the store's root, again to look for records, its intents and its entries; tone/.
    # GETs: the record (read, never completed) and refunds.md.
    assert seen == {"s3:ListObjectsV2": 6, "s3:GetObject": 2}
    keys = listed_keys(s3, prefix="agents/_stores/")
    assert "agents/_stores/support-guidelines/.s3memory/intents/left" in keys  # left for a writer


def test_a_mount_shadows_an_own_entry_of_its_name(
    make_tool: Callable[..., Any], curated: Any, s3: Any, caplog: pytest.LogCaptureFixture
) -> None:
    before = make_tool("agent-42")
    ok(before, command="create", path="/memories/guidelines/old.md", file_text="mine")
    ok(before, command="create", path="/memories/notes.md", file_text="n")
    tool = make_tool("agent-42", mounts={"guidelines": Mount(STORE)})
    with caplog.at_level(logging.WARNING, logger="s3memory"):
        listing = ok(tool, command="view", path="/memories")
        ok(tool, command="view", path="/memories")
    assert listing == "\n".join([
        HEADER.format("/memories"),
        "4.0K\t/memories",
        "4.0K\t/memories/guidelines/",
        "55B\t/memories/guidelines/refunds.md",
        "4.0K\t/memories/guidelines/tone/",
        "1B\t/memories/notes.md",
    ])  # fmt: skip
    assert [r.getMessage() for r in caplog.records] == [
        "s3memory: the agent's own entry at /memories/guidelines is hidden by the mount of that name; "
        "s3memory ls --agent shows them"
    ]
    assert err(tool, command="view", path=f"{G}/old.md") == (
        f"The path {G}/old.md does not exist. Please provide a valid path."
    )
    assert "agents/agent-42/guidelines/old.md" in listed_keys(s3, prefix="agents/agent-42/")  # untouched


def test_a_cold_reader_makes_one_kms_call_per_store(make_tool: Callable[..., Any], counter: CallCounter) -> None:
    for store in ("one", "two"):
        writer = make_tool("curator", use_kms=True, mounts={"s": Mount(store, read_only=False)})
        for i in range(3):
            ok(writer, command="create", path=f"/memories/s/{i}.md", file_text=f"{store} {i}")
    counter.reset()
    reader = make_tool("agent-42", use_kms=True, mounts={"one": Mount("one"), "two": Mount("two")})
    for store in ("one", "two"):
        for i in range(3):
            assert ok(reader, command="view", path=f"/memories/{store}/{i}.md").endswith(f"\t{store} {i}")
    assert counter.by_op() == {"kms:Decrypt": 2, "s3:ListObjectsV2": 2, "s3:GetObject": 6}


def test_view_of_the_root_with_mounts_costs_one_list_more_per_mount(agent: Any, make_tool: Any, counter: Any) -> None:
    ok(agent, command="view", path="/memories")
    counter.reset()
    ok(agent, command="view", path="/memories")
    assert counter.by_op() == {"s3:ListObjectsV2": 2}
    two = make_tool("agent-42", mounts={"guidelines": Mount(STORE), "notes": Mount("team-notes")})
    counter.reset()
    ok(two, command="view", path="/memories")  # cold: the same listings also look for interrupted changes
    # and one more, once per tool: team-notes shows nothing, so is anything stored in it at all? (issue 32)
    assert counter.by_op() == {"s3:ListObjectsV2": 4}
    counter.reset()
    ok(two, command="view", path="/memories")  # warm, and that store was checked: one LIST per root
    assert counter.by_op() == {"s3:ListObjectsV2": 3}
    counter.reset()
    ok(two, command="view", path="/memories/customer.md")  # the agent's own file: exactly as without mounts
    assert counter.by_op() == {"s3:GetObject": 1}


def test_a_store_listing_failure_is_shown_with_the_mount(agent: Any, s3: Any) -> None:
    from botocore.exceptions import ClientError

    def refuse(params: dict[str, Any], **_: Any) -> None:
        if params.get("Prefix", "").startswith("agents/_stores/"):
            raise ClientError({"Error": {"Code": "AccessDenied", "Message": "no"}}, "ListObjectsV2")

    s3.meta.events.register("provide-client-params.s3.ListObjectsV2", refuse)
    try:
        refused = err(agent, command="view", path=G)
        assert refused == "Error: Memory storage refused access (AccessDenied); nothing was changed."
    finally:
        s3.meta.events.unregister("provide-client-params.s3.ListObjectsV2", refuse)


# --- two agents editing one shared file (conditional writes; runs on MiniStack too) ---------------


def test_two_agents_editing_one_shared_file_lose_no_update(make_tool: Callable[..., Any], s3: Any) -> None:
    """Agent b's tool edits the shared file just before agent a's conditional PUT leaves: a's PUT is
    refused, a reads again and re-applies its edit; both edits are kept, each attributed to its agent."""
    shared = {"shared": Mount("team-notes", read_only=False)}
    a, b = make_tool("agent-a", mounts=shared), make_tool("agent-b", mounts=shared)
    path = "/memories/shared/plan.md"
    ok(a, command="create", path=path, file_text="alpha\nbeta\ngamma\n")
    puts: list[str] = []
    nested = [False]

    def before_put(params: dict[str, Any], **_: Any) -> None:
        if nested[0] or not params["Key"].endswith("/plan.md"):
            return
        puts.append(params["Key"])
        if len(puts) == 1:
            nested[0] = True
            try:
                ok(b, command="str_replace", path=path, old_str="gamma", new_str="GAMMA by b")
            finally:
                nested[0] = False

    s3.meta.events.register("provide-client-params.s3.PutObject", before_put)
    try:
        assert ok(a, command="str_replace", path=path, old_str="beta", new_str="BETA by a") == (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            "     1\talpha\n     2\tBETA by a\n     3\tGAMMA by b"
        )
    finally:
        s3.meta.events.unregister("provide-client-params.s3.PutObject", before_put)
    assert puts == ["agents/_stores/team-notes/plan.md"] * 2  # a's first PUT was refused, its second won
    assert ok(b, command="view", path=path).endswith("     1\talpha\n     2\tBETA by a\n     3\tGAMMA by b")
    store = a.commands.stores["shared"][1].vault
    inner = store.parse("/memories/plan.md")
    record = store.attribution_of(inner, Header.from_metadata(store.store.get(store.key(inner)).metadata))
    assert (record.agent, record.command) == ("agent-a", "str_replace")


def test_two_agents_inserting_at_once_into_one_shared_file(make_tool: Callable[..., Any]) -> None:
    import threading

    shared = {"shared": Mount("team-notes", read_only=False)}
    tools = [make_tool(f"agent-{n}", mounts=shared) for n in ("a", "b")]
    path = "/memories/shared/log.md"
    ok(tools[0], command="create", path=path, file_text="")
    ok(tools[1], command="view", path=path)  # both tools have read the store's keys
    errors: list[BaseException] = []

    def insert(tool: Any, name: str) -> None:
        try:
            for i in range(5):
                ok(tool, command="insert", path=path, insert_line=0, insert_text=f"{name} {i}")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=insert, args=(tool, name)) for tool, name in zip(tools, "ab", strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    lines = ok(tools[0], command="view", path=path).split("\n")[1:]
    assert sorted(line.split("\t", 1)[1] for line in lines) == [f"{n} {i}" for n in "ab" for i in range(5)]


def test_the_root_listings_of_the_agent_and_its_mounts_are_in_flight_together(
    agent: Any, make_tool: Callable[..., Any], s3: Any
) -> None:
    """All three LISTs of `view /memories` with two mounts are sent before any is answered: each
    waits at a barrier for the other two (sent one after another, the first would wait alone)."""
    import threading

    two = make_tool("agent-42", mounts={"guidelines": Mount(STORE), "notes": Mount("team-notes")})
    ok(two, command="view", path="/memories")  # warm: each memory has looked for interrupted changes
    barrier = threading.Barrier(3, timeout=30)  # a guard against a hang, not a measurement
    prefixes: list[str] = []

    def together(params: dict[str, Any], **_: Any) -> None:
        prefixes.append(params["Prefix"])
        barrier.wait()

    s3.meta.events.register("provide-client-params.s3.ListObjectsV2", together)
    try:
        listing = ok(two, command="view", path="/memories")
    finally:
        s3.meta.events.unregister("provide-client-params.s3.ListObjectsV2", together)
    assert sorted(prefixes) == ["agents/_stores/support-guidelines/", "agents/_stores/team-notes/", "agents/agent-42/"]
    assert "4.0K\t/memories/notes/\n4.0K\t/memories/tickets/" in listing


def test_paths_are_validated_before_the_mount_rules(agent: Any, counter: CallCounter) -> None:
    counter.reset()
    assert err(agent, command="create", path=f"{G}/../x.md", file_text="x") == (
        f"Error: Invalid path {G}/../x.md: it contains '..'"
    )
    assert err(agent, command="rename", old_path=f"{G}/refunds.md", new_path="/memories//x") == (
        "Error: Invalid path /memories//x: it contains an empty segment"
    )
    assert err(agent, command="rename", old_path="/memories/a\\b", new_path=f"{G}/x.md") == (
        "Error: Invalid path /memories/a\\\\b: it contains a backslash"
    )
    assert err(agent, command="delete", path=5) == "Error: Invalid path 5: it must be a string"
    assert counter.by_op() == {}
