"""Shared fixtures: an in-process moto S3 + KMS, clients, and a tool factory."""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from moto import mock_aws
from moto.core.config import default_user_config

from s3memory import KmsKeys, LocalKeys, S3MemoryTool
from tests.support import BUCKET, LOCAL_KEY, REGION, CallCounter, enable_versioning, memory_tool
from tests.support.cli import CURRENT, CliClients
from tests.support.endpoint import ENDPOINT, KMS_KEY_ID, ON_MOTO, empty_bucket
from tests.support.moto_server import one_request_at_a_time


def pytest_configure(config: pytest.Config) -> None:
    where = f"endpoint {ENDPOINT}" if ENDPOINT else "in-process moto"
    config.stash[_WHERE] = where


def pytest_collection_finish(session: pytest.Session) -> None:
    """Python's full garbage collections, not the tests, took a tenth of a test process's time: each
    one traverses every object the process holds (moto, botocore's loaded models, the collected
    tests), about half a second apiece, 20 to 30 times in tests/storage or tests/memory. What exists
    once the tests are collected lives as long as the process, so it is frozen out of every later
    collection, and a full collection waits for 100 collections of the middle generation instead of
    10 (garbage in cycles is still collected, later; the tests make no use of when)."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 100)


def pytest_report_header(config: pytest.Config) -> str:
    return f"s3memory storage under test: {config.stash[_WHERE]}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if ON_MOTO:
        marker, reason = "real_conditions", "moto ignores the condition this checks; run with S3MEMORY_TEST_ENDPOINT"
    else:
        marker, reason = "moto_only", f"moto only (needs moto's internals); running against {ENDPOINT}"
        _keep_what_reaches_the_store(config, items)
    for item in items:
        if item.get_closest_marker(marker):
            item.add_marker(pytest.mark.skip(reason=reason))
    _slow_modules_first(items)


def reaches_the_store(item: pytest.Item) -> bool:
    """Whether the test talks to the store under test: through the `aws` fixture (which `s3`, `kms`, `env` and
    every storage fixture stand on), or by its own means, marked `endpoint` (or `real_conditions`)."""
    if item.get_closest_marker("endpoint") or item.get_closest_marker("real_conditions"):
        return True
    return "aws" in getattr(item, "fixturenames", ())


def _keep_what_reaches_the_store(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Against an endpoint, a test that never reaches the store would only repeat the moto run's answer
    (argument parsing, messages, pure functions): it is deselected (`-p no:xdist` shows how many)."""
    dropped = [item for item in items if not reaches_the_store(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if reaches_the_store(item)]


def _slow_modules_first(items: list[pytest.Item]) -> None:
    """The modules holding a `slow` test run first, each kept whole (its module fixtures set up once), the
    order otherwise unchanged. Under xdist's worksteal scheduling (`make pytest`) the long tests then start
    at once and the other worker takes the short ones, instead of one long test (terraform test, 2 min)
    starting last while the other worker has nothing left to do."""
    slow = {getattr(item, "module", None) for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: getattr(item, "module", None) not in slow)  # stable: False (slow) first


_WHERE = pytest.StashKey[str]()


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and a region, so nothing can ever reach real AWS (on an endpoint too, unless
    the environment gives credentials for it)."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        if ON_MOTO or name.startswith("AWS_ENDPOINT"):
            monkeypatch.delenv(name, raising=False)
    if ON_MOTO or "AWS_ACCESS_KEY_ID" not in os.environ:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    if ENDPOINT:  # any client a test builds without an endpoint goes there too, never to AWS
        monkeypatch.setenv("AWS_ENDPOINT_URL", ENDPOINT)
    for name in [n for n in os.environ if n.startswith("S3MEMORY_") and not n.startswith("S3MEMORY_TEST_")]:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def cli_clients() -> Iterator[CliClients]:
    """The boto3 clients of the test's in-process CLI runs (`tests.support.cli.run`), its hooks removed afterwards."""
    CURRENT[0] = clients = CliClients()
    yield clients
    clients.close()


# moto's default resets boto3's default session at every start, so that each test's clients load
# their service models again (~0.2 s a test, half of tests/storage's time). The backends are still
# reset at every start (every test sees an empty account); only the session, and the models it has
# loaded, outlive a test. The credentials it resolves are _aws_env's fake ones, the same for every test.
_KEEP_SESSION: Any = {"core": {**default_user_config["core"], "reset_boto3_session": False}}


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """In-process moto for the test (a fresh, empty account), answering S3 requests one at a time;
    on an endpoint, nothing to set up."""
    if ON_MOTO:
        one_request_at_a_time(monkeypatch)
        with mock_aws(config=_KEEP_SESSION):
            yield
    else:
        yield


@pytest.fixture
def s3(aws: None) -> Iterator[Any]:
    """The test bucket, empty: moto's (new per test) or the endpoint's scratch bucket (emptied around each test)."""
    # A pool as large as the tool's 16 workers, as docs/configuration.md advises.
    client = boto3.client("s3", region_name=REGION, endpoint_url=ENDPOINT, config=Config(max_pool_connections=20))
    if ON_MOTO:
        client.create_bucket(Bucket=BUCKET)
        yield client
        return
    with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou, client.exceptions.BucketAlreadyExists):
        client.create_bucket(Bucket=BUCKET)
    empty_bucket(client, BUCKET)
    client.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Suspended"})
    yield client
    empty_bucket(client, BUCKET)


