"""Running the `s3memory` CLI in process (`main([...])`) or as a subprocess, in tests.

`run` passes `main` the test's `CliClients` (its `clients=` seam): boto3 clients built once per
settings and agent id for the test (~0.2 s of model loading each) and reused by every `main()`
call; every request still goes to the store. A test may swap in its own KMS client or register
hooks on the S3 client the CLI uses (`cli_clients` fixture).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from s3memory.cli import main
from s3memory.config import StorageSettings
from tests.support import LOCAL_KEY

ROOT = str(Path(__file__).resolve().parents[2])
LOCAL = base64.b64encode(LOCAL_KEY).decode()


class CliClients:
    """The `clients` seam of `main`: caches the clients per (profile, region, endpoint, workers, agent)."""

    def __init__(self) -> None:
        self._made: dict[tuple[object, ...], tuple[Any, Any]] = {}
        self._setups: list[Callable[[Any], None]] = []
        self.kms: Any = None  # when set, the CLI uses this KMS client (e.g. the test's, to see what it sends)

    def each_s3(self, setup: Callable[[Any], None]) -> None:
        """Call `setup(s3)` on every S3 client the CLI uses: those built already, and those built later."""
        self._setups.append(setup)
        for s3, _ in self._made.values():
            setup(s3)

    def hook(self, event: str, handler: Callable[..., Any]) -> None:
        """Register `handler` on `event` of every S3 client the CLI uses."""
        unique_id = f"test-hook-{len(self._setups)}"
        self.each_s3(lambda s3: s3.meta.events.register(event, handler, unique_id=unique_id))

    def __call__(self, settings: StorageSettings, agent_id: str | None) -> tuple[Any, Any]:
        key = (settings.profile, settings.region, settings.endpoint_url, settings.max_workers, agent_id)
        if key not in self._made:
            s3, kms = StorageSettings.clients(settings, agent_id)
            for setup in self._setups:
                setup(s3)
            self._made[key] = (s3, kms)
        s3, kms = self._made[key]
        return s3, self.kms if self.kms is not None else kms


CURRENT = [CliClients()]  # the test's (tests/conftest.py gives every test a fresh one)


def run(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), clients=CURRENT[0])
    out, err = capsys.readouterr()
    return code, out, err


def subprocess_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("S3MEMORY_", "AWS_"))}
    env["PYTHONPATH"] = ROOT
    return env
