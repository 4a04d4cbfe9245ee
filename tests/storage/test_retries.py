"""`S3MEMORY_MAX_ATTEMPTS` counts every attempt of a request, the first included, and what
botocore's retry quota does to a client during a long outage.

A moto server on 127.0.0.1 whose every answer is replaced, before it is sent, by a 500
`InternalError` (a transient failure botocore retries): each `before-send` call is one attempt.
botocore's backoff delays are recorded and not slept, so the test takes no time.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError
from botocore.retries import quota, standard

from s3memory import Settings
from tests.support import BUCKET, LOCAL_KEY
from tests.support.moto_server import running_moto_server

pytestmark = pytest.mark.moto_only  # the failures are injected into clients built from S3MEMORY_* alone

FAULT = b"<Error><Code>InternalError</Code><Message>injected</Message></Error>"


class _Raw:
    def stream(self, **_: Any) -> Iterator[bytes]:
        yield FAULT


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with running_moto_server() as url:
        yield url


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    delays: list[float] = []

    def recorded(self: standard.ExponentialBackoff, context: Any) -> float:
        delays.append(1.0)
        return 0.0

    monkeypatch.setattr(standard.ExponentialBackoff, "delay_amount", recorded)
    return delays


def failing_clients(monkeypatch: pytest.MonkeyPatch, url: str, attempts: int | None) -> tuple[Any, Any, list[str]]:
    """S3 and KMS clients as `Settings` builds them, every request answered 500; and the attempts' log."""
    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    monkeypatch.setenv("S3MEMORY_ENDPOINT_URL", url)
    monkeypatch.setenv("S3MEMORY_REGION", "us-east-1")
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", base64.b64encode(LOCAL_KEY).decode())
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    if attempts is None:
        monkeypatch.delenv("S3MEMORY_MAX_ATTEMPTS", raising=False)
    else:
        monkeypatch.setenv("S3MEMORY_MAX_ATTEMPTS", str(attempts))
    s3, kms = Settings().clients()
    sent: list[str] = []

    def fail(request: Any, **_: Any) -> AWSResponse:
        sent.append(request.method)
        return AWSResponse(request.url, 500, {"Content-Type": "application/xml"}, _Raw())  # type: ignore[arg-type]

    for client in (s3, kms):
        client.meta.events.register("before-send", fail)
    return s3, kms, sent


@pytest.mark.parametrize("attempts", [1, 2, 5, None])
def test_max_attempts_counts_every_attempt_the_first_included(
    monkeypatch: pytest.MonkeyPatch, server_url: str, no_sleep: list[float], attempts: int | None
) -> None:
    s3, kms, sent = failing_clients(monkeypatch, server_url, attempts)
    expected = 5 if attempts is None else attempts  # the default, core/limits.py
    with pytest.raises(ClientError, match="InternalError") as caught:
        s3.get_object(Bucket=BUCKET, Key="agents/a/f.md")
    assert sent == ["GET"] * expected
    assert caught.value.response["ResponseMetadata"]["RetryAttempts"] == expected - 1
    assert len(no_sleep) == expected - 1
    sent.clear()
    with pytest.raises(ClientError):
        kms.decrypt(CiphertextBlob=b"x" * 32)
    assert sent == ["POST"] * expected


def test_a_long_outage_drains_the_retry_quota_then_each_request_is_tried_once(
    monkeypatch: pytest.MonkeyPatch, server_url: str, no_sleep: list[float]
) -> None:
    """botocore's standard mode gives each client a retry quota (`RetryQuota.INITIAL_CAPACITY`,
    500); a retry after a transient error spends `RetryQuotaChecker._RETRY_COST` of it (14 in
    botocore 1.44), a success refunds it. While every request fails, the quota runs out after
    about 500 / 14 retries, and from then on each request is tried once, whatever
    S3MEMORY_MAX_ATTEMPTS says, until successes refill it."""
    s3, _, sent = failing_clients(monkeypatch, server_url, 5)
    capacity, cost = quota.RetryQuota.INITIAL_CAPACITY, standard.RetryQuotaChecker._RETRY_COST
    expected: list[int] = []
    left = capacity
    for _ in range(capacity // (4 * cost) + 3):
        tries = 1
        while tries < 5 and left >= cost:
            left, tries = left - cost, tries + 1
        expected.append(tries)
    assert expected[-2:] == [1, 1]  # the quota is spent
    seen = []
    for _ in expected:
        sent.clear()
        with pytest.raises(ClientError):
            s3.head_object(Bucket=BUCKET, Key="agents/a/f.md")
        seen.append(len(sent))
    assert seen == expected
    assert sum(seen) - len(seen) == capacity // cost  # retries in all
