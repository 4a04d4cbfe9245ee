"""docs/observability.md's AWS Lambda Powertools snippet routes s3memory's records, run before
s3memory is imported (as a handler module's first lines are): one JSON line per command.

Each run is a fresh interpreter, since the snippet configures process-wide logging.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("aws_lambda_powertools")

REPO = Path(__file__).resolve().parents[2]
SNIPPET = re.search(
    r"## AWS Lambda\n.*?```python\n(.*?)```", (REPO / "docs" / "observability.md").read_text(encoding="utf-8"), re.S
)
COMMAND = """
import base64, os
os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x", AWS_DEFAULT_REGION="us-east-1")
from moto import mock_aws
import boto3
from botocore.config import Config
from s3memory import LocalKeys, S3MemoryTool
with mock_aws():
    s3 = boto3.client("s3", config=Config(max_pool_connections=20))
    s3.create_bucket(Bucket="b-snippet")
    tool = S3MemoryTool(bucket="b-snippet", agent_id="support-agent-1", keys=LocalKeys(b"k" * 32), s3_client=s3)
    tool.call({"command": "view", "path": "/memories"})
"""


def records(snippet: str) -> list[dict[str, object]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "S3MEMORY_", "POWERTOOLS_"))}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run(
        [sys.executable, "-c", snippet + COMMAND], env=env, cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def test_the_documented_snippet_routes_each_command_as_one_json_line() -> None:
    assert SNIPPET is not None
    (record,) = records(SNIPPET.group(1))
    assert record["service"] == "support-agent"
    assert record["level"] == "INFO"
    assert (record["command"], record["outcome"], record["agent_id"]) == ("view", "ok", "support-agent-1")


def test_without_creating_the_logger_first_the_snippet_would_route_nothing() -> None:
    assert SNIPPET is not None
    without = "\n".join(line for line in SNIPPET.group(1).splitlines() if 'logging.getLogger("s3memory")' not in line)
    assert without != SNIPPET.group(1)
    assert records(without) == []
