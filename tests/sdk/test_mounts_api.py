"""Mounts through every way of configuring a tool: the constructor's `mounts=`, the async tool,
`S3MEMORY_MOUNTS` for `from_env` and the MCP server, and `s3memory mcp --mount`."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import ValidationError

from s3memory import AsyncS3MemoryTool, LocalKeys, Mount, S3MemoryTool, Settings
from s3memory.memory.commands import answer
from tests.support import BUCKET, LOCAL_KEY, listed_keys, ok
from tests.support.cli import run

# Settings wiring, checked on moto: clients are built from S3MEMORY_* alone (no test endpoint).
pytestmark = pytest.mark.moto_only

READ_ONLY = (
    "Error: Cannot change /memories/guidelines/a.md: /memories/guidelines is a read-only shared store. "
    "Nothing was changed; retrying will not help."
)


@pytest.fixture
def environment(s3: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    monkeypatch.setenv("S3MEMORY_PREFIX", "agents/")
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", base64.b64encode(LOCAL_KEY).decode())
    with S3MemoryTool(bucket=BUCKET, agent_id="curator", keys=LocalKeys(LOCAL_KEY), s3_client=s3, prefix="agents/",
                      mounts={"g": Mount("support-guidelines", read_only=False)}) as curator:  # fmt: skip
        ok(curator, command="create", path="/memories/g/a.md", file_text="guideline\n")
    return s3


def test_from_env_reads_s3memory_mounts(environment: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("S3MEMORY_MOUNTS", "guidelines=support-guidelines:ro,notes=team-notes:rw")
    with S3MemoryTool.from_env("agent-7") as tool:
        assert tool.commands.stores["guidelines"][0] == Mount("support-guidelines")  # type: ignore[union-attr]
        assert ok(tool, command="view", path="/memories/guidelines/a.md").endswith("     1\tguideline")
        with pytest.raises(Exception, match="read-only shared store") as caught:
            tool.call({"command": "create", "path": "/memories/guidelines/a.md", "file_text": "x"})
        assert str(getattr(caught.value, "content", "")) == READ_ONLY
        ok(tool, command="create", path="/memories/notes/n.md", file_text="n")
    assert "agents/_stores/team-notes/n.md" in listed_keys(environment, prefix="agents/_stores/team-notes/")
    with S3MemoryTool.from_env("agent-7", mounts=None) as tool:  # an override wins
        assert tool.commands is tool.memory


def test_s3memory_mounts_says_what_is_wrong(environment: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("S3MEMORY_MOUNTS", "guidelines=support-guidelines:rx")
    with pytest.raises(ValidationError, match="mounts") as caught:
        Settings()
    assert "mount 'guidelines=support-guidelines:rx': the mode after ':' must be ro, rw or create" in str(caught.value)


def test_without_mounts_the_tool_runs_on_its_memory(environment: Any) -> None:
    with S3MemoryTool(bucket=BUCKET, agent_id="a", keys=LocalKeys(LOCAL_KEY), s3_client=environment) as tool:
        assert tool.commands is tool.memory


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def atool(environment: Any) -> AsyncIterator[AsyncS3MemoryTool]:
    tool = AsyncS3MemoryTool(bucket=BUCKET, agent_id="agent-42", keys=LocalKeys(LOCAL_KEY), s3_client=environment,
                             prefix="agents/", mounts={"guidelines": Mount("support-guidelines")})  # fmt: skip
    yield tool
    tool.close()


@pytest.mark.anyio
async def test_the_async_tool_takes_mounts(atool: AsyncS3MemoryTool) -> None:
    from anthropic.lib.tools import ToolError

    listing = await atool.call({"command": "view", "path": "/memories"})
    assert listing.endswith("4.0K\t/memories\n4.0K\t/memories/guidelines/\n10B\t/memories/guidelines/a.md")
    with pytest.raises(ToolError) as caught:
        await atool.call({"command": "delete", "path": "/memories/guidelines/a.md"})
    assert caught.value.content == READ_ONLY


def test_the_mcp_server_mounts_s3memory_mounts_or_its_mount_flags(
    environment: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from s3memory.core.mounts import parse_specs
    from s3memory.mcp.dispatch import open_memory

    monkeypatch.setenv("S3MEMORY_MOUNTS", "guidelines=support-guidelines")
    for mounts in (None, parse_specs(["guidelines=support-guidelines:ro"])):
        memory, executor = open_memory(Settings(), "agent-42", mounts)  # type: ignore[call-arg]
        try:
            assert answer(memory, {"command": "view", "path": "/memories/guidelines/a.md"}) == (
                "Here's the content of /memories/guidelines/a.md with line numbers:\n     1\tguideline",
                False,
            )
            assert answer(memory, {"command": "delete", "path": "/memories/guidelines/a.md"}) == (READ_ONLY, True)
        finally:
            executor.shutdown(wait=True)


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("guidelines", "mount 'guidelines' must be NAME=STORE, NAME=STORE:ro or NAME=STORE:rw, "
                       "optionally followed by :create"),
        ("g=_x", "store id must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a letter or "
                 "digit"),
    ],
)  # fmt: skip
def test_the_mount_flag_says_what_is_wrong(capsys: pytest.CaptureFixture[str], flag: str, message: str) -> None:
    code, out, err = run(capsys, "mcp", "--agent", "a", "--mount", flag)
    assert (code, out) == (2, "")
    assert err == f"s3memory: error: argument --mount: {message}\n"


def test_a_mount_name_given_twice_is_a_usage_error(environment: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "mcp", "--agent", "a", "--mount", "g=a", "--mount", "g=b:rw")
    assert (code, out) == (2, "")
    assert err == "s3memory: error: --mount: mount name 'g' is given twice\n"
