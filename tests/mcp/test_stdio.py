"""`s3memory mcp` over stdio, driven by the MCP SDK's client (and once by raw JSON-RPC lines).

Each test starts the server as a real subprocess against moto's server on 127.0.0.1, so the
answers are checked end to end: the protocol, the adapter, the engine and S3. The questions and
their exact answers are in `scenarios`, shared with the HTTP tests.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.mcp import scenarios
from tests.mcp.conftest import AGENT, server_command
from tests.support.moto_server import s3_client

pytestmark = [pytest.mark.anyio, pytest.mark.moto_only]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def connect(env: dict[str, str], agent: str = AGENT) -> AsyncIterator[Client]:
    command, *args = server_command(agent=agent)
    async with Client(StdioServerParameters(command=command, args=args, env=env)) as client:
        yield client


async def test_lists_one_tool_with_the_memory_tools_schema(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        await scenarios.lists_the_memory_tool(client)


async def test_every_command_answers_with_the_memory_tools_string(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        await scenarios.every_command(client)


async def test_failures_are_tool_errors_with_the_contracts_text(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        await scenarios.failures(client)


async def test_hostile_paths_are_refused_and_nothing_is_written(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        await scenarios.hostile_paths(client)
    listed = s3_client(server_env["S3MEMORY_ENDPOINT_URL"]).list_objects_v2(Bucket=server_env["S3MEMORY_BUCKET"])
    assert listed.get("KeyCount") == 0


async def test_two_server_processes_on_one_agent_keep_conditional_writes(server_env: dict[str, str]) -> None:
    async with connect(server_env) as first, connect(server_env) as second:
        await scenarios.conditional_writes(first, second)


def _rpc(process: subprocess.Popen[str], message: dict[str, Any]) -> dict[str, Any] | None:
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()
    if "id" not in message:
        return None
    answer = json.loads(process.stdout.readline())
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] == message["id"]
    return dict(answer)


def test_raw_json_rpc_lines_and_no_anthropic_import(server_env: dict[str, str]) -> None:
    """The wire itself: one JSON-RPC message per stdout line (legacy handshake); the server never loads anthropic."""
    code = (
        "import sys\nfrom s3memory.cli import main\ncode = main(sys.argv[1:])\n"
        "print('anthropic loaded:', 'anthropic' in sys.modules, 'exit:', code)"
    )
    process = subprocess.Popen(
        [server_command()[0], "-c", code, *server_command()[3:]],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=server_env,
    )  # fmt: skip
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        init = _rpc(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
        assert init is not None
        assert init["result"]["serverInfo"]["name"] == "s3memory"
        assert init["result"]["capabilities"]["tools"] is not None
        _rpc(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = _rpc(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert listed is not None
        assert [tool["name"] for tool in listed["result"]["tools"]] == ["memory"]
        arguments = {"command": "create", "path": "/memories/a\nb.md", "file_text": "x"}
        refused = _rpc(process, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                 "params": {"name": "memory", "arguments": arguments}})  # fmt: skip
        assert refused is not None
        assert refused["result"]["isError"] is True
        assert refused["result"]["content"] == [
            {"type": "text", "text": "Error: Invalid path /memories/a\\nb.md: it contains a control character"}
        ]
        unknown = _rpc(process, {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                                 "params": {"name": "files", "arguments": {}}})  # fmt: skip
        assert unknown is not None
        assert unknown["error"]["message"] == "Unknown tool 'files'; this server offers 'memory'"
    finally:
        out, err = process.communicate(input="", timeout=30)  # closing stdin ends the session
    assert process.returncode == 0
    assert out == "anthropic loaded: False exit: 0\n"
    assert err.startswith(f"s3memory mcp: serving agent {AGENT} over stdio\n")


def test_ctrl_c_is_a_normal_stop(server_env: dict[str, str]) -> None:
    """SIGINT (Ctrl-C in a terminal) ends the server as closing stdin does: exit 0, no error line."""
    process = subprocess.Popen(
        server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=server_env,
    )  # fmt: skip
    assert process.stderr is not None
    try:
        assert process.stderr.readline() == f"s3memory mcp: serving agent {AGENT} over stdio\n"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)  # stdin stays open: only the signal ends it
    finally:
        if process.poll() is None:
            process.kill()
    assert (process.returncode, out, err) == (0, "", "s3memory mcp: stopped\n")


def test_sigterm_is_a_normal_stop(server_env: dict[str, str]) -> None:
    """SIGTERM (docker stop, systemd) as SIGINT: exit 0 and a `stopped` line (old code: -15, nothing)."""
    process = subprocess.Popen(
        server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=server_env,
    )  # fmt: skip
    assert process.stderr is not None
    try:
        assert process.stderr.readline() == f"s3memory mcp: serving agent {AGENT} over stdio\n"
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert (process.returncode, out, err) == (0, "", "s3memory mcp: stopped\n")
