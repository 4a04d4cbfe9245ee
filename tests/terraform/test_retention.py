"""The opt-in retention job: terraform/functions/retention/handler.py on moto, and its IAM.

The handler runs `s3memory prune` (through `s3memory.cli.main`) for every agent under the
prefix, in the environment retention.tf gives the function. Its requests are recorded
(tests/terraform/recording.py) and replayed through the IAM evaluator with the rendered
retention policy: everything it sends is allowed, the policy grants exactly the actions it
sends, and the role reaches nothing else (other prefixes and buckets, writes, version deletes,
the keystore, `.s3memory/` bookkeeping, KMS). The schedule's role may only invoke the function;
each trust policy admits only its service. Each case states the exact decision.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from types import ModuleType, SimpleNamespace
from typing import Any

import boto3
import hcl2
import pytest
from moto import mock_aws

from s3memory import LocalKeys, S3MemoryTool
from tests.support import enable_versioning
from tests.terraform.deploy import (
    ACCOUNT,
    AGENT_ROLE_ARN,
    BUCKET,
    BUCKET_ARN,
    DATA_KEY_ARN,
    KEYSTORE_BUCKET,
    KEYSTORE_BUCKET_ARN,
    PREFIX,
    REGION,
    RETENTION_FUNCTION_ARN,
    RETENTION_NAME,
    RETENTION_SCHEDULE_GROUP_ARN,
    SSE_KEY_ARN,
    TERRAFORM,
    policy,
)
from tests.terraform.recording import Call, actions_used, granted_actions, iam_requests, recording
from tests.terraform.simulator import Simulator

HANDLER = TERRAFORM / "functions" / "retention" / "handler.py"
MOTO_REGION = "us-east-1"
ALLOWED, IMPLICIT, EXPLICIT = "Allowed", "ImplicitlyDenied", "ExplicitlyDenied"
RETENTION_SESSION = f"arn:aws:sts::{ACCOUNT}:assumed-role/{RETENTION_NAME}/{RETENTION_NAME}"
SCHEDULER_SESSION = f"arn:aws:sts::{ACCOUNT}:assumed-role/{RETENTION_NAME}-scheduler/scheduler"
# What prune sends: listings, HEADs (the content time in the header), access tags, deletes.
EXPECTED_RETENTION_ACTIONS = {"s3:ListBucket", "s3:GetObject", "s3:GetObjectTagging", "s3:DeleteObject"}


def _load_handler() -> ModuleType:
    spec = importlib.util.spec_from_file_location("s3memory_retention_handler", HANDLER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in terraform/
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    return module


def _today() -> str:
    return datetime.now(timezone.utc).date().isoformat()


def _seed(s3: Any, patch: pytest.MonkeyPatch) -> None:
    """alice: old.md (written 10 days ago, never read), read.md (written 10 days ago, read today),
    new.md (written today); bob: old.md; and an old object of another application outside the prefix.
    The bucket is versioned and the branch keys are in the keystore bucket, as the module deploys them;
    a local master key stands in for KMS (prune decrypts nothing, so no key is ever asked for)."""
    s3.create_bucket(Bucket=BUCKET)
    s3.create_bucket(Bucket=KEYSTORE_BUCKET)
    enable_versioning(s3, BUCKET)

    def tool(agent: str) -> S3MemoryTool:
        keys = LocalKeys(bytes(range(32)))
        return S3MemoryTool(
            bucket=BUCKET, agent_id=agent, keys=keys, s3_client=s3, prefix=PREFIX, keystore_bucket=KEYSTORE_BUCKET
        )

    past = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(days=10)
    with patch.context() as clock:
        clock.setattr("moto.s3.models.utcnow", lambda: past)
        for agent, names in (("alice", ("old", "read")), ("bob", ("old",))):
            with tool(agent) as writer:
                for name in names:
                    writer.call({"command": "create", "path": f"/memories/{name}.md", "file_text": f"{name}\n"})
        s3.put_object(Bucket=BUCKET, Key="other-app/old.txt", Body=b"not s3memory's")
    with tool("alice") as writer:
        writer.call({"command": "create", "path": "/memories/new.md", "file_text": "new\n"})
    # What a read with S3MEMORY_TRACK_ACCESS on records: the access tag of today.
    tag = {"TagSet": [{"Key": "s3memory-accessed", "Value": _today()}]}
    s3.put_object_tagging(Bucket=BUCKET, Key=f"{PREFIX}alice/read.md", Tagging=tag)


def _environment(**retention: str) -> dict[str, str]:
    """The function's environment as retention.tf sets it (no key source, no keystore bucket)."""
    return {"S3MEMORY_BUCKET": BUCKET, "S3MEMORY_PREFIX": PREFIX, "S3MEMORY_REGION": MOTO_REGION, **retention}


