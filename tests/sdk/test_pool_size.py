"""A client whose connection pool is smaller than the tool's workers gets one warning that says the fix."""

from __future__ import annotations

import logging
from typing import Any

import boto3
import pytest
from botocore.config import Config

from s3memory import LocalKeys, S3MemoryTool
from tests.support import BUCKET, LOCAL_KEY, REGION


def build(client: Any, **kwargs: Any) -> None:
    S3MemoryTool(bucket=BUCKET, agent_id="a", keys=LocalKeys(LOCAL_KEY), s3_client=client, **kwargs).close()


def test_a_small_pool_is_named_with_the_fix(s3: Any, caplog: pytest.LogCaptureFixture) -> None:
    plain = boto3.client("s3", region_name=REGION)  # boto3's default pool: 10 connections
    with caplog.at_level(logging.WARNING, logger="s3memory"):
        build(plain)
        build(plain, max_workers=8)
        build(boto3.client("s3", region_name=REGION, config=Config(max_pool_connections=20)))
    assert [r.getMessage() for r in caplog.records if r.name == "s3memory"] == [
        "s3memory: the S3 client's connection pool (10) is smaller than max_workers (16); parallel requests "
        "will churn connections. Build the client with botocore.config.Config(max_pool_connections=20), "
        "or pass max_workers=10."
    ]
