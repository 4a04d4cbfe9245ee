"""examples/lambda-agent/lambda/handler.py end to end on moto, with a stand-in for the Claude API.

The handler really assumes the agent role (moto STS), builds S3MemoryTool with KmsKeys on
clients of that session, reads the API key from Secrets Manager and drives the tool runner;
only `anthropic.Anthropic` is replaced, by a runner that issues memory commands itself.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import logging
import os
import py_compile
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, ClassVar

import boto3
import botocore.session
import pytest
from moto import mock_aws

from s3memory.cli import chat
from s3memory.core.limits import DEFAULT_MODEL
from s3memory.storage.sts import clear_agent_session_cache
from tests.terraform.deploy import AGENT_ROLE_ARN, BUCKET, EXAMPLE, KEYSTORE_BUCKET, PREFIX, REPO

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
    views: ClassVar[list[str]] = []  # what each run's first `view /memories` showed

    def __init__(self, tools: list[Any]) -> None:
        self.tool = tools[0]

    def until_done(self) -> Any:
        FakeRunner.views.append(self.tool.call({"command": "view", "path": "/memories"}))
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
        session.client("s3").create_bucket(Bucket=KEYSTORE_BUCKET)
        key_arn = session.client("kms").create_key(Description="data keys")["KeyMetadata"]["Arn"]
        secret_arn = session.client("secretsmanager").create_secret(Name="anthropic", SecretString=API_KEY)["ARN"]
        for name, value in {
            "S3MEMORY_BUCKET": BUCKET,
            "S3MEMORY_KEYSTORE_BUCKET": KEYSTORE_BUCKET,
            "S3MEMORY_PREFIX": PREFIX,
            "S3MEMORY_KMS_KEY_ID": key_arn,
            "S3MEMORY_REGION": REGION,
            "S3MEMORY_AGENT_ROLE_ARN": AGENT_ROLE_ARN,
            "ANTHROPIC_MODEL": "claude-test-model",
            "ANTHROPIC_API_KEY_SECRET_ARN": secret_arn,
            "AWS_REGION": REGION,
            "S3MEMORY_TRUST_EVENT_AGENT_ID": "true",  # direct invocations; the tests of the default unset it
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


def test_handler_mounts_the_guidelines_store_read_only(
    deployed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """main.tf sets S3MEMORY_MOUNTS to the guidelines store the module grants every agent."""
    from s3memory import KmsKeys, Mount, S3MemoryTool

    session = deployed["session"]
    keys = KmsKeys(os.environ["S3MEMORY_KMS_KEY_ID"], kms_client=session.client("kms"))
    mounts = {"g": Mount("support-guidelines", read_only=False)}
    curator = S3MemoryTool(bucket=BUCKET, agent_id="curator", keys=keys, s3_client=session.client("s3"),
                           prefix=PREFIX, keystore_bucket=KEYSTORE_BUCKET, mounts=mounts)  # fmt: skip
    curator.call({"command": "create", "path": "/memories/g/refunds.md", "file_text": "Refund within 30 days.\n"})
    curator.close()
    monkeypatch.setenv("S3MEMORY_MOUNTS", "guidelines=support-guidelines:ro")
    FakeRunner.views.clear()
    deployed["handler"].lambda_handler({"agent_id": "alice", "prompt": "Carry on."}, None)

    assert FakeRunner.views[0].splitlines()[1:] == [
        "4.0K\t/memories",
        "4.0K\t/memories/guidelines/",
        "23B\t/memories/guidelines/refunds.md",
    ]
    assert stored(session) == ["agents/_stores/support-guidelines/refunds.md", "agents/alice/notes/today/progress.md"]


def test_handler_keeps_branch_keys_in_the_keystore_bucket(deployed: dict[str, Any]) -> None:
    """S3MEMORY_KEYSTORE_BUCKET (the module's `environment` sets it) sends the branch keys there."""
    deployed["handler"].lambda_handler({"agent_id": "alice", "prompt": "Carry on."}, None)

    keys = [o["Key"] for o in deployed["session"].client("s3").list_objects_v2(Bucket=KEYSTORE_BUCKET)["Contents"]]
    assert keys
    assert all(key.startswith("agents/alice/.s3memory/keys/") for key in keys), keys
    assert stored(deployed["session"]) == ["agents/alice/notes/today/progress.md"]


@pytest.mark.parametrize(("track", "tagged"), [("true", True), ("", False)])
def test_handler_tracks_access_when_the_module_asks(
    deployed: dict[str, Any], monkeypatch: pytest.MonkeyPatch, track: str, tagged: bool
) -> None:
    """S3MEMORY_TRACK_ACCESS (the module's environment sets it for the retention job by access)."""
    monkeypatch.setenv("S3MEMORY_TRACK_ACCESS", track)
    deployed["handler"].lambda_handler({"agent_id": "alice", "prompt": "Carry on."}, None)

    key = "agents/alice/notes/today/progress.md"
    tags = deployed["session"].client("s3").get_object_tagging(Bucket=BUCKET, Key=key)["TagSet"]
    assert [t["Key"] for t in tags] == (["s3memory-accessed"] if tagged else [])


def test_handler_logs_no_connection_pool_warning(deployed: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    """Its S3 client is sized for the tool's workers: no pool warning into CloudWatch on every invocation."""
    caplog.set_level(logging.WARNING, logger="s3memory")
    deployed["handler"].lambda_handler({"agent_id": "alice", "prompt": "Carry on."}, None)

    assert [r.getMessage() for r in caplog.records if "connection pool" in r.getMessage()] == []


def test_handler_refuses_a_track_access_flag_that_is_not_true_or_false(
    deployed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("S3MEMORY_TRACK_ACCESS", "yes")
    with pytest.raises(RuntimeError, match=r"^environment variable S3MEMORY_TRACK_ACCESS must be true or false$"):
        deployed["handler"].lambda_handler({"agent_id": "alice", "prompt": "hi"}, None)


def test_handler_without_a_keystore_bucket_keeps_branch_keys_in_the_memory_bucket(
    deployed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("S3MEMORY_KEYSTORE_BUCKET")
    deployed["handler"].lambda_handler({"agent_id": "alice", "prompt": "Carry on."}, None)

    in_keystore = deployed["session"].client("s3").list_objects_v2(Bucket=KEYSTORE_BUCKET)
    assert in_keystore.get("Contents", []) == []
    keys = stored(deployed["session"])
    assert "agents/alice/notes/today/progress.md" in keys
    assert any(key.startswith("agents/alice/.s3memory/keys/") for key in keys), keys


def test_handler_calls_the_tool_runner_with_the_memory_tool_and_its_beta(deployed: dict[str, Any]) -> None:
    handler = deployed["handler"]
    handler.lambda_handler({"agent_id": "alice", "prompt": "Carry on."}, None)

    (client,) = FakeAnthropic.instances
    kwargs = client.runner_kwargs
    assert client.api_key == API_KEY
    assert kwargs["model"] == "claude-test-model"
    assert kwargs["max_tokens"] == 4096
    assert kwargs["max_iterations"] == 20
    assert kwargs["system"] == handler.SYSTEM_PROMPT
    # The API adds the memory protocol itself (docs/cli.md, as for `s3memory chat`): not sent twice.
    assert "MEMORY PROTOCOL" not in kwargs["system"]
    assert "ALWAYS VIEW YOUR MEMORY DIRECTORY" not in kwargs["system"]
    assert kwargs["system"].startswith(chat.SYSTEM_PROMPT.split(". ")[0])
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


NOT_AN_OBJECT = "event must be an object: an API Gateway HTTP API request, or {'agent_id', 'prompt'}"
NO_PROMPT = "the request needs a non-empty string 'prompt'"
NO_AGENT = "the request needs a string 'agent_id'"


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (None, NOT_AN_OBJECT),
        ([], NOT_AN_OBJECT),
        ({"agent_id": "alice"}, NO_PROMPT),
        ({"prompt": "hi"}, NO_AGENT),
        ({"agent_id": 7, "prompt": "hi"}, NO_AGENT),
        ({"agent_id": "a", "prompt": " "}, NO_PROMPT),
    ],
)
def test_handler_refuses_malformed_events(monkeypatch: pytest.MonkeyPatch, event: Any, message: str) -> None:
    monkeypatch.setenv("S3MEMORY_TRUST_EVENT_AGENT_ID", "true")
    handler = _load_handler()  # no AWS set up: the event is refused before any call
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
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


# --- who chooses the agent id ------------------------------------------------------------

UNVOUCHED = (
    "refused: no API Gateway authorizer vouches for an agent_id, and the one in the request is used only with "
    "S3MEMORY_TRUST_EVENT_AGENT_ID=true; retrying does not help"
)


def http_event(body: Any, authorizer: dict[str, Any] | None = None, *, encode: bool = False) -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) request; `body` is sent as JSON unless it is a str."""
    text = body if isinstance(body, str) else json.dumps(body)
    context: dict[str, Any] = {"http": {"method": "POST", "path": "/turn"}, "routeKey": "POST /turn"}
    if authorizer is not None:
        context["authorizer"] = authorizer
    return {
        "version": "2.0",
        "routeKey": "POST /turn",
        "requestContext": context,
        "body": base64.b64encode(text.encode()).decode() if encode else text,
        "isBase64Encoded": encode,
    }


def http_answer(status: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"statusCode": status, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}


def turn(agent_id: str) -> dict[str, Any]:
    return http_answer(200, {"agent_id": agent_id, "stop_reason": "end_turn", "text": "Recorded progress."})


def stored(session: Any) -> list[str]:
    return [o["Key"] for o in session.client("s3").list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def test_by_default_only_an_authorizer_chooses_the_agent(deployed: dict[str, Any], monkeypatch) -> None:
    monkeypatch.delenv("S3MEMORY_TRUST_EVENT_AGENT_ID")
    handler = deployed["handler"]
    with pytest.raises(handler.Refused) as refused:
        handler.lambda_handler({"agent_id": "alice", "prompt": "hi"}, None)
    assert str(refused.value) == UNVOUCHED
    forged = http_event({"agent_id": "alice", "prompt": "hi"}, {"iam": {"userArn": "arn:aws:iam::1:user/x"}})
    assert handler.lambda_handler(forged, None) == http_answer(403, {"error": UNVOUCHED})
    assert handler.lambda_handler(http_event({"agent_id": "alice", "prompt": "hi"}), None) == http_answer(
        403, {"error": UNVOUCHED}
    )
    assert deployed["tags"] == []  # refused before any AWS call
    assert stored(deployed["session"]) == []


def test_the_lambda_authorizer_context_names_the_agent(deployed: dict[str, Any], monkeypatch) -> None:
    monkeypatch.delenv("S3MEMORY_TRUST_EVENT_AGENT_ID")
    handler = deployed["handler"]
    event = http_event({"prompt": "Carry on."}, {"lambda": {"agent_id": "alice"}})
    assert handler.lambda_handler(event, None) == turn("alice")
    same = http_event({"agent_id": "bob", "prompt": "Carry on."}, {"lambda": {"agent_id": "bob"}}, encode=True)
    assert handler.lambda_handler(same, None) == turn("bob")  # the caller's own id in the body is fine
    assert stored(deployed["session"]) == [
        "agents/alice/notes/today/progress.md",
        "agents/bob/notes/today/progress.md",
    ]
    assert deployed["tags"] == [
        [{"Key": "s3memory-agent", "Value": "alice"}],
        [{"Key": "s3memory-agent", "Value": "bob"}],
    ]
    assert [c.runner_kwargs["messages"] for c in FakeAnthropic.instances] == [
        [{"role": "user", "content": "Carry on."}]
    ] * 2


def test_a_jwt_claim_names_the_agent(deployed: dict[str, Any], monkeypatch) -> None:
    monkeypatch.delenv("S3MEMORY_TRUST_EVENT_AGENT_ID")
    handler = deployed["handler"]
    jwt = {"jwt": {"claims": {"sub": "bob", "agent_id": "carol"}, "scopes": None}}
    assert handler.lambda_handler(http_event({"prompt": "hi"}, jwt), None) == turn("carol")
    monkeypatch.setenv("S3MEMORY_AGENT_ID_CLAIM", "sub")
    assert handler.lambda_handler(http_event({"prompt": "hi"}, jwt), None) == turn("bob")
    assert deployed["tags"] == [
        [{"Key": "s3memory-agent", "Value": "carol"}],
        [{"Key": "s3memory-agent", "Value": "bob"}],
    ]


def test_the_request_cannot_name_another_agent_than_the_caller(deployed: dict[str, Any]) -> None:
    handler = deployed["handler"]  # even where event agent ids are trusted, an authorizer's id wins
    event = http_event({"agent_id": "mallory", "prompt": "hi"}, {"lambda": {"agent_id": "alice"}})
    assert handler.lambda_handler(event, None) == http_answer(
        403, {"error": "refused: the request names another agent than the caller's; leave 'agent_id' out"}
    )
    assert deployed["tags"] == []


def test_a_trusted_request_names_the_agent_when_no_authorizer_does(deployed: dict[str, Any]) -> None:
    handler = deployed["handler"]
    assert handler.lambda_handler(http_event({"agent_id": "dave", "prompt": "hi"}), None) == turn("dave")
    assert deployed["tags"] == [[{"Key": "s3memory-agent", "Value": "dave"}]]


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (
            http_event("not json", {"lambda": {"agent_id": "alice"}}),
            "the request body must be a JSON object with a 'prompt'",
        ),
        (
            http_event(["hi"], {"lambda": {"agent_id": "alice"}}),
            "the request body must be a JSON object with a 'prompt'",
        ),
        (http_event({"prompt": ""}, {"lambda": {"agent_id": "alice"}}), NO_PROMPT),
        (http_event({"prompt": "hi"}, {"lambda": {"agent_id": 42}}), NO_AGENT),
        (
            http_event({"prompt": "hi"}, {"lambda": {"agent_id": "../alice"}}),
            "agent_id must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a letter or digit",
        ),
    ],
)
def test_malformed_http_requests_get_400(deployed: dict[str, Any], event: dict[str, Any], message: str) -> None:
    assert deployed["handler"].lambda_handler(event, None) == http_answer(400, {"error": message})
    assert deployed["tags"] == []


def test_the_trust_switch_is_true_or_false(deployed: dict[str, Any], monkeypatch) -> None:
    monkeypatch.setenv("S3MEMORY_TRUST_EVENT_AGENT_ID", "yes")
    with pytest.raises(RuntimeError) as refused:
        deployed["handler"].lambda_handler({"agent_id": "alice", "prompt": "hi"}, None)
    assert str(refused.value) == "environment variable S3MEMORY_TRUST_EVENT_AGENT_ID must be true or false"


# --- endpoint and model ----------------------------------------------------------------


@pytest.fixture
def moto_server() -> Iterator[str]:
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def test_every_aws_client_uses_s3memory_endpoint_url(monkeypatch: pytest.MonkeyPatch, moto_server: str) -> None:
    clear_agent_session_cache()
    FakeAnthropic.instances.clear()
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
    setup = boto3.session.Session(region_name=REGION)
    setup.client("s3", endpoint_url=moto_server).create_bucket(Bucket=BUCKET)
    setup.client("s3", endpoint_url=moto_server).create_bucket(Bucket=KEYSTORE_BUCKET)
    key_arn = setup.client("kms", endpoint_url=moto_server).create_key()["KeyMetadata"]["Arn"]
    secrets = setup.client("secretsmanager", endpoint_url=moto_server)
    secret_arn = secrets.create_secret(Name="anthropic-endpoint-test", SecretString=API_KEY)["ARN"]
    for name, value in {
        "S3MEMORY_BUCKET": BUCKET,
        "S3MEMORY_KEYSTORE_BUCKET": KEYSTORE_BUCKET,
        "S3MEMORY_PREFIX": PREFIX,
        "S3MEMORY_KMS_KEY_ID": key_arn,
        "S3MEMORY_REGION": REGION,
        "S3MEMORY_AGENT_ROLE_ARN": AGENT_ROLE_ARN,
        "S3MEMORY_ENDPOINT_URL": moto_server,
        "S3MEMORY_TRUST_EVENT_AGENT_ID": "true",
        "ANTHROPIC_API_KEY_SECRET_ARN": secret_arn,
        "AWS_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)

    sent: list[tuple[str, str]] = []  # (service, URL) of every request of every client built from here on
    create_client = botocore.session.Session.create_client

    def recording_create_client(self: Any, service_name: str, *args: Any, **kwargs: Any) -> Any:
        client = create_client(self, service_name, *args, **kwargs)

        def before_send(request: Any, **_: Any) -> None:
            sent.append((service_name, request.url))
            if not request.url.startswith(moto_server + "/"):
                raise AssertionError(f"{service_name} sent a request to {request.url}")  # and never to AWS

        client.meta.events.register("before-send", before_send)
        return client

    monkeypatch.setattr(botocore.session.Session, "create_client", recording_create_client)
    handler = _load_handler()
    monkeypatch.setattr(handler.anthropic, "Anthropic", FakeAnthropic)
    try:
        answer = handler.lambda_handler({"agent_id": "alice", "prompt": "Carry on."}, None)
    finally:
        clear_agent_session_cache()

    assert answer == {"agent_id": "alice", "stop_reason": "end_turn", "text": "Recorded progress."}
    assert sorted({service for service, _ in sent}) == ["kms", "s3", "secretsmanager", "sts"]
    assert [url for _, url in sent if not url.startswith(moto_server + "/")] == []
    listed = setup.client("s3", endpoint_url=moto_server).list_objects_v2(Bucket=BUCKET)
    assert [o["Key"] for o in listed["Contents"]] == ["agents/alice/notes/today/progress.md"]


def test_the_model_defaults_to_s3memorys_default(deployed: dict[str, Any], monkeypatch) -> None:
    handler = deployed["handler"]
    monkeypatch.delenv("ANTHROPIC_MODEL")
    handler.lambda_handler({"agent_id": "alice", "prompt": "one"}, None)
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-from-anthropic-model")
    handler.lambda_handler({"agent_id": "bob", "prompt": "two"}, None)
    monkeypatch.setenv("S3MEMORY_MODEL", "claude-from-s3memory-model")
    handler.lambda_handler({"agent_id": "carol", "prompt": "three"}, None)
    assert [c.runner_kwargs["model"] for c in FakeAnthropic.instances] == [
        DEFAULT_MODEL,
        "claude-from-anthropic-model",
        "claude-from-s3memory-model",
    ]


def test_no_code_but_the_limits_module_names_a_model() -> None:
    """`s3memory.core.limits.DEFAULT_MODEL` is the one definition; code and Terraform use it, never a copy."""
    model_name = re.compile(r"claude-(?:opus|sonnet|haiku)-[0-9]")
    code = (".py", ".tf", ".tftpl", ".hcl", ".sh", ".json", ".toml")
    found = [
        f"{path.relative_to(REPO)}:{number}"
        for folder in ("s3memory", "terraform", "bench")
        for path in sorted((REPO / folder).rglob("*"))
        if path.suffix in code and path != REPO / "s3memory" / "core" / "limits.py" and ".terraform" not in path.parts
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if model_name.search(line)
    ]
    assert found == []
