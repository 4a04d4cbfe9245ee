"""AsyncS3MemoryTool: every command through `await tool.call(...)`, and the SDK's async tool runner.

Runs on anyio's pytest plugin (it ships with anyio) on the asyncio backend.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import anyio
import pytest
from anthropic.lib.tools import ToolError

from s3memory import AsyncS3MemoryTool, LocalKeys
from tests.support import BUCKET, LOCAL_KEY, assert_one_branch_key, listed_keys, ok, settled, without_keystore
from tests.support.api import BETA, SCRIPT, ScriptedApi, check_bucket, check_conversation, httpx

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The model 'claude-sonnet-4-5' is deprecated:DeprecationWarning"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def atool(s3: Any) -> AsyncIterator[AsyncS3MemoryTool]:
    tool = AsyncS3MemoryTool(
        bucket=BUCKET, agent_id="agent-42", keys=LocalKeys(LOCAL_KEY), s3_client=s3, prefix="agents/"
    )
    yield tool
    tool.close()


async def aerr(tool: AsyncS3MemoryTool, **command: Any) -> str:
    with pytest.raises(ToolError) as info:
        await tool.call(command)
    assert isinstance(info.value.content, str)
    return info.value.content


async def test_every_command(atool: AsyncS3MemoryTool, s3: Any) -> None:
    call = atool.call
    assert await call({"command": "create", "path": "/memories/notes/todo.md", "file_text": "one\ntwo\nthree\n"}) == (
        "File created successfully at: /memories/notes/todo.md"
    )
    assert await call({"command": "view", "path": "/memories"}) == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories\n"
        "4.0K\t/memories/notes/\n"
        "14B\t/memories/notes/todo.md"
    )
    assert await call({"command": "view", "path": "/memories/notes/todo.md", "view_range": [2, -1]}) == (
        "Here's the content of /memories/notes/todo.md with line numbers:\n     2\ttwo\n     3\tthree"
    )
    assert await call(
        {"command": "str_replace", "path": "/memories/notes/todo.md", "old_str": "two", "new_str": "2"}
    ) == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\tone\n"
        "     2\t2\n"
        "     3\tthree"
    )
    assert await call(
        {"command": "insert", "path": "/memories/notes/todo.md", "insert_line": 0, "insert_text": "zero"}
    ) == ("The file /memories/notes/todo.md has been edited.")
    assert await call({"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/done"}) == (
        "Successfully renamed /memories/notes to /memories/done"
    )
    assert await call({"command": "view", "path": "/memories/done/todo.md"}) == (
        "Here's the content of /memories/done/todo.md with line numbers:\n"
        "     1\tzero\n"
        "     2\tone\n"
        "     3\t2\n"
        "     4\tthree"
    )
    settled(atool)  # the rename's record is released after its answer
    listed = listed_keys(s3)
    assert without_keystore(listed) == ["agents/agent-42/done/todo.md"]
    assert_one_branch_key(listed, "agents/agent-42/")  # made by the first create
    assert await call({"command": "delete", "path": "/memories/done"}) == "Successfully deleted /memories/done"
    settled(atool)
    listed = listed_keys(s3)
    assert without_keystore(listed) == []
    assert_one_branch_key(listed, "agents/agent-42/")  # deleting files keeps the agent's keystore


async def test_errors_are_tool_errors(atool: AsyncS3MemoryTool) -> None:
    await atool.call({"command": "create", "path": "/memories/a.md", "file_text": "a"})
    assert await aerr(atool, command="create", path="/memories/a.md", file_text="b") == (
        "Error: File /memories/a.md already exists"
    )
    assert await aerr(atool, command="view", path="/memories/nope") == (
        "The path /memories/nope does not exist. Please provide a valid path."
    )
    assert await aerr(atool, command="str_replace", path="/memories/a.md", old_str="zzz", new_str="y") == (
        "No replacement was performed, old_str `zzz` did not appear verbatim in /memories/a.md."
    )
    assert await aerr(atool, command="insert", path="/memories/a.md", insert_line=5, insert_text="y") == (
        "Error: Invalid `insert_line` parameter: 5. It should be within the range of lines of the file: [0, 1]"
    )
    assert (
        await aerr(atool, command="delete", path="/memories") == "Error: Cannot delete the /memories directory itself"
    )
    assert await aerr(atool, command="rename", old_path="/memories/x", new_path="/memories/y") == (
        "Error: The path /memories/x does not exist"
    )
    assert await aerr(atool, command="view", path="/memories/../etc") == (
        "Error: Invalid path /memories/../etc: it contains '..'"
    )
    assert await aerr(atool, command="undo", path="/memories/a.md") == (
        "Error: Unknown memory command 'undo'; use one of: view, create, str_replace, insert, delete, rename"
    )


async def test_async_and_sync_tools_share_the_store(atool: AsyncS3MemoryTool, make_tool: Callable[..., Any]) -> None:
    await atool.call({"command": "create", "path": "/memories/shared.md", "file_text": "from async\n"})
    sync_tool = make_tool()
    assert ok(sync_tool, command="view", path="/memories/shared.md") == (
        "Here's the content of /memories/shared.md with line numbers:\n     1\tfrom async"
    )
    ok(sync_tool, command="insert", path="/memories/shared.md", insert_line=1, insert_text="from sync")
    assert await atool.call({"command": "view", "path": "/memories/shared.md"}) == (
        "Here's the content of /memories/shared.md with line numbers:\n     1\tfrom async\n     2\tfrom sync"
    )


async def test_commands_do_not_block_the_event_loop(atool: AsyncS3MemoryTool, s3: Any) -> None:
    """A slow S3 call runs in a worker thread: other tasks keep running meanwhile."""
    s3.meta.events.register("before-call.s3.PutObject", lambda **_: time.sleep(0.5))
    ticks = 0
    result = ""

    async def ticker() -> None:
        nonlocal ticks
        while not result:
            ticks += 1
            await anyio.sleep(0.01)

    async def create() -> None:
        nonlocal result
        result = await atool.call({"command": "create", "path": "/memories/slow.md", "file_text": "s"})

    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        tg.start_soon(create)
    assert result == "File created successfully at: /memories/slow.md"
    assert ticks >= 10  # a blocked loop would tick once or twice in 0.5 s


async def test_concurrent_creates_of_one_path(atool: AsyncS3MemoryTool, s3: Any) -> None:
    results: list[str] = []

    async def create(i: int) -> None:
        try:
            results.append(await atool.call({"command": "create", "path": "/memories/one.md", "file_text": f"{i}"}))
        except ToolError as exc:
            results.append(str(exc.content))

    async with anyio.create_task_group() as tg:
        for i in range(4):
            tg.start_soon(create, i)
    assert sorted(results) == ["Error: File /memories/one.md already exists"] * 3 + [
        "File created successfully at: /memories/one.md"
    ]
    listed = listed_keys(s3)
    assert without_keystore(listed) == ["agents/agent-42/one.md"]
    assert_one_branch_key(listed, "agents/agent-42/")  # concurrent first writers agree on one branch key


@pytest.fixture
async def atool_own_keystore(s3: Any, keystore_bucket: str) -> AsyncIterator[AsyncS3MemoryTool]:
    """Like `atool`, with the agent's keystore (made by its first write) in a bucket of its own: the
    memory bucket then holds exactly the files the model wrote, which check_bucket lists."""
    tool = AsyncS3MemoryTool(
        bucket=BUCKET, agent_id="agent-42", keys=LocalKeys(LOCAL_KEY), s3_client=s3, prefix="agents/",
        keystore_bucket=keystore_bucket,
    )  # fmt: skip
    yield tool
    tool.close()


async def test_async_tool_runner_end_to_end(
    atool_own_keystore: AsyncS3MemoryTool, s3: Any, keystore_bucket: str
) -> None:
    atool = atool_own_keystore
    api = ScriptedApi(SCRIPT)
    client = anthropic.AsyncAnthropic(
        api_key="test", base_url="http://127.0.0.1:9", http_client=httpx.AsyncClient(transport=httpx.MockTransport(api))
    )
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-4-5",
        max_tokens=1024,
        messages=[{"role": "user", "content": "Remember my shopping list."}],
        tools=[atool],
        betas=[BETA],
    )
    messages = [message async for message in runner]
    check_conversation(api, messages)
    check_bucket(s3)
    assert_one_branch_key(listed_keys(s3, keystore_bucket), "agents/agent-42/")
    assert await atool.call({"command": "view", "path": "/memories/notes.md"}) == (
        "Here's the content of /memories/notes.md with line numbers:\n     1\tBuy oat milk\n     2\tCall Ann"
    )


async def test_the_async_tool_is_an_async_and_a_sync_context_manager(s3: Any) -> None:
    async with AsyncS3MemoryTool(
        bucket=BUCKET, agent_id="ctx", keys=LocalKeys(LOCAL_KEY), s3_client=s3, prefix="agents/"
    ) as tool:
        assert await tool.call({"command": "create", "path": "/memories/a.md", "file_text": "a"}) == (
            "File created successfully at: /memories/a.md"
        )
    assert tool._executor._shutdown
    with AsyncS3MemoryTool(bucket=BUCKET, agent_id="ctx", keys=LocalKeys(LOCAL_KEY), s3_client=s3) as sync_tool:
        pass
    assert sync_tool._executor._shutdown