def _memory_files(s3: Any) -> list[str]:
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]
    return [key for key in keys if "/.s3memory/" not in key]


class Lambda:
    """A Lambda context with a fixed remaining time."""

    def __init__(self, seconds: float = 900) -> None:
        self.seconds = seconds

    def get_remaining_time_in_millis(self) -> int:
        return int(self.seconds * 1000)


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> Iterator[SimpleNamespace]:
    with mock_aws():
        s3 = boto3.client("s3", region_name=MOTO_REGION)
        _seed(s3, monkeypatch)
        for name, value in _environment(RETENTION_NOT_ACCESSED_DAYS="5").items():
            monkeypatch.setenv(name, value)
        yield SimpleNamespace(handler=_load_handler(), s3=s3)


def _logged(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


# -- what the job does ----------------------------------------------------------------------------


def test_prunes_by_access_every_agent_and_logs_no_path(deployed: SimpleNamespace, capsys: Any) -> None:
    summary = deployed.handler.lambda_handler({}, Lambda())

    assert summary == {
        "criterion": "--not-accessed-for 5d",
        "dry_run": False,
        "agents": 2,
        "reached": 2,
        "deleted": 2,
        "failed_agents": [],
    }
    assert _memory_files(deployed.s3) == ["agents/alice/new.md", "agents/alice/read.md", "other-app/old.txt"]
    out = capsys.readouterr().out
    assert sorted(_logged(out)[:2], key=lambda r: r["agent"]) == [
        {"agent": "alice", "exit": 0, "deleted": 1},
        {"agent": "bob", "exit": 0, "deleted": 1},
    ]
    assert _logged(out)[2] == {"summary": summary}
    assert "old.md" not in out
    assert "/memories" not in out
    # A prune writes a delete marker: the file stays restorable until the noncurrent-version rule.
    listed = deployed.s3.list_object_versions(Bucket=BUCKET, Prefix=f"{PREFIX}bob/old.md")
    assert [m["IsLatest"] for m in listed["DeleteMarkers"]] == [True]
    assert [v["IsLatest"] for v in listed["Versions"]] == [False]


def test_prunes_by_modification_with_older_than(deployed: SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RETENTION_NOT_ACCESSED_DAYS")
    monkeypatch.setenv("RETENTION_OLDER_THAN_DAYS", "5")
    summary = deployed.handler.lambda_handler({}, Lambda())

    assert (summary["criterion"], summary["deleted"]) == ("--older-than 5d", 3)  # read.md too: a read is no write
    assert _memory_files(deployed.s3) == ["agents/alice/new.md", "other-app/old.txt"]


@pytest.mark.parametrize(("event", "configured"), [({"dry_run": True}, "false"), (None, "true")])
def test_a_dry_run_deletes_nothing(
    deployed: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, event: Any, configured: str
) -> None:
    monkeypatch.setenv("RETENTION_DRY_RUN", configured)
    before = _memory_files(deployed.s3)
    summary = deployed.handler.lambda_handler(event, Lambda())

    assert (summary["dry_run"], summary["would_delete"], summary["reached"]) == (True, 2, 2)
    assert "deleted" not in summary
    assert _memory_files(deployed.s3) == before


def test_a_failed_agent_fails_the_run_after_every_agent_ran(
    deployed: SimpleNamespace, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """S3 refuses bob's deletes: alice is still pruned; the run ends in an error naming no path."""

    def remember(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["keys"] = [entry["Key"] for entry in params["Delete"]["Objects"]]

    def refuse_bobs_deletes(context: dict[str, Any], **_: Any) -> Any:
        if any(key.startswith(f"{PREFIX}bob/") for key in context["keys"]):
            error = {"Code": "AccessDenied", "Message": "Access Denied"}
            return SimpleNamespace(status_code=403, headers={}), {"Error": error, "ResponseMetadata": {}}
        return None

    def on_client(client: Any) -> None:
        client.meta.events.register("before-parameter-build.s3.DeleteObjects", remember)
        client.meta.events.register("before-call.s3.DeleteObjects", refuse_bobs_deletes)

    with recording(monkeypatch, on_client), pytest.raises(deployed.handler.RetentionError) as failed:
        deployed.handler.lambda_handler({}, Lambda())

    assert str(failed.value).startswith("retention incomplete: 1 agent(s) failed, 0 not reached (")
    assert _memory_files(deployed.s3) == [
        "agents/alice/new.md",
        "agents/alice/read.md",
        "agents/bob/old.md",
        "other-app/old.txt",
    ]
    out = capsys.readouterr().out
    bob = next(record for record in _logged(out) if record.get("agent") == "bob")
    assert bob == {"agent": "bob", "exit": 1, "deleted": 0, "failed": 1, "reasons": {"not deleted (AccessDenied)": 1}}
    assert "old.md" not in out + str(failed.value)


def test_the_run_stops_before_the_timeout_and_says_who_was_not_reached(deployed: SimpleNamespace) -> None:
    with pytest.raises(deployed.handler.RetentionError) as failed:
        deployed.handler.lambda_handler({}, Lambda(seconds=deployed.handler.RESERVE_SECONDS - 1))
    assert str(failed.value).startswith("retention incomplete: 0 agent(s) failed, 2 not reached (")
    assert len(_memory_files(deployed.s3)) == 5  # nothing was touched


def test_a_listing_that_fails_fails_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in _environment(RETENTION_NOT_ACCESSED_DAYS="5").items():
        monkeypatch.setenv(name, value)
    handler = _load_handler()
    with (
        mock_aws(),
        pytest.raises(handler.RetentionError, match=r"^listing the agents failed \(exit [12]\): s3memory: "),
    ):
        handler.lambda_handler({}, Lambda())  # there is no bucket


@pytest.mark.parametrize(
    ("environment", "message"),
    [
        ({}, "set exactly one of RETENTION_NOT_ACCESSED_DAYS and RETENTION_OLDER_THAN_DAYS (a whole number of days)"),
        (
            {"RETENTION_NOT_ACCESSED_DAYS": "5", "RETENTION_OLDER_THAN_DAYS": "5"},
            "set exactly one of RETENTION_NOT_ACCESSED_DAYS and RETENTION_OLDER_THAN_DAYS (a whole number of days)",
        ),
        (
            {"RETENTION_NOT_ACCESSED_DAYS": "0"},
            "--not-accessed-for needs a whole number of days from 1 to 36500, got '0'",
        ),
        ({"RETENTION_OLDER_THAN_DAYS": "1.5"}, "--older-than needs a whole number of days from 1 to 36500, got '1.5'"),
        (
            {"RETENTION_OLDER_THAN_DAYS": "36501"},
            "--older-than needs a whole number of days from 1 to 36500, got '36501'",
        ),
        ({"RETENTION_OLDER_THAN_DAYS": "9", "RETENTION_DRY_RUN": "yes"}, "RETENTION_DRY_RUN must be true or false"),
    ],
)
def test_a_bad_configuration_is_refused_before_any_request(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], message: str
) -> None:
    for name, value in {**_environment(), **environment}.items():
        monkeypatch.setenv(name, value)
    handler = _load_handler()  # no AWS set up: refused before any call
    with pytest.raises(handler.RetentionError) as refused:
        handler.lambda_handler({}, Lambda())
    assert str(refused.value) == message


@pytest.mark.parametrize("event", [[], {"dry_run": "yes"}, {"dry_run": True, "agent": "alice"}])
def test_an_unexpected_event_is_refused(monkeypatch: pytest.MonkeyPatch, event: Any) -> None:
    for name, value in _environment(RETENTION_NOT_ACCESSED_DAYS="5").items():
        monkeypatch.setenv(name, value)
    handler = _load_handler()
    with pytest.raises(handler.RetentionError, match=r'^the event must be \{\} or \{"dry_run": true\|false\}$'):
        handler.lambda_handler(event, Lambda())


def test_the_module_gives_the_function_exactly_this_environment() -> None:
    """What the tests above set is what retention.tf deploys: no key source, no keystore bucket."""
    with (TERRAFORM / "retention.tf").open(encoding="utf-8") as handle:
        resources = hcl2.load(handle)["resource"]
    (function,) = [
        body
        for entry in resources
        for kind, labelled in entry.items()
        for label, body in labelled.items()
        if (kind.strip('"'), label.strip('"')) == ("aws_lambda_function", "retention")
    ]
    variables = function["environment"][0]["variables"]
    names = set(re.findall(r"\b(S3MEMORY_[A-Z_]+|RETENTION_[A-Z_]+)\s*=", variables))
    assert names == {
        "S3MEMORY_BUCKET",
        "S3MEMORY_PREFIX",
        "S3MEMORY_REGION",
        "RETENTION_DRY_RUN",
        "RETENTION_NOT_ACCESSED_DAYS",
        "RETENTION_OLDER_THAN_DAYS",
    }
    assert function["handler"] == '"handler.lambda_handler"'
    assert function["reserved_concurrent_executions"] == 1


# -- the function role: exactly what prune sends, scoped to the prefix -----------------------------


@pytest.fixture(scope="module")
def recorded() -> Iterator[list[Call]]:
    """One real run (by access, deleting two files), every request recorded."""
    with mock_aws(), pytest.MonkeyPatch.context() as patch:
        s3 = boto3.client("s3", region_name=MOTO_REGION)
        _seed(s3, patch)
        for name, value in _environment(RETENTION_NOT_ACCESSED_DAYS="5").items():
            patch.setenv(name, value)
        handler = _load_handler()
        with recording(patch) as recorder:
            assert handler.lambda_handler({}, Lambda())["deleted"] == 2
            yield recorder.take()


def _evaluate(
    simulator: Simulator | str,
    principal: str,
    action: str,
    resource: str,
    *,
    identity: list[Any],
    resource_policy: Any | None = None,
    context: dict[str, str] | None = None,
) -> str:
    if isinstance(simulator, str):
        pytest.fail(simulator, pytrace=False)
    decision = simulator.evaluate(
        principal=principal,
        action=action,
        resource=resource,
        account=ACCOUNT,
        context={"aws:SecureTransport": "true", **(context or {})},
        identity_policies=identity,
        resource_policy=resource_policy,
    )
    assert decision.ignored_context_keys == [], (action, resource)
    return decision.result


def test_the_run_sends_exactly_the_actions_prune_needs_and_no_kms(recorded: list[Call]) -> None:
    assert actions_used(recorded) == EXPECTED_RETENTION_ACTIONS
    assert [call for call in recorded if call.service != "s3"] == []
    assert {call.params["Bucket"] for call in recorded} == {BUCKET}  # never the keystore bucket


def test_the_retention_policy_grants_exactly_those_s3_actions() -> None:
    granted = granted_actions(policy("retention-function"))
    assert {action for action in granted if action.startswith("s3:")} == EXPECTED_RETENTION_ACTIONS
    assert {action for action in granted if not action.startswith("s3:")} == {
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
    }


def test_every_recorded_request_is_allowed_for_the_retention_role(
    simulator: Simulator | str, recorded: list[Call]
) -> None:
    requests = iam_requests(recorded)
    assert {action for action, _, _ in requests} == EXPECTED_RETENTION_ACTIONS
    decisions = {
        (action, resource, context): _evaluate(
            simulator,
            RETENTION_SESSION,
            action,
            resource,
            identity=[policy("retention-function")],
            resource_policy=policy("bucket"),
            context=dict(context),
        )
        for action, resource, context in requests
    }
    assert {request: result for request, result in decisions.items() if result != ALLOWED} == {}


def obj(key: str, bucket_arn: str = BUCKET_ARN) -> str:
    return f"{bucket_arn}/{key}"


@pytest.mark.parametrize(
    ("action", "resource", "context", "expected"),
    [
        ("s3:ListBucket", BUCKET_ARN, {"s3:prefix": "agents/"}, ALLOWED),
        ("s3:ListBucket", BUCKET_ARN, {"s3:prefix": "agents/alice/"}, ALLOWED),
        ("s3:GetObject", obj("agents/alice/notes.md"), {}, ALLOWED),
        ("s3:GetObjectTagging", obj("agents/alice/notes.md"), {}, ALLOWED),
        ("s3:DeleteObject", obj("agents/alice/notes.md"), {}, ALLOWED),
        # other prefixes and buckets
        ("s3:ListBucket", BUCKET_ARN, {"s3:prefix": "other-app/"}, IMPLICIT),
        ("s3:ListBucket", BUCKET_ARN, {"s3:prefix": ""}, IMPLICIT),
        ("s3:ListBucket", BUCKET_ARN, {}, IMPLICIT),
        ("s3:GetObject", obj("other-app/old.txt"), {}, IMPLICIT),
        ("s3:DeleteObject", obj("other-app/old.txt"), {}, IMPLICIT),
        ("s3:DeleteObject", obj("agents/alice/notes.md", "arn:aws:s3:::another-bucket"), {}, IMPLICIT),
        ("s3:ListBucket", "arn:aws:s3:::another-bucket", {"s3:prefix": "agents/"}, IMPLICIT),
        # no writes, no version deletes, no bucket administration, in the prefix either
        ("s3:PutObject", obj("agents/alice/notes.md"), {}, IMPLICIT),
        ("s3:PutObjectTagging", obj("agents/alice/notes.md"), {}, IMPLICIT),
        ("s3:DeleteObjectVersion", obj("agents/alice/notes.md"), {}, IMPLICIT),
        ("s3:GetObjectVersion", obj("agents/alice/notes.md"), {}, IMPLICIT),
        ("s3:ListBucketVersions", BUCKET_ARN, {"s3:prefix": "agents/"}, IMPLICIT),
        ("s3:PutObjectAcl", obj("agents/alice/notes.md"), {}, IMPLICIT),
        ("s3:PutLifecycleConfiguration", BUCKET_ARN, {}, IMPLICIT),
        ("s3:PutBucketPolicy", BUCKET_ARN, {}, IMPLICIT),
        # bookkeeping and branch keys kept in the memory bucket: never deleted
        ("s3:DeleteObject", obj("agents/alice/.s3memory/keys/00000001"), {}, EXPLICIT),
        ("s3:DeleteObject", obj("agents/alice/.s3memory/intents/rename-1.json"), {}, EXPLICIT),
    ],
)
@pytest.mark.parametrize("with_bucket_policy", [False, True], ids=["role", "with-bucket-policy"])
def test_the_retention_role_on_the_memory_bucket(
    simulator: Simulator | str,
    action: str,
    resource: str,
    context: dict[str, str],
    expected: str,
    with_bucket_policy: bool,
) -> None:
    decision = _evaluate(
        simulator,
        RETENTION_SESSION,
        action,
        resource,
        identity=[policy("retention-function")],
        resource_policy=policy("bucket") if with_bucket_policy and resource.startswith(BUCKET_ARN) else None,
        context=context,
    )
    assert decision == expected


@pytest.mark.parametrize(
    ("action", "resource", "context"),
    [
        ("s3:ListBucket", KEYSTORE_BUCKET_ARN, {"s3:prefix": "agents/alice/.s3memory/keys/"}),
        ("s3:GetObject", obj("agents/alice/.s3memory/keys/00000001", KEYSTORE_BUCKET_ARN), {}),
        ("s3:DeleteObject", obj("agents/alice/.s3memory/keys/00000001", KEYSTORE_BUCKET_ARN), {}),
        ("s3:DeleteObjectVersion", obj("agents/alice/.s3memory/keys/00000001", KEYSTORE_BUCKET_ARN), {}),
        ("s3:PutObject", obj("agents/alice/.s3memory/keys/00000002", KEYSTORE_BUCKET_ARN), {}),
    ],
)
def test_the_retention_role_cannot_touch_the_keystore(
    simulator: Simulator | str, action: str, resource: str, context: dict[str, str]
) -> None:
    decision = _evaluate(
        simulator,
        RETENTION_SESSION,
        action,
        resource,
        identity=[policy("retention-function")],
        resource_policy=policy("keystore-bucket"),
        context=context,
    )
    assert decision == IMPLICIT


@pytest.mark.parametrize(
    ("action", "resource", "resource_policy", "context"),
    [
        ("kms:Decrypt", DATA_KEY_ARN, "data-key", {}),
        ("kms:GenerateDataKey", DATA_KEY_ARN, "data-key", {}),
        ("kms:Decrypt", SSE_KEY_ARN, "sse-key", {"kms:ViaService": f"s3.{REGION}.amazonaws.com"}),
        ("sts:AssumeRole", AGENT_ROLE_ARN, "agent-trust", {}),
    ],
)
def test_the_retention_role_has_no_key_and_cannot_become_an_agent(
    simulator: Simulator | str, action: str, resource: str, resource_policy: str, context: dict[str, str]
) -> None:
    """No kms:Decrypt on the envelope key, nor on the SSE key even through S3: the role can read
    object headers but never a memory's plaintext, nor the stored ciphertext of an SSE-KMS object."""
    decision = _evaluate(
        simulator,
        RETENTION_SESSION,
        action,
        resource,
        identity=[policy("retention-function")],
        resource_policy=policy(resource_policy),
        context=context,
    )
    assert decision == IMPLICIT


@pytest.mark.parametrize("prefix", ["", "team-a/agents/"])
def test_other_prefixes_scope_the_retention_role_the_same_way(simulator: Simulator | str, prefix: str) -> None:
    def decide(action: str, key: str) -> str:
        return _evaluate(
            simulator, RETENTION_SESSION, action, obj(key), identity=[policy("retention-function", prefix)]
        )

    assert decide("s3:DeleteObject", f"{prefix}alice/notes.md") == ALLOWED
    assert decide("s3:DeleteObject", f"{prefix}alice/.s3memory/keys/00000001") == EXPLICIT
    assert decide("s3:PutObject", f"{prefix}alice/notes.md") == IMPLICIT
    if prefix:
        assert decide("s3:DeleteObject", "team-b/agents/alice/notes.md") == IMPLICIT


# -- the schedule's role and the trust policies ---------------------------------------------------


@pytest.mark.parametrize(
    ("action", "resource", "expected"),
    [
        ("lambda:InvokeFunction", RETENTION_FUNCTION_ARN, ALLOWED),
        ("lambda:InvokeFunction", f"{RETENTION_FUNCTION_ARN}:1", IMPLICIT),
        ("lambda:InvokeFunction", RETENTION_FUNCTION_ARN.replace(RETENTION_NAME, "s3memory-agent"), IMPLICIT),
        ("lambda:UpdateFunctionCode", RETENTION_FUNCTION_ARN, IMPLICIT),
        ("lambda:UpdateFunctionConfiguration", RETENTION_FUNCTION_ARN, IMPLICIT),
        ("lambda:InvokeFunctionUrl", RETENTION_FUNCTION_ARN, IMPLICIT),
        ("s3:GetObject", obj("agents/alice/notes.md"), IMPLICIT),
        ("s3:DeleteObject", obj("agents/alice/notes.md"), IMPLICIT),
        ("kms:Decrypt", DATA_KEY_ARN, IMPLICIT),
        ("iam:PassRole", f"arn:aws:iam::{ACCOUNT}:role/{RETENTION_NAME}", IMPLICIT),
    ],
)
def test_the_schedule_role_may_only_invoke_the_function(
    simulator: Simulator | str, action: str, resource: str, expected: str
) -> None:
    decision = _evaluate(simulator, SCHEDULER_SESSION, action, resource, identity=[policy("retention-scheduler")])
    assert decision == expected


def test_the_schedule_role_names_one_action_on_one_resource() -> None:
    assert policy("retention-scheduler")["Statement"] == [
        {
            "Sid": "InvokeTheRetentionFunctionOnly",
            "Effect": "Allow",
            "Action": "lambda:InvokeFunction",
            "Resource": RETENTION_FUNCTION_ARN,
        }
    ]


SCHEDULER_SOURCE = {"aws:SourceAccount": ACCOUNT, "aws:SourceArn": RETENTION_SCHEDULE_GROUP_ARN}


@pytest.mark.parametrize(
    ("principal", "context", "expected"),
    [
        ("scheduler.amazonaws.com", SCHEDULER_SOURCE, ALLOWED),
        ("scheduler.amazonaws.com", {**SCHEDULER_SOURCE, "aws:SourceAccount": "210987654321"}, IMPLICIT),
        (
            "scheduler.amazonaws.com",
            {**SCHEDULER_SOURCE, "aws:SourceArn": RETENTION_SCHEDULE_GROUP_ARN.replace(RETENTION_NAME, "default")},
            IMPLICIT,
        ),
        ("scheduler.amazonaws.com", {}, IMPLICIT),
        ("lambda.amazonaws.com", SCHEDULER_SOURCE, IMPLICIT),
        ("events.amazonaws.com", SCHEDULER_SOURCE, IMPLICIT),
        (f"arn:aws:sts::{ACCOUNT}:assumed-role/some-role/x", SCHEDULER_SOURCE, IMPLICIT),
    ],
)
def test_only_the_scheduler_of_the_retention_group_assumes_the_schedule_role(
    simulator: Simulator | str, principal: str, context: dict[str, str], expected: str
) -> None:
    decision = _evaluate(
        simulator,
        principal,
        "sts:AssumeRole",
        f"arn:aws:iam::{ACCOUNT}:role/{RETENTION_NAME}-scheduler",
        identity=[],
        resource_policy=policy("retention-scheduler-trust"),
        context=context,
    )
    assert decision == expected


@pytest.mark.parametrize(
    ("principal", "expected"),
    [
        ("lambda.amazonaws.com", ALLOWED),
        ("scheduler.amazonaws.com", IMPLICIT),
        (f"arn:aws:sts::{ACCOUNT}:assumed-role/some-role/x", IMPLICIT),
    ],
)
def test_only_lambda_assumes_the_function_role(simulator: Simulator | str, principal: str, expected: str) -> None:
    decision = _evaluate(
        simulator,
        principal,
        "sts:AssumeRole",
        f"arn:aws:iam::{ACCOUNT}:role/{RETENTION_NAME}",
        identity=[],
        resource_policy=policy("retention-trust"),
    )
    assert decision == expected
