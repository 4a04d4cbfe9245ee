"""Who may talk to the HTTP transport: loopback hosts, and a bearer token for everything else.

`BearerToken` wraps an ASGI app: an HTTP request without `Authorization: Bearer <token>` (the
value of `S3MEMORY_MCP_TOKEN`, compared in constant time) is answered 401 and never reaches
the MCP server. `HostCheck` refuses DNS rebinding and cross-site browser requests, whatever the
spelling of the address the server is bound to (the MCP SDK's own check covers only `127.0.0.1`,
`localhost` and `::1`). Pure standard library: no framework is needed to refuse a request.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

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


_HOST_CHARS = re.compile(r"[A-Za-z0-9.:\[\]-]+")


def _hostname(authority: str) -> str | None:
    """The host of a `Host` header or an origin's authority (`127.0.0.2:8000`, `[::1]`), lowercased
    without brackets; None if it is not one (userinfo, a path, a bad port)."""
    if not _HOST_CHARS.fullmatch(authority):
        return None
    try:
        parts = urlsplit(f"//{authority}")
        parts.port  # noqa: B018 - raises ValueError for a port that is not one
    except ValueError:
        return None
    return parts.hostname or None


def host_allowed(host_header: str | None, *, loopback_only: bool) -> bool:
    """May a request with this `Host` be served? On a loopback bind (`loopback_only`) only a
    loopback name or address: a page whose name an attacker re-pointed at 127.0.0.1 (DNS
    rebinding) sends its own name. Beyond loopback every request carries the bearer token, which
    a rebinding page cannot send, so any name the server is reached by is accepted."""
    host = _hostname(host_header) if host_header else None
    if host is None:
        return False
    return is_loopback(host) or not loopback_only


def origin_allowed(origin: str | None, host_header: str, *, loopback_only: bool) -> bool:
    """May a request with this `Origin` be served? None (not a browser, or same-origin navigation):
    yes. Else the page must be the server's own origin, or, on a loopback bind, a page served from
    loopback (a local tool such as the MCP Inspector). Any other site's page is refused."""
    if origin is None:
        return True
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or parts.path or parts.query or parts.fragment:
        return False
    own = _hostname(parts.netloc) is not None and parts.netloc.lower() == host_header.lower()
    return own or (loopback_only and _hostname(parts.netloc) is not None and is_loopback(parts.hostname or ""))


class HostCheck:
    """ASGI middleware: an HTTP request whose `Host` is not allowed is answered 421, one from
    another site's page (`Origin`) 403, before the token is checked or the MCP server is reached.
    `loopback_only`: the server is bound to a loopback address (any spelling)."""

    def __init__(self, app: App, *, loopback_only: bool) -> None:
        self.app = app
        self.loopback_only = loopback_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, list[bytes]] = {}
        for name, value in scope.get("headers", []):
            headers.setdefault(name.lower(), []).append(value)
        hosts, origins = headers.get(b"host", []), headers.get(b"origin", [])
        host = hosts[0].decode("latin-1") if len(hosts) == 1 else None
        origin = origins[0].decode("latin-1") if len(origins) == 1 else None
        if host is None or not host_allowed(host, loopback_only=self.loopback_only):
            await _refuse(scope, send, 421, b"Invalid Host header")
        elif len(origins) > 1 or not origin_allowed(origin, host, loopback_only=self.loopback_only):
            await _refuse(scope, send, 403, b"Invalid Origin header")
        else:
            await self.app(scope, receive, send)


async def _refuse(scope: Scope, send: Send, status: int, body: bytes) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


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
