"""Running the `s3memory` CLI in process (`main([...])`) or as a subprocess, in tests."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from s3memory.cli import main
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
