"""moto answering one request at a time: in process (the `aws` fixture), and as an HTTP server on
127.0.0.1 for load and fault tests, with clients for it."""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.config import Config

from tests.support import REGION

if TYPE_CHECKING:
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


_ONE_AT_A_TIME = threading.RLock()


def one_request_at_a_time(monkeypatch: pytest.MonkeyPatch, events: str = "before-send.s3.") -> None:
    """In-process moto applies each request whose event name starts with `events` whole, one at a
    time, as a server would (the `aws` fixture: every S3 request). moto applies an S3 request in
    several steps on shared dicts: a LIST iterating the bucket's keys while another thread's DELETE
    removes one raises KeyError out of moto, and a conditional PUT checks, then stores. The threads
    and every interleaving between requests stay; only moto's own steps are not interleaved. Other
    services are left concurrent by default: a Lambda invocation (run in this process by the Step
    Functions tests) makes S3 requests from threads of its own while its own request is answered."""
    from moto.core.botocore_stubber import BotocoreStubber

    handle = BotocoreStubber.__call__

    def whole(self: BotocoreStubber, event_name: str, request: Any, **kwargs: Any) -> Any:
        if not event_name.startswith(events):
            return handle(self, event_name, request, **kwargs)
        with _ONE_AT_A_TIME:
            return handle(self, event_name, request, **kwargs)

    monkeypatch.setattr(BotocoreStubber, "__call__", whole)


@contextmanager
def running_moto_server() -> Iterator[str]:
    """`serialized_moto_server()` started on 127.0.0.1: its URL while the block runs, stopped afterwards."""
    server = serialized_moto_server()
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def serialized_moto_server() -> ThreadedMotoServer:
    """moto's threaded server on 127.0.0.1 (port 0), answering one request at a time.

    moto evaluates `If-None-Match` / `If-Match` and then writes in two separate steps without a
    lock, so two concurrent conditional PUTs can both pass on it; S3 evaluates the condition and
    the write atomically. Serializing requests gives the fake that atomicity. Clients,
    connections, and every interleaving between one client's read and its conditional write
    stay concurrent, which is what these tests are about. (Imported here, not at module level,
    so spawned worker processes do not load the server.)
    """
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    class SerializedMotoServer(ThreadedMotoServer):
        def _server_entry(self) -> None:
            app = DomainDispatcherApplication(create_backend_app)
            lock = threading.Lock()

            def serialized(environ: dict[str, Any], start_response: Any) -> list[bytes]:
                with lock:
                    return list(app(environ, start_response))

            self._server = make_server(
                self._ip_address, self._port, serialized, True, request_handler=MotoRequestHandler
            )
            self._server_ready_event.set()
            self._server.serve_forever()

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one INFO line per request otherwise
    return SerializedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)


def s3_client(url: str, max_attempts: int = 10) -> Any:
    config = Config(retries={"mode": "standard", "max_attempts": max_attempts}, max_pool_connections=64)
    return boto3.client("s3", endpoint_url=url, region_name=REGION, config=config, **CREDENTIALS)


_BUCKETS = itertools.count()


def new_bucket(url: str) -> str:
    """A fresh bucket per test or round: moto's listing cost grows with every key in a bucket."""
    name = f"s3memory-load-{next(_BUCKETS)}"
    s3_client(url).create_bucket(Bucket=name)
    return name
