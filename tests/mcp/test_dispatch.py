"""The MCP adapter answers exactly as S3MemoryTool does, input by input (in process, on moto), and
never shows the text of an unexpected exception."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from mcp import Client, MCPError

from s3memory.mcp.server import build_server
from s3memory.memory.commands import answer
from tests.mcp.scenarios import ERRORS, HOSTILE_PATHS
from tests.support.cli import ROOT, subprocess_env

SESSION: list[object] = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/a.md", "file_text": "one\ntwo\n"},
    *[arguments for arguments, _ in ERRORS],
    *[{"command": "view", "path": path} for path, _ in HOSTILE_PATHS],
    None,
    ["view", "/memories"],
    {"command": None},
    {"command": ["view"]},
    {"command": "view"},
    {"command": "view", "path": "/memories/a.md", "view_range": "1-2"},
    {"command": "view", "path": "/memories/a.md", "view_range": [1]},
    {"command": "str_replace", "path": "/memories/a.md", "old_str": "two", "new_str": "2", "extra": True},
    {"command": "insert", "path": "/memories/a.md", "insert_line": "1", "insert_text": "x"},  # the SDK coerces it
    {"command": "insert", "path": "/memories/a.md", "insert_line": 2.0, "insert_text": "y"},
    {"command": "insert", "path": "/memories/a.md", "insert_line": True, "insert_text": "z"},
    {"command": "insert", "path": "/memories/a.md", "insert_line": 1.5, "insert_text": "no"},
    {"command": "insert", "path": "/memories/a.md", "insert_line": "1", "insert_text": 5},  # not all fit: as sent
    {"command": "view", "path": "/memories/a.md", "view_range": ["2", "3"]},
    {"command": "view", "path": "/memories/a.md", "view_range": ["1", "x"]},
    {"command": "str_replace", "path": "/memories/a.md", "old_str": "x", "new_str": 5},
    {"command": "insert", "path": "/memories/a.md", "insert_line": 1, "insert_text": "\ud800"},
    {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/dir/b.md"},
    {"command": "rename", "old_path": "/memories/dir/b.md"},
    {"command": "view", "path": "/memories"},
    {"command": "delete", "path": "/memories/dir"},
    {"command": "view", "path": "/memories/dir/b.md"},
]


def _tool_answer(tool: Any, arguments: object) -> tuple[str, bool]:
    try:
        return tool.call(arguments), False
    except ToolError as err:
        content = err.content
    assert isinstance(content, str)
    return content, True


def test_every_answer_equals_the_sdk_tools(make_tool: Callable[..., Any]) -> None:
    reference, adapted = make_tool("agent-tool"), make_tool("agent-mcp")
    expected = [_tool_answer(reference, arguments) for arguments in SESSION]
    got = [answer(adapted.memory, arguments) for arguments in SESSION]
    assert got == expected
    assert sum(failed for _, failed in got) == len(ERRORS) + len(HOSTILE_PATHS) + 14
    coerced = SESSION.index({"command": "view", "path": "/memories/a.md", "view_range": ["2", "3"]})
    assert got[coerced] == ("Here's the content of /memories/a.md with line numbers:\n     2\tz\n     3\tx", False)
    assert got[-3][0].endswith("\n4.0K\t/memories/dir/\n12B\t/memories/dir/b.md")


def test_the_adapter_modules_do_not_import_anthropic() -> None:
    code = (
        "import sys\nimport s3memory.mcp.server, s3memory.mcp.dispatch, s3memory.cli.mcp\n"
        "print(sorted(m for m in sys.modules if m == 's3memory.tool' or m.split('.')[0] == 'anthropic'))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(), cwd=ROOT)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "[]\n", "")


class _Broken:
    """A Memory whose view fails with an unexpected exception carrying private text."""

    def view(self, *_: object) -> str:
        raise RuntimeError("s3://secret-bucket/agents/a/notes.md: plan B")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_unexpected_exception_is_named_by_its_type_only(
    anyio_backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with Client(build_server(_Broken()), mode="legacy") as client:  # type: ignore[arg-type]
        with pytest.raises(MCPError) as failed:
            await client.call_tool("memory", {"command": "view", "path": "/memories"})
    assert failed.value.message == "Internal error (RuntimeError); nothing more is shown"
    assert [r.getMessage() for r in caplog.records if r.name == "s3memory"] == [
        "s3memory mcp: a memory command raised RuntimeError"
    ]
    assert "secret" not in caplog.text
