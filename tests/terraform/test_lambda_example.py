"""examples/lambda-agent/lambda/handler.py end to end on moto, with a stand-in for the Claude API.

The handler really assumes the agent role (moto STS), builds S3MemoryTool with KmsKeys on
clients of that session, reads the API key from Secrets Manager and drives the tool runner;
only `anthropic.Anthropic` is replaced, by a runner that issues memory commands itself.
"""

from __future__ import annotations

import importlib.util
import py_compile
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, ClassVar

import boto3
import pytest
from moto import mock_aws

from s3memory.storage.sts import clear_agent_session_cache
from tests.terraform.deploy import AGENT_ROLE_ARN, BUCKET, EXAMPLE, PREFIX

HANDLER = EXAMPLE / "lambda" / "handler.py"
REGION = "us-east-1"
API_KEY = "sk-ant-test-not-a-real-key"


def _load_handler() -> ModuleType:
    spec = importlib.util.spec_from_file_location("s3memory_example_handler", HANDLER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in terraform/
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    return module


class FakeRunner:
    def __init__(self, tools: list[Any]) -> None:
        self.tool = tools[0]

    def until_done(self) -> Any:
        self.tool.call({"command": "view", "path": "/memories"})
        self.tool.call({"command": "create", "path": "/memories/notes/today/progress.md", "file_text": "step 1 done\n"})
        return SimpleNamespace(
            content=[SimpleNamespace(type="text", text="Recorded "), SimpleNamespace(type="text", text="progress.")],
            stop_reason="end_turn",
            usage=SimpleNamespace(input_tokens=11, output_tokens=7),
        )


class FakeAnthropic:
    instances: ClassVar[list[FakeAnthropic]] = []

    def __init__(self, *, api_key: str) -> None:
        self.api_key = api_key
        self.runner_kwargs: dict[str, Any] = {}
        self.beta = SimpleNamespace(messages=SimpleNamespace(tool_runner=self._tool_runner))
        FakeAnthropic.instances.append(self)

    def _tool_runner(self, **kwargs: Any) -> FakeRunner:
        self.runner_kwargs = kwargs
        return FakeRunner(kwargs["tools"])


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    clear_agent_session_cache()
    FakeAnthropic.instances.clear()
    with mock_aws():
        session = boto3.session.Session(region_name=REGION)
        session.client("s3").create_bucket(Bucket=BUCKET)
        key_arn = session.client("kms").create_key(Description="data keys")["KeyMetadata"]["Arn"]
        secret_arn = session.client("secretsmanager").create_secret(Name="anthropic", SecretString=API_KEY)["ARN"]
        for name, value in {
            "S3MEMORY_BUCKET": BUCKET,
            "S3MEMORY_PREFIX": PREFIX,
            "S3MEMORY_KMS_KEY_ID": key_arn,
            "S3MEMORY_REGION": REGION,
            "S3MEMORY_AGENT_ROLE_ARN": AGENT_ROLE_ARN,
            "ANTHROPIC_MODEL": "claude-test-model",
            "ANTHROPIC_API_KEY_SECRET_ARN": secret_arn,
            "AWS_REGION": REGION,
        }.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        assume_role_tags: list[dict[str, Any]] = []
        boto3.setup_default_session(region_name=REGION)
        boto3.DEFAULT_SESSION.events.register(  # type: ignore[union-attr]
            "before-parameter-build.sts.AssumeRole", lambda params, **_: assume_role_tags.append(params["Tags"])
        )
        handler = _load_handler()
        monkeypatch.setattr(handler.anthropic, "Anthropic", FakeAnthropic)
        yield {"handler": handler, "session": session, "tags": assume_role_tags}
        boto3.DEFAULT_SESSION = None
    clear_agent_session_cache()


def test_handler_compiles(tmp_path: Path) -> None:
    py_compile.compile(str(HANDLER), cfile=str(tmp_path / "handler.pyc"), doraise=True)


def test_handler_runs_one_turn_with_memory_in_the_agents_prefix(deployed: dict[str, Any]) -> None:
    answer = deployed["handler"].lambda_handler({"agent_id": "alice", "prompt": "Carry on."}, None)

    assert answer == {"agent_id": "alice", "stop_reason": "end_turn", "text": "Recorded progress."}
    listed = deployed["session"].client("s3").list_objects_v2(Bucket=BUCKET)
    assert [o["Key"] for o in listed["Contents"]] == ["agents/alice/notes/today/progress.md"]
    assert deployed["tags"] == [[{"Key": "s3memory-agent", "Value": "alice"}]]


def test_handler_calls_the_tool_runner_with_the_memory_protocol(deployed: dict[str, Any]) -> None:
    handler = deployed["handler"]
    handler.lambda_handler({"agent_id": "alice", "prompt": "Carry on."}, None)

    (client,) = FakeAnthropic.instances
    kwargs = client.runner_kwargs
    assert client.api_key == API_KEY
    assert kwargs["model"] == "claude-test-model"
    assert kwargs["max_tokens"] == 4096
    assert kwargs["max_iterations"] == 20
    assert kwargs["system"] == handler.MEMORY_SYSTEM_PROMPT
    assert kwargs["system"].startswith("IMPORTANT: ALWAYS VIEW YOUR MEMORY DIRECTORY BEFORE DOING ANYTHING ELSE.\n")
    assert kwargs["betas"] == ["context-management-2025-06-27"]
    assert kwargs["messages"] == [{"role": "user", "content": "Carry on."}]
    assert [type(t).__name__ for t in kwargs["tools"]] == ["S3MemoryTool"]


def test_handler_reads_the_secret_once_per_container(deployed: dict[str, Any]) -> None:
    handler = deployed["handler"]
    handler.lambda_handler({"agent_id": "alice", "prompt": "one"}, None)
    deployed["session"].client("secretsmanager").put_secret_value(SecretId="anthropic", SecretString="sk-ant-rotated")
    handler.lambda_handler({"agent_id": "bob", "prompt": "two"}, None)

    assert [c.api_key for c in FakeAnthropic.instances] == [API_KEY, API_KEY]
    assert deployed["tags"] == [
        [{"Key": "s3memory-agent", "Value": "alice"}],
        [{"Key": "s3memory-agent", "Value": "bob"}],
    ]


@pytest.mark.parametrize(
    "event",
    [
        None,
        [],
        {"agent_id": "alice"},
        {"prompt": "hi"},
        {"agent_id": 7, "prompt": "hi"},
        {"agent_id": "a", "prompt": " "},
    ],
)
def test_handler_refuses_malformed_events(event: Any) -> None:
    handler = _load_handler()  # no AWS set up: the event is refused before any call
    with pytest.raises(ValueError, match=r"^event needs a string 'agent_id'|^event must be an object"):
        handler.lambda_handler(event, None)


def test_handler_refuses_an_invalid_agent_id_before_assuming_the_role(deployed: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"^agent_id must be 1-128 characters"):
        deployed["handler"].lambda_handler({"agent_id": "bob/../alice", "prompt": "hi"}, None)
    assert deployed["tags"] == []


def test_handler_leaves_no_worker_threads_behind(deployed: dict[str, Any]) -> None:
    handler = deployed["handler"]
    handler.lambda_handler({"agent_id": "alice", "prompt": "one"}, None)
    settled = threading.active_count()
    for agent_id in ("bob", "carol", "dave"):
        handler.lambda_handler({"agent_id": agent_id, "prompt": "again"}, None)
    assert threading.active_count() == settled
