"""The MCP server: one tool, `memory`, over stdio or streamable HTTP.

`tools/list` offers the tool with the schema in `schema`; `tools/call` runs the command in a
worker thread (the engine blocks on S3) and answers with one text block holding exactly the
string the memory tool returns, or, for a failure, the contract's error text with
`isError: true`. An unknown tool name is a protocol error, as MCP asks, and so is an unexpected
exception (named by its type only: its text could hold a bucket, a key or content).

Over HTTP the app is the MCP SDK's streamable-HTTP app, wrapped in `BearerToken` when a token is
configured, and outside that in `HostCheck` (`Host` and `Origin`, for every bind address: the
SDK's own check, which knows only three loopback spellings, is replaced by it); `serve_http`
reports the address it listens on (port 0 picks a free port) once the socket is bound.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError

from s3memory.core.version import __version__
from s3memory.memory.commands import Commands, answer

from .auth import BearerToken, HostCheck, is_loopback
from .schema import DESCRIPTION, INPUT_SCHEMA, INSTRUCTIONS, TOOL_NAME

MCP_PATH = "/mcp"
log = logging.getLogger("s3memory")

TOOL = types.Tool(
    name=TOOL_NAME,
    title="Memory",
    description=DESCRIPTION,
    input_schema=INPUT_SCHEMA,
    annotations=types.ToolAnnotations(
        title="Memory", read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
    ),
)


def build_server(memory: Commands) -> Server[Any]:
    """The MCP server answering for `memory` (one agent)."""

    async def list_tools(_ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[TOOL])

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != TOOL_NAME:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool {params.name!r}; this server offers {TOOL_NAME!r}")
        try:
            text, failed = await anyio.to_thread.run_sync(answer, memory, params.arguments)
        except Exception as err:  # a bug, not a command error: its text may name a bucket, a key or content
            kind = type(err).__name__
            log.error("s3memory mcp: a memory command raised %s", kind)
            raise MCPError(types.INTERNAL_ERROR, f"Internal error ({kind}); nothing more is shown") from None
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=failed)

    return Server(
        "s3memory",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(memory: Commands) -> None:
    """Serve one client on stdin/stdout until it closes stdin."""
    server = build_server(memory)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def http_app(memory: Commands, host: str, token: str | None) -> Any:
    """The ASGI app: the streamable-HTTP endpoint at `/mcp`, behind the bearer token if one is set,
    and behind the `Host` and `Origin` checks always."""
    unchecked = TransportSecuritySettings(enable_dns_rebinding_protection=False)  # HostCheck does it, for every host
    app = build_server(memory).streamable_http_app(
        streamable_http_path=MCP_PATH, host=host, transport_security=unchecked
    )
    return HostCheck(app if token is None else BearerToken(app, token), loopback_only=is_loopback(host))


def serve_http(
    memory: Commands, host: str, port: int, token: str | None, listening: Callable[[str], None] | None = None
) -> None:
    """Serve HTTP on host:port until interrupted (SIGINT/SIGTERM); `listening(url)` once bound."""
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)  # connections wait in the backlog until the app has started
    bound_port = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if family == socket.AF_INET6 else host
    if listening is not None:
        listening(f"http://{shown}:{bound_port}{MCP_PATH}")
    config = uvicorn.Config(
        http_app(memory, host, token), log_level="warning", access_log=False, lifespan="on", server_header=False
    )
    uvicorn.Server(config).run(sockets=[sock])
