"""moto as an HTTP server on 127.0.0.1 for load and fault tests, and clients for it."""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

from tests.support import REGION

if TYPE_CHECKING:
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer

CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


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
