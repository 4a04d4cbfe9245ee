"""Running the `s3memory` CLI in process (`main([...])`) or as a subprocess, in tests."""

from __future__ import annotations

import base64
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from s3memory.cli import main
from s3memory.config import StorageSettings
from tests.support import LOCAL_KEY

ROOT = str(Path(__file__).resolve().parents[2])
LOCAL = base64.b64encode(LOCAL_KEY).decode()


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
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


def count_writes(monkeypatch: pytest.MonkeyPatch) -> Writes:
    """Count every S3 write request of the clients the CLI builds from now on (in `main([...])`)."""
    counter = Writes()
    build = StorageSettings.clients  # in tests/cli, the cached builder of tests/cli/conftest.py

    def clients(self: StorageSettings, agent_id: str | None = None) -> Any:
        s3, kms = build(self, agent_id)
        s3.meta.events.register("before-parameter-build.s3.*", counter, unique_id="count-writes")
        return s3, kms

    monkeypatch.setattr(StorageSettings, "clients", clients)
    return counter
