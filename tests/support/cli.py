"""Running the `s3memory` CLI in process (`main([...])`) or as a subprocess, in tests.

`run` passes `main` the test's `CliClients` (its `clients=` seam). Building the clients loads
botocore's service models into a new boto3 session (0.2-0.8 s), so they are built once per
worker and set of settings and reused by every `main()` call of every test; every request still
goes to the test's store (moto's backends are reset per test). A test may swap in its own KMS
client or hook the S3 client the CLI uses (`cli_clients` fixture); its hooks go at teardown.
"""

from __future__ import annotations

import base64
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from botocore.awsrequest import AWSResponse

from s3memory.cli import main
from s3memory.config import StorageSettings
from tests.support import LOCAL_KEY

ROOT = str(Path(__file__).resolve().parents[2])
LOCAL = base64.b64encode(LOCAL_KEY).decode()

# (every setting that shapes the clients, agent id) -> (s3, kms), for the worker's whole run.
_BUILT: dict[tuple[object, ...], tuple[Any, Any]] = {}


def _shape(settings: StorageSettings, agent_id: str | None) -> tuple[object, ...]:
    return (
        settings.profile, settings.region, settings.endpoint_url, settings.agent_role_arn, settings.max_workers,
        settings.max_attempts, settings.request_checksum_calculation, settings.response_checksum_validation, agent_id,
    )  # fmt: skip


class CliClients:
    """The `clients` seam of `main` for one test: the worker's shared clients, with the test's hooks."""

    def __init__(self) -> None:
        self._hooks: list[tuple[str, Callable[..., Any], str]] = []
        self._used: list[Any] = []  # the S3 clients this test's main() calls got (its hooks are on them)
        self.kms: Any = None  # when set, the CLI uses this KMS client (e.g. the test's, to see what it sends)

    def hook(self, event: str, handler: Callable[..., Any]) -> None:
        """Register `handler` on `event` of every S3 client the CLI uses in this test."""
        hook = (event, handler, f"test-cli-hook-{len(self._hooks)}")
        self._hooks.append(hook)
        for s3 in self._used:
            s3.meta.events.register(event, handler, unique_id=hook[2])

    def before(self, operation: str, action: Callable[[dict[str, Any]], None]) -> None:
        """Call `action(params)` just before each `operation` request the CLI sends (its API parameters)."""
        self._on("before-call", operation, action)

    def after(self, operation: str, action: Callable[[dict[str, Any]], None]) -> None:
        """Call `action(params)` once each `operation` request has been answered."""
        self._on("after-call", operation, action)

    def refuse(
        self, operation: str, code: str, when: Callable[[dict[str, Any]], bool], status: int = 503
    ) -> Callable[[], None]:
        """Answer each `operation` request whose API parameters `when` accepts with S3 error `code`,
        unsent; returns the function that ends it.

        The answer replaces the request before it reaches storage or botocore's retries, as an S3
        that refuses it (a SlowDown, say) would, so nothing is written and each call fails once."""
        on = [True]

        def answer(params: dict[str, Any]) -> tuple[Any, dict[str, Any]] | None:
            if not (on[0] and when(params)):
                return None
            http = AWSResponse("https://s3.test/refused", status, {}, None)
            return http, {"Error": {"Code": code, "Message": "refused by the test"}, "ResponseMetadata": {}}

        self._on("before-call", operation, answer)
        return lambda: on.__setitem__(0, False)

    def _on(self, event: str, operation: str, handler: Callable[[dict[str, Any]], Any]) -> None:
        """`handler(params)` on `event` of each `operation` request; what a before-call handler
        returns (not None) is the request's answer."""

        def remember(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
            context["test_params"] = dict(params)

        def call(context: dict[str, Any], **_: Any) -> Any:
            return handler(context["test_params"])

        self.hook(f"before-parameter-build.s3.{operation}", remember)
        self.hook(f"{event}.s3.{operation}", call)

    def __call__(self, settings: StorageSettings, agent_id: str | None) -> tuple[Any, Any]:
        key = _shape(settings, agent_id)
        if key not in _BUILT:
            _BUILT[key] = StorageSettings.clients(settings, agent_id)
        s3, kms = _BUILT[key]
        if all(s3 is not used for used in self._used):
            self._used.append(s3)
            for event, handler, unique_id in self._hooks:
                s3.meta.events.register(event, handler, unique_id=unique_id)
        return s3, self.kms if self.kms is not None else kms

    def close(self) -> None:
        """Take the test's hooks off the shared clients."""
        for s3 in self._used:
            for event, _, unique_id in self._hooks:
                s3.meta.events.unregister(event, unique_id=unique_id)
        self._used.clear()


CURRENT = [CliClients()]  # the test's (tests/conftest.py gives every test a fresh one)


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), clients=CURRENT[0])
    out, err = capsys.readouterr()
    return code, out, err


def subprocess_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("S3MEMORY_", "AWS_"))}
    env["PYTHONPATH"] = ROOT
    return env


WRITE_OPERATIONS = ("Put", "Delete", "Copy", "CreateMultipartUpload", "UploadPart", "CompleteMultipart", "Restore")


class Writes:
    """Every S3 write request (operation, key) the CLI's clients send; a DeleteObjects counts once per key."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: list[tuple[str, str]] = []

    def __call__(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        if model.name.startswith(WRITE_OPERATIONS):
            keys = [o["Key"] for o in params.get("Delete", {}).get("Objects", [])] or [str(params.get("Key", ""))]
            with self.lock:
                self.seen.extend((model.name, key) for key in keys)


def count_writes() -> Writes:
    """Count every S3 write request of the clients the CLI uses from now on in this test (`run`)."""
    counter = Writes()
    CURRENT[0].hook("before-parameter-build.s3.*", counter)
    return counter
