"""`s3memory mcp`: serve one agent's memory as a Model Context Protocol server.

Stdio by default (an MCP client starts the command); `--transport streamable-http` listens on
loopback, and only `--allow-remote` with `S3MEMORY_MCP_TOKEN` set lets it bind anything else.
Status lines and (with `--log-level INFO`) the per-command log records go to stderr: on stdio,
stdout carries the protocol alone. Never loads `anthropic`.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from s3memory.config import Settings

from .context import load_settings
from .exits import EXIT_OK, PROG, UsageError, aws_configuration

STDIO = "stdio"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def _token(args: argparse.Namespace, remote: bool) -> str | None:
    from s3memory.mcp.auth import TOKEN_VARIABLE, check_token

    raw = os.environ.get(TOKEN_VARIABLE) or None
    if remote and not args.allow_remote:
        raise UsageError(
            f"--host {args.host} is not a loopback address; to serve other machines pass --allow-remote "
            f"and set {TOKEN_VARIABLE}"
        )
    if remote and raw is None:
        raise UsageError(f"--allow-remote needs {TOKEN_VARIABLE}: every request must carry it as a bearer token")
    try:
        return None if raw is None else check_token(raw)
    except ValueError as err:
        raise UsageError(str(err)) from None


def _check_transport(args: argparse.Namespace) -> tuple[str, int, str | None]:
    from s3memory.mcp.auth import is_loopback

    if args.transport == STDIO:
        if args.host is not None or args.port is not None or args.allow_remote:
            raise UsageError("--host, --port and --allow-remote need --transport streamable-http")
        return "", 0, None
    host = DEFAULT_HOST if args.host is None else args.host
    port = DEFAULT_PORT if args.port is None else args.port
    if not 0 <= port <= 65535:
        raise UsageError("--port must be from 0 to 65535 (0 picks a free port)")
    return host, port, _token(args, not is_loopback(host))


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM (docker stop, systemd, Lambda's shutdown) ends the server as Ctrl-C does


def stop_on_sigterm() -> None:
    """SIGTERM stops the server as SIGINT does: a `stopped` line and exit 0, not death by signal.
    (uvicorn restores this handler and raises the signal again after its graceful shutdown.)"""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)


def _status(line: str) -> None:
    sys.stderr.write(f"{PROG} mcp: {line}\n")
    sys.stderr.flush()


def _interrupted(err: BaseException) -> bool:
    """Ctrl-C: a KeyboardInterrupt, also when the server's task group wraps it in an exception group
    (a signal that arrives while its tasks start)."""
    if isinstance(err, KeyboardInterrupt):
        return True
    inner = getattr(err, "exceptions", None)
    return isinstance(inner, tuple) and bool(inner) and all(_interrupted(e) for e in inner)


def run_mcp(args: argparse.Namespace) -> int:
    host, port, token = _check_transport(args)
    try:
        import mcp  # noqa: F401  # the optional extra: say how to install it before connecting anything
    except ImportError:
        raise UsageError("s3memory mcp needs the MCP SDK: pip install 's3memory[mcp]'") from None
    settings = load_settings(args)
    assert isinstance(settings, Settings)
    from botocore.exceptions import BotoCoreError

    from s3memory.core.mounts import parse_specs
    from s3memory.mcp.dispatch import open_memory
    from s3memory.mcp.server import serve_http, serve_stdio

    try:
        mounts = None if args.mount is None else parse_specs(args.mount)
    except ValueError as err:  # a name given twice
        raise UsageError(f"--mount: {err}") from None
    try:
        memory, executor = open_memory(settings, args.agent, mounts)
    except BotoCoreError as err:  # unknown profile, no region, ...: the message names no secret
        raise aws_configuration(err) from None
    stop_on_sigterm()
    try:
        if args.transport == STDIO:
            import anyio

            _status(f"serving agent {args.agent} over stdio")
            anyio.run(serve_stdio, memory)
        else:
            guarded = "bearer token required" if token else "no token: loopback only"

            def listening(url: str) -> None:
                _status(f"serving agent {args.agent} at {url} ({guarded})")

            serve_http(memory, host, port, token, listening)
    except BaseException as err:
        if not _interrupted(err):
            raise
        _status("stopped")  # Ctrl-C is how an operator stops a server: a normal end
    finally:
        executor.shutdown(wait=True)
    return EXIT_OK
