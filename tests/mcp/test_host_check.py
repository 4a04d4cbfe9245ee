"""DNS rebinding and cross-site pages are refused whatever the spelling of the bind address.

The MCP SDK checks `Host` and `Origin` only when the server is bound to `127.0.0.1`, `localhost` or
`::1`; `--host 127.0.0.2`, `[::1]` or `0:0:0:0:0:0:0:1` also count as loopback (no token needed)
and were left open. `HostCheck` now checks every request. Here a browser-style request (a forged
`Host`, a foreign `Origin`) goes over real HTTP to the app as `s3memory mcp` builds it for each
spelling, served on 127.0.0.1 (and stopped afterwards); the `s3memory mcp` subprocess on
127.0.0.1 is checked the same way.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest
import uvicorn

from s3memory.mcp.auth import host_allowed, origin_allowed
from s3memory.mcp.server import http_app
from tests.mcp.test_http import TOKEN, http_server

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LOOPBACK_SPELLINGS = ["127.0.0.1", "127.0.0.2", "localhost", "[::1]", "::1", "0:0:0:0:0:0:0:1", "127.1.2.3"]


@contextmanager
def served(app: Any) -> Iterator[str]:
    """`app` served by uvicorn on 127.0.0.1, a free port, in a thread; stopped on exit."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert time.monotonic() < deadline
            assert thread.is_alive()
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def _post(url: str, headers: dict[str, str]) -> httpx2.Response:
    with httpx2.Client(timeout=30) as http:
        return http.post(url, json=INITIALIZE, headers={**ACCEPT, **headers})


@pytest.mark.parametrize("bind", LOOPBACK_SPELLINGS)
def test_a_rebinding_page_is_refused_on_every_loopback_spelling(make_tool: Callable[..., Any], bind: str) -> None:
    memory = make_tool().memory
    with served(http_app(memory, bind, None)) as url:
        port = url.split(":")[2].split("/")[0]
        rebinding = _post(url, {"Host": f"attacker.example:{port}", "Origin": f"http://attacker.example:{port}"})
        foreign_page = _post(url, {"Origin": "http://attacker.example"})
        forged_host = _post(url, {"Host": "attacker.example"})
        own = _post(url, {})
        local_page = _post(url, {"Origin": "http://localhost:6274"})  # a local tool (MCP Inspector)
    assert (rebinding.status_code, rebinding.text) == (421, "Invalid Host header")
    assert (foreign_page.status_code, foreign_page.text) == (403, "Invalid Origin header")
    assert (forged_host.status_code, forged_host.text) == (421, "Invalid Host header")
    assert own.status_code == 200
    assert local_page.status_code == 200


def test_beyond_loopback_the_token_guards_the_host_and_the_origin_is_checked(make_tool: Callable[..., Any]) -> None:
    """Bound beyond loopback (always with a token), any name may reach the server, but a page of
    another site may not, token or not."""
    memory = make_tool().memory
    token = {"Authorization": f"Bearer {TOKEN}"}
    with served(http_app(memory, "0.0.0.0", TOKEN)) as url:  # the app for a wildcard bind, served on 127.0.0.1
        by_name = _post(url, {**token, "Host": "mcp.internal:8000"})
        without_token = _post(url, {"Host": "mcp.internal:8000"})
        foreign_page = _post(url, {**token, "Host": "mcp.internal:8000", "Origin": "http://attacker.example"})
        loopback_page = _post(url, {**token, "Host": "mcp.internal:8000", "Origin": "http://localhost:6274"})
        own_page = _post(url, {**token, "Host": "mcp.internal:8000", "Origin": "https://mcp.internal:8000"})
    assert by_name.status_code == 200
    assert without_token.status_code == 401
    assert (foreign_page.status_code, foreign_page.text) == (403, "Invalid Origin header")
    assert loopback_page.status_code == 403
    assert own_page.status_code == 200


@pytest.mark.moto_only
def test_the_command_on_127_0_0_1_refuses_forged_hosts_and_origins(server_env: dict[str, str]) -> None:
    with http_server(server_env, None) as url:
        rebinding = _post(url, {"Host": "attacker.example", "Origin": "http://attacker.example"})
        foreign_page = _post(url, {"Origin": "https://attacker.example"})
        own = _post(url, {})
    assert (rebinding.status_code, rebinding.text) == (421, "Invalid Host header")
    assert (foreign_page.status_code, foreign_page.text) == (403, "Invalid Origin header")
    assert own.status_code == 200


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8000", True), ("127.0.0.2", True), ("localhost:1", True), ("LOCALHOST:1", True),
        ("[::1]:8000", True), ("[0:0:0:0:0:0:0:1]:80", True), ("127.255.0.9:1", True),
        (None, False), ("", False), ("attacker.example", False), ("attacker.example:8000", False),
        ("localhost.attacker.example", False), ("127.0.0.1.nip.io", False), ("user@127.0.0.1", False),
        ("127.0.0.1:99999", False), ("127.0.0.1:x", False), ("127.0.0.1/x", False), ("10.0.0.1", False),
        ("0.0.0.0:8000", False), ("[::]:8000", False), ("localhost.", False),
    ],
)  # fmt: skip
def test_hosts_allowed_on_a_loopback_bind(host: str | None, allowed: bool) -> None:
    assert host_allowed(host, loopback_only=True) is allowed


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True), ("http://127.0.0.2:8000", True), ("http://localhost:6274", True), ("https://[::1]:3000", True),
        ("http://attacker.example", False), ("http://127.0.0.1.attacker.example", False), ("null", False),
        ("file://", False), ("http://127.0.0.1:8000/path", False), ("http://user@127.0.0.1", False), ("", False),
    ],
)  # fmt: skip
def test_origins_allowed_on_a_loopback_bind(origin: str | None, allowed: bool) -> None:
    assert origin_allowed(origin, "127.0.0.2:8000", loopback_only=True) is allowed