@pytest.fixture
def keystore_bucket(s3: Any) -> Iterator[str]:
    """A second, empty bucket for a separate keystore (S3MEMORY_KEYSTORE_BUCKET), emptied again afterwards."""
    name = BUCKET[:55] + "-keys"
    with contextlib.suppress(s3.exceptions.BucketAlreadyOwnedByYou, s3.exceptions.BucketAlreadyExists):
        s3.create_bucket(Bucket=name)
    empty_bucket(s3, name)
    yield name
    empty_bucket(s3, name)


@pytest.fixture
def kms(aws: None) -> Any:
    return boto3.client("kms", region_name=REGION, endpoint_url=ENDPOINT)


@pytest.fixture
def kms_key(kms: Any) -> str:
    if KMS_KEY_ID:
        return KMS_KEY_ID
    return str(kms.create_key(Description="s3memory test")["KeyMetadata"]["KeyId"])


@pytest.fixture
def counter(s3: Any, kms: Any) -> CallCounter:
    return CallCounter(s3, kms)


@pytest.fixture
def make_tool(s3: Any, kms: Any, request: pytest.FixtureRequest) -> Iterator[Callable[..., S3MemoryTool]]:
    """make_tool(agent_id="agent-42", use_kms=False, **kwargs) → S3MemoryTool on the moto bucket.

    The KMS key is created only when a tool asks for KmsKeys (it costs a noticeable moment).
    """
    made: list[S3MemoryTool] = []

    def factory(agent_id: str = "agent-42", *, use_kms: bool = False, **kwargs: Any) -> S3MemoryTool:
        if "keys" not in kwargs:
            if use_kms:
                kwargs["keys"] = KmsKeys(request.getfixturevalue("kms_key"), kms_client=kms)
            else:
                kwargs["keys"] = LocalKeys(LOCAL_KEY)
        kwargs.setdefault("prefix", "agents/")
        kwargs.setdefault("s3_client", s3)
        tool = S3MemoryTool(bucket=BUCKET, agent_id=agent_id, **kwargs)
        made.append(tool)
        return tool

    yield factory
    for tool in made:
        tool.close()


@pytest.fixture
def tool(make_tool: Callable[..., S3MemoryTool]) -> S3MemoryTool:
    return make_tool()


@pytest.fixture
def new_tool(s3: Any) -> Iterator[Callable[..., S3MemoryTool]]:
    """new_tool(agent, keys=None, workers=4) → a new tool (`tests.support.memory_tool`), closed at teardown."""
    made: list[S3MemoryTool] = []

    def factory(agent: str, keys: Any = None, workers: int = 4) -> S3MemoryTool:
        tool = memory_tool(s3, agent, keys=keys, workers=workers)
        made.append(tool)
        return tool

    yield factory
    for tool in made:
        tool.close()


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, s3: Any) -> Any:
    """S3MEMORY_* set for the moto bucket with the local test key (CLI tests); returns the S3 client."""
    import base64

    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    monkeypatch.setenv("S3MEMORY_PREFIX", "agents/")
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", base64.b64encode(LOCAL_KEY).decode())
    monkeypatch.setenv("S3MEMORY_FENCE_SECONDS", "0")  # no tool runs meanwhile; the tests of the fence set their own
    if ENDPOINT:
        monkeypatch.setenv("S3MEMORY_ENDPOINT_URL", ENDPOINT)
    return s3


@pytest.fixture
def versioned(env: Any) -> Any:
    """`env` with versioning enabled on the bucket; returns the S3 client."""
    enable_versioning(env)
    return env
