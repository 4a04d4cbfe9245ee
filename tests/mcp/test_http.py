"""`s3memory mcp --transport streamable-http` on 127.0.0.1: the bearer token, a session, two clients.

The server is a subprocess on 127.0.0.1 port 0 (it reports the port it bound on stderr) and is
stopped with SIGTERM after each test. Binding anything but loopback is only checked to be
refused: no test listens beyond 127.0.0.1.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from s3memory.cli import main
from tests.mcp import scenarios
from tests.mcp.conftest import AGENT, server_command

pytestmark = [pytest.mark.anyio, pytest.mark.moto_only]

TOKEN = "s3memory-test-token-0123456789"
REFUSED = '{"error": "unauthorized: send Authorization: Bearer <S3MEMORY_MCP_TOKEN>"}'


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextmanager
def http_server(env: dict[str, str], token: str | None) -> Iterator[str]:
    """`s3memory mcp` on 127.0.0.1, a free port; yields its URL, then stops it with SIGTERM.

    uvicorn shuts down gracefully and then raises the signal again, which the server takes as a
    normal stop: a `stopped` line and exit 0 (old code: killed by the signal, -15, no line).
    """
    env = {**env, **({"S3MEMORY_MCP_TOKEN": token} if token else {})}
    command = server_command("--transport", "streamable-http", "--host", "127.0.0.1", "--port", "0")
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        guarded = "bearer token required" if token else "no token: loopback only"
        prefix, _, rest = line.partition(" at ")
        assert prefix == f"s3memory mcp: serving agent {AGENT}"
        url, _, note = rest.rstrip("\n").partition(" ")
        assert note == f"({guarded})"
        assert url.startswith("http://127.0.0.1:")
        assert url.endswith("/mcp")
        yield url
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    assert (process.returncode, err) == (0, "s3memory mcp: stopped\n")


@asynccontextmanager
async def connect(url: str, token: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def test_requests_without_the_token_are_refused(server_env: dict[str, str]) -> None:
    with http_server(server_env, TOKEN) as url:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        async with httpx2.AsyncClient() as http:
            answers = [
                await http.post(url, json=body),
                await http.post(url, json=body, headers={"Authorization": "Bearer wrong-token-0123456789"}),
                await http.post(url, json=body, headers={"Authorization": TOKEN}),
                await http.get(url),
                await http.get(url.removesuffix("/mcp") + "/anything-else"),
            ]
        assert [a.status_code for a in answers] == [401] * 5
        assert {a.text for a in answers} == {REFUSED}
        assert {a.headers["www-authenticate"] for a in answers} == {'Bearer realm="s3memory"'}
        async with connect(url, TOKEN) as client:
            await scenarios.lists_the_memory_tool(client)


async def test_a_session_with_the_token_answers_every_command_and_error(server_env: dict[str, str]) -> None:
    with http_server(server_env, TOKEN) as url:
        async with connect(url, TOKEN) as client:
            await scenarios.every_command(client)
            await scenarios.failures(client)
            await scenarios.hostile_paths(client)


async def test_two_clients_on_one_http_server_keep_conditional_writes(server_env: dict[str, str]) -> None:
    with http_server(server_env, None) as url:
        async with connect(url, None) as first, connect(url, None) as second:
            await scenarios.conditional_writes(first, second)


@pytest.mark.parametrize(
    ("argv", "token", "message"),
    [
        (["--host", "0.0.0.0"], None,
         "--host 0.0.0.0 is not a loopback address; to serve other machines pass --allow-remote and set "
         "S3MEMORY_MCP_TOKEN"),
        (["--host", "0.0.0.0"], TOKEN,
         "--host 0.0.0.0 is not a loopback address; to serve other machines pass --allow-remote and set "
         "S3MEMORY_MCP_TOKEN"),
        (["--host", "192.168.1.9", "--allow-remote"], None,
         "--allow-remote needs S3MEMORY_MCP_TOKEN: every request must carry it as a bearer token"),
        (["--host", "::", "--allow-remote"], "short", "S3MEMORY_MCP_TOKEN must be at least 16 characters"),
        (["--port", "70000"], None, "--port must be from 0 to 65535 (0 picks a free port)"),
    ],
)  # fmt: skip
def test_binding_beyond_loopback_needs_allow_remote_and_a_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], token: str | None,
    message: str,
) -> None:  # fmt: skip
    if token:
        monkeypatch.setenv("S3MEMORY_MCP_TOKEN", token)
    code = main(["mcp", "--agent", AGENT, "--transport", "streamable-http", *argv])
    assert code == 2
    assert capsys.readouterr().err == f"s3memory: error: {message}\n"


def test_http_flags_need_the_http_transport(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--agent", AGENT, "--port", "9"]) == 2
    assert capsys.readouterr().err == (
        "s3memory: error: --host, --port and --allow-remote need --transport streamable-http\n"
    )


def test_without_the_mcp_extra_the_command_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if `pip install 's3memory[mcp]'` had not been run
    assert main(["mcp", "--agent", AGENT]) == 2
    assert capsys.readouterr().err == "s3memory: error: s3memory mcp needs the MCP SDK: pip install 's3memory[mcp]'\n"
