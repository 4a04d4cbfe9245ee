"""Fixtures of the MCP server tests: moto as a server on 127.0.0.1, and `s3memory mcp` as a subprocess.

A server subprocess cannot see the test's in-process moto, so these tests start moto's threaded
server on 127.0.0.1 (port 0, one request at a time so that conditional PUTs are atomic, as on
S3) and point S3MEMORY_ENDPOINT_URL at it. Every test gets a bucket of its own.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support import LOCAL_KEY, REGION
from tests.support.cli import subprocess_env
from tests.support.moto_server import new_bucket, running_moto_server

AGENT = "support-agent-1"


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    with running_moto_server() as url:
        yield url


@pytest.fixture
def server_env(moto_url: str) -> dict[str, str]:
    """The environment of an `s3memory mcp` subprocess: S3MEMORY_* for a fresh bucket on the moto server."""
    env = subprocess_env()
    env.update({
        "S3MEMORY_BUCKET": new_bucket(moto_url),
        "S3MEMORY_PREFIX": "agents/",
        "S3MEMORY_ENDPOINT_URL": moto_url,
        "S3MEMORY_LOCAL_KEY": base64.b64encode(LOCAL_KEY).decode(),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_EC2_METADATA_DISABLED": "true",
    })  # fmt: skip
    return env


def server_command(*extra: str, agent: str = AGENT) -> list[str]:
    return [sys.executable, "-m", "s3memory.cli", "mcp", "--agent", agent, *extra]


def text_of(result: Any) -> tuple[str, bool]:
    """(the one text block, isError) of a CallToolResult."""
    (block,) = result.content
    assert block.type == "text"
    return block.text, result.is_error
