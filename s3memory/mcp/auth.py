"""Who may talk to the HTTP transport: loopback hosts, and a bearer token for everything else.

`BearerToken` wraps an ASGI app: an HTTP request without `Authorization: Bearer <token>` (the
value of `S3MEMORY_MCP_TOKEN`, compared in constant time) is answered 401 and never reaches
the MCP server. Pure standard library: no framework is needed to refuse a request.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

TOKEN_VARIABLE = "S3MEMORY_MCP_TOKEN"  # noqa: S105 - the variable's name, not a secret
MIN_TOKEN_CHARS = 16

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

_REFUSED = b'{"error": "unauthorized: send Authorization: Bearer <S3MEMORY_MCP_TOKEN>"}'


def is_loopback(host: str) -> bool:
    """`localhost`, 127.0.0.0/8 and ::1; any other name or address (0.0.0.0 included) is remote."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_token(token: str) -> str:
    """The token as configured, or ValueError saying what is wrong with it (never the token)."""
    token = token.strip()
    if len(token) < MIN_TOKEN_CHARS:
        raise ValueError(f"{TOKEN_VARIABLE} must be at least {MIN_TOKEN_CHARS} characters")
    if not token.isascii() or not token.isprintable() or " " in token:
        raise ValueError(f"{TOKEN_VARIABLE} must be printable ASCII without spaces")
    return token


class BearerToken:
    """ASGI middleware: HTTP requests must carry the token; lifespan events pass through, and a
    websocket without the token is closed (the app serves none)."""

    def __init__(self, app: App, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode("ascii")

    def _authorized(self, scope: Scope) -> bool:
        sent = [value for name, value in scope.get("headers", []) if name.lower() == b"authorization"]
        return len(sent) == 1 and hmac.compare_digest(sent[0], self._expected)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan" or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(_REFUSED)).encode()),
            (b"www-authenticate", b'Bearer realm="s3memory"'),
        ]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": _REFUSED})
