"""The fleet roles (fleet.tf): every request each job makes, decided by the IAM evaluator.

Each job runs once through the worker handler (`s3memory.fleet.worker.lambda_handler`) on moto, in
the environment fleet.tf gives its class's function (a key source only for audit and keys), with
every request recorded (tests/terraform/recording.py). Then, per role class:

* every recorded S3 and KMS request, replayed with the rendered worker policy (and the bucket's or
  key's own policy), is Allowed;
* the S3 and KMS actions the class's policy grants on the memory and keystore buckets are exactly
  the ones its jobs send;
* the requests the class must never make are refused, with the exact decision: inspect and audit
  cannot delete, inspect cannot decrypt, prune can never touch `.s3memory/`, only keys gets
  GenerateDataKey/ReEncrypt, erase gets no KMS at all, nobody reaches another prefix or bucket.

And the state machine's role (invoke the five workers only, read manifests, write results, run its
own Map's child workflows), the schedule's role and the trust policies.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from types import ModuleType
from typing import Any

import boto3
import pytest
from moto import mock_aws

from s3memory import KmsKeys, S3MemoryTool
from s3memory.cli import main
from s3memory.fleet import worker
from s3memory.fleet.jobs import JOBS
from tests.support import enable_versioning
from tests.terraform.deploy import (
    ACCOUNT,
    AGENT_ROLE_ARN,
    BUCKET,
    BUCKET_ARN,
    DATA_KEY_ARN,
    FLEET_EXECUTION_ARN,
    FLEET_NAME,
    FLEET_STATE_MACHINE_ARN,
    FLEET_WORKER_ARNS,
    KEYSTORE_BUCKET,
    KEYSTORE_BUCKET_ARN,
    PREFIX,
    REGION,
    RESULTS_BUCKET,
    RESULTS_BUCKET_ARN,
    RESULTS_PREFIX,
    RETENTION_NAME,
    RETENTION_SCHEDULE_GROUP_ARN,
    REWRAP_TO_KEY_ARN,
    SSE_KEY_ARN,
    TERRAFORM,
    policy,
)
from tests.terraform.recording import Call, granted_actions, iam_requests, recording
from tests.terraform.simulator import Simulator

ALLOWED, IMPLICIT, EXPLICIT = "Allowed", "ImplicitlyDenied", "ExplicitlyDenied"
MOTO_REGION = "us-east-1"
CLASSES = ("inspect", "audit", "prune", "keys", "erase")
# One agent per job: (job, options) -> the agent it runs on.
RUNS = {
    ("prune", "dry"): "alice",
    ("prune", "real"): "bob",
    ("verify", ""): "carol",
    ("rotate", ""): "dave",
    ("reseal", ""): "dave",
    ("rewrap", ""): "erin",
    ("shred", ""): "frank",
    ("purge", ""): "gina",
}
KMS_ACTIONS = {
    "Decrypt": ["kms:Decrypt"],
    "GenerateDataKey": ["kms:GenerateDataKey"],
    "ReEncrypt": ["kms:ReEncryptFrom", "kms:ReEncryptTo"],
    "DescribeKey": ["kms:DescribeKey"],
}
# What the jobs of each class send to the memory and keystore buckets and to KMS.
EXPECTED = {
    "inspect": {"s3:ListBucket"},
    "prune": {"s3:ListBucket", "s3:DeleteObject"},
    "audit": {"s3:ListBucket", "s3:GetObject", "kms:Decrypt"},
    "keys": {
        "s3:ListBucket", "s3:GetObject", "s3:PutObject", "s3:DeleteObject",
        "kms:Decrypt", "kms:GenerateDataKey", "kms:ReEncryptFrom", "kms:ReEncryptTo",
    },
    "erase": {"s3:ListBucket", "s3:ListBucketVersions", "s3:GetObject", "s3:PutObject", "s3:DeleteObjectVersion"},
}  # fmt: skip
# Granted beyond what these runs send, each for a named reason: prune by access (not by age) HEADs
# old files and reads their access tags; erase deletes a current object without a version when the
# bucket is unversioned; keys deletes nothing in the memory bucket but its old branch keys.
GRANTED_BEYOND = {
    "inspect": {"s3:GetObject", "s3:GetObjectTagging"},
    "prune": {"s3:GetObject", "s3:GetObjectTagging"},
    "audit": set(),
    "keys": set(),
    "erase": {"s3:DeleteObject"},
}


def _role(role_class: str) -> str:
    return f"arn:aws:sts::{ACCOUNT}:assumed-role/{FLEET_NAME}-{role_class}/{FLEET_NAME}-{role_class}"


class Context:
    def get_remaining_time_in_millis(self) -> int:
        return 900_000


def _event(job: str, options: dict[str, Any], agent: str) -> dict[str, Any]:
    return {
        "BatchInput": {
            "job": job,
            "options": options,
            "run_id": f"run-{job}",
            "results": {"bucket": RESULTS_BUCKET, "prefix": RESULTS_PREFIX},
        },
        "Items": [{"id": agent, "kind": "agent"}],
    }


@pytest.fixture(scope="module")
def recorded() -> Iterator[dict[str, list[Call]]]:
    """Each job once through the worker; {role class: every call its jobs sent}."""
    with mock_aws(), pytest.MonkeyPatch.context() as patch:
        s3 = boto3.client("s3", region_name=MOTO_REGION)
        kms = boto3.client("kms", region_name=MOTO_REGION)
        for bucket in (BUCKET, KEYSTORE_BUCKET, RESULTS_BUCKET):
            s3.create_bucket(Bucket=bucket)
        enable_versioning(s3, BUCKET)
        enable_versioning(s3, KEYSTORE_BUCKET)
        key = kms.create_key()["KeyMetadata"]["Arn"]
        destination = kms.create_key()["KeyMetadata"]["Arn"]
        past = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(days=10)
        for agent in sorted(set(RUNS.values())):
            tool = S3MemoryTool(
                bucket=BUCKET,
                agent_id=agent,
                keys=KmsKeys(key, kms_client=kms),
                s3_client=s3,
                prefix=PREFIX,
                keystore_bucket=KEYSTORE_BUCKET,
            )
            with patch.context() as clock, tool:
                clock.setattr("moto.s3.models.utcnow", lambda: past)
                clock.setattr("s3memory.storage.vault.time.time", lambda: past.timestamp())
                tool.call({"command": "create", "path": "/memories/old.md", "file_text": "old\n"})
                tool.call({"command": "create", "path": "/memories/d/n.md", "file_text": "note\n"})
        for name, value in {
            "S3MEMORY_BUCKET": BUCKET,
            "S3MEMORY_KEYSTORE_BUCKET": KEYSTORE_BUCKET,
            "S3MEMORY_PREFIX": PREFIX,
            "S3MEMORY_REGION": MOTO_REGION,
            "S3MEMORY_NAMES": "plain",
            "S3MEMORY_FENCE_SECONDS": "0",  # purge and shred: no tool runs meanwhile
        }.items():
            patch.setenv(name, value)
        options = {
            ("prune", "dry"): {"older_than": "1d", "dry_run": True},
            ("prune", "real"): {"older_than": "1d"},
            ("rewrap", ""): {"to_key": destination},
        }
        calls: dict[str, list[Call]] = {c: [] for c in CLASSES}
        with recording(patch) as recorder:
            for (job, variant), agent in RUNS.items():
                chosen = options.get((job, variant), {})
                role_class = JOBS[job].role_class(chosen)
                if role_class in ("audit", "keys"):  # fleet.tf gives only these a key source
                    patch.setenv("S3MEMORY_KMS_KEY_ID", key)
                else:
                    patch.delenv("S3MEMORY_KMS_KEY_ID", raising=False)
                patch.setattr(worker, "_RUNTIME", [])  # each class is its own function: a cold start
                answer = worker.lambda_handler(_event(job, chosen, agent), Context())
                assert [r["outcome"] for r in answer["results"]] == ["dry_run" if variant == "dry" else "ok"], answer
                calls[role_class].extend(recorder.take())
                for built in worker._RUNTIME:
                    built.close()
            # the state machine's ListAgents request of a scheduled run, on the inspect worker
            patch.delenv("S3MEMORY_KMS_KEY_ID", raising=False)
            patch.setattr(worker, "_RUNTIME", [])
            request = {
                "run_id": "scheduled",
                "stores": True,
                "results": {"bucket": RESULTS_BUCKET, "prefix": RESULTS_PREFIX},
            }
            listed = _handler().lambda_handler({"ListAgents": request}, Context())
            assert listed["count"] == len(set(RUNS.values())) - 2  # shred and purge erased frank and gina
            calls["inspect"].extend(recorder.take())
            for built in worker._RUNTIME:
                built.close()
        yield calls


def _handler() -> ModuleType:
    """terraform/functions/fleet/handler.py, the file the module packages (no __pycache__ left there)."""
    spec = importlib.util.spec_from_file_location("s3memory_fleet_handler", TERRAFORM / "functions/fleet/handler.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    return module


def _kms_requests(calls: list[Call]) -> list[tuple[str, str]]:
    """(IAM action, key ARN in the test deployment) of every KMS request."""
    requests = set()
    for call in calls:
        if call.service != "kms":
            continue
        for action in KMS_ACTIONS[call.operation]:
            to_destination = action == "kms:ReEncryptTo" and call.params.get("DestinationKeyId") != call.params.get(
                "SourceKeyId"
            )
            requests.add((action, REWRAP_TO_KEY_ARN if to_destination else DATA_KEY_ARN))
    return sorted(requests)


def _used(calls: list[Call]) -> set[str]:
    memory = {
        action
        for action, resource, _ in iam_requests(calls)
        if resource.split("/")[0] in (BUCKET_ARN, KEYSTORE_BUCKET_ARN)
    }
    return memory | {action for action, _ in _kms_requests(calls)}


def _sim(simulator: Simulator | str) -> Simulator:
    if isinstance(simulator, str):
        pytest.fail(simulator, pytrace=False)
    return simulator


def _resource_policy(resource: str) -> Any:
    if resource.startswith(KEYSTORE_BUCKET_ARN):
        return policy("keystore-bucket")
    if resource.startswith(RESULTS_BUCKET_ARN):
        return policy("fleet-results-bucket")
    if resource.startswith(BUCKET_ARN):
        return policy("bucket")
    if resource == DATA_KEY_ARN:
        return policy("data-key")
    if resource == SSE_KEY_ARN:
        return policy("sse-key")
    return None


def _decide(
    simulator: Simulator | str, role_class: str, action: str, resource: str, context: dict[str, str] | None = None
) -> str:
    decision = _sim(simulator).evaluate(
        principal=_role(role_class),
        action=action,
        resource=resource,
        account=ACCOUNT,
        context={"aws:SecureTransport": "true", **(context or {})},
        identity_policies=[policy(f"fleet-{role_class}")],
        resource_policy=_resource_policy(resource),
    )
    assert decision.ignored_context_keys == [], (action, resource)
    return decision.result


@pytest.mark.parametrize("role_class", CLASSES)
def test_each_class_sends_exactly_the_expected_actions(recorded: dict[str, list[Call]], role_class: str) -> None:
    assert _used(recorded[role_class]) == EXPECTED[role_class]


@pytest.mark.parametrize("role_class", CLASSES)
def test_each_class_policy_grants_exactly_what_its_jobs_send(role_class: str) -> None:
    document = policy(f"fleet-{role_class}")
    granted = {
        action
        for statement in document["Statement"]
        if statement["Effect"] == "Allow"
        and not str(statement["Resource"]).startswith(RESULTS_BUCKET_ARN)
        and statement["Sid"] not in ("WriteOwnLogs", "XRayTracing")
        for action in ([statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"])
    }
    assert granted == EXPECTED[role_class] | GRANTED_BEYOND[role_class]
    assert granted_actions(document) - granted <= {
        "s3:ListBucket",
        "s3:GetObject",
        "s3:PutObject",
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
    }


@pytest.mark.parametrize("role_class", CLASSES)
def test_every_recorded_request_is_allowed_for_its_class(
    simulator: Simulator | str, recorded: dict[str, list[Call]], role_class: str
) -> None:
    requests = [(a, r, dict(c)) for a, r, c in iam_requests(recorded[role_class])]
    # The evaluator drops kms:EncryptionContext keys (test_policies.py pins it), so the data-key
    # grants, conditioned on the agent's context, are decided structurally below; the SSE key's are not.
    assert {r.split("/")[0] for _, r, _ in requests} >= {BUCKET_ARN, RESULTS_BUCKET_ARN}
    refused = {
        (action, resource): result
        for action, resource, context in requests
        if (result := _decide(simulator, role_class, action, resource, context)) != ALLOWED
    }
    assert refused == {}


def _untag_index_entries(s3: Any, agent: str) -> None:
    """Make the agent's keystore look as a release before issue 32 left it: index entries without
    their claim tag (`.c...`), which a reader trusts only after reading the claim."""
    folder = f"{PREFIX}{agent}/.s3memory/keys/"
    for listed in s3.list_objects_v2(Bucket=KEYSTORE_BUCKET, Prefix=folder)["Contents"]:
        untagged = re.sub(r"\.c[A-Za-z0-9_-]{22}$", "", listed["Key"])
        if untagged != listed["Key"]:
            s3.copy_object(
                Bucket=KEYSTORE_BUCKET, Key=untagged, CopySource={"Bucket": KEYSTORE_BUCKET, "Key": listed["Key"]}
            )
            s3.delete_object(Bucket=KEYSTORE_BUCKET, Key=listed["Key"])


@pytest.mark.parametrize(("job", "role_class"), [("verify", "audit"), ("reseal", "keys")])
def test_the_key_readers_read_the_claims_of_untagged_entries_and_may(
    simulator: Simulator | str, job: str, role_class: str
) -> None:
    """Issue 32: an agent whose index entries carry no claim tag (made before it) is read through
    its claims, so the classes that read keys GET them; their roles allow exactly that."""
    agent = f"olga-{job}"  # the module's moto state is shared: an agent of its own
    with mock_aws(), pytest.MonkeyPatch.context() as patch:
        s3 = boto3.client("s3", region_name=MOTO_REGION)
        kms = boto3.client("kms", region_name=MOTO_REGION)
        for bucket in (BUCKET, KEYSTORE_BUCKET, RESULTS_BUCKET):
            s3.create_bucket(Bucket=bucket)
        key = kms.create_key()["KeyMetadata"]["Arn"]
        with S3MemoryTool(
            bucket=BUCKET, agent_id=agent, keys=KmsKeys(key, kms_client=kms), s3_client=s3, prefix=PREFIX,
            keystore_bucket=KEYSTORE_BUCKET,
        ) as tool:  # fmt: skip
            tool.call({"command": "create", "path": "/memories/a.md", "file_text": "a\n"})
        _untag_index_entries(s3, agent)
        for name, value in {
            "S3MEMORY_BUCKET": BUCKET,
            "S3MEMORY_KEYSTORE_BUCKET": KEYSTORE_BUCKET,
            "S3MEMORY_PREFIX": PREFIX,
            "S3MEMORY_REGION": MOTO_REGION,
            "S3MEMORY_NAMES": "plain",
            "S3MEMORY_KMS_KEY_ID": key,
        }.items():
            patch.setenv(name, value)
        with recording(patch) as recorder:
            patch.setattr(worker, "_RUNTIME", [])
            answer = worker.lambda_handler(_event(job, {}, agent), Context())
            calls = recorder.take()
            for built in worker._RUNTIME:
                built.close()
    assert [r["outcome"] for r in answer["results"]] == ["ok"], answer
    requests = [(a, r, dict(c)) for a, r, c in iam_requests(calls)]
    claim = obj(f"{PREFIX}{agent}/.s3memory/keys/00000001", KEYSTORE_BUCKET_ARN)
    assert ("s3:GetObject", claim) in {(a, r) for a, r, _ in requests}, sorted({r for _, r, _ in requests})
    refused = {
        (action, resource): result
        for action, resource, context in requests
        if (result := _decide(simulator, role_class, action, resource, context)) != ALLOWED
    }
    assert refused == {}


def test_the_kms_requests_carry_the_agent_context_the_grants_require(recorded: dict[str, list[Call]]) -> None:
    for role_class in ("audit", "keys"):
        kms_calls = [call for call in recorded[role_class] if call.service == "kms"]
        assert kms_calls
        for call in kms_calls:
            context = call.params.get("EncryptionContext") or call.params.get("DestinationEncryptionContext")
            assert context["s3memory:agent"] in RUNS.values(), call.operation
    assert [call for c in ("inspect", "prune", "erase") for call in recorded[c] if call.service == "kms"] == []


def obj(key: str, bucket_arn: str = BUCKET_ARN) -> str:
    return f"{bucket_arn}/{key}"


NOTES = obj("agents/alice/notes.md")
BOOKKEEPING = obj("agents/alice/.s3memory/intents/rename-1.json")
BRANCH_KEY = obj("agents/alice/.s3memory/keys/00000001", KEYSTORE_BUCKET_ARN)  # the claim of generation 1
BRANCH_ENTRY = obj("agents/alice/.s3memory/keys/00000001-0123456789abcdef.1700000000.aws-kms.QUJD", KEYSTORE_BUCKET_ARN)
PLANTED_CLAIM = obj("agents/alice/.s3memory/keys/99999999", KEYSTORE_BUCKET_ARN)  # out of sequence
NAMES_CLAIM = obj("agents/alice/.s3memory/keys/names.00000003", KEYSTORE_BUCKET_ARN)
NAMES_ENTRY = obj("agents/alice/.s3memory/keys/names.00000003.plain.QUJDREVGR0hJSktMTU5PUFFSU1Q", KEYSTORE_BUCKET_ARN)
ERASING = obj("agents/alice/.s3memory/keys/erasing", KEYSTORE_BUCKET_ARN)
SHREDDED = obj("agents/alice/.s3memory/keys/shredded", KEYSTORE_BUCKET_ARN)
RESULT = obj(f"{RESULTS_PREFIX}run-1/done/agent/alice", RESULTS_BUCKET_ARN)
VIA_S3 = {"kms:ViaService": f"s3.{REGION}.amazonaws.com"}
# (action, resource, context) -> the decision for each class, in CLASSES order
# (inspect, audit, prune, keys, erase).
DECISIONS = [
    # deletes: only prune (current objects), erase (every version); keys deletes old branch keys only
    ("s3:DeleteObject", NOTES, {}, (IMPLICIT, IMPLICIT, ALLOWED, IMPLICIT, ALLOWED)),
    ("s3:DeleteObjectVersion", NOTES, {}, (IMPLICIT, IMPLICIT, IMPLICIT, IMPLICIT, ALLOWED)),
    ("s3:DeleteObject", BRANCH_KEY, {}, (IMPLICIT, IMPLICIT, IMPLICIT, ALLOWED, ALLOWED)),
    ("s3:DeleteObjectVersion", BRANCH_KEY, {}, (IMPLICIT, IMPLICIT, IMPLICIT, IMPLICIT, ALLOWED)),
    # .s3memory/ in the memory bucket: never for prune, nor for inspect, whatever the action
    ("s3:DeleteObject", BOOKKEEPING, {}, (EXPLICIT, IMPLICIT, EXPLICIT, IMPLICIT, ALLOWED)),
    ("s3:PutObject", BOOKKEEPING, {}, (EXPLICIT, IMPLICIT, EXPLICIT, ALLOWED, IMPLICIT)),
    ("s3:GetObject", BOOKKEEPING, {}, (EXPLICIT, ALLOWED, EXPLICIT, ALLOWED, IMPLICIT)),
    # writes
    ("s3:PutObject", NOTES, {}, (IMPLICIT, IMPLICIT, IMPLICIT, ALLOWED, IMPLICIT)),
    ("s3:PutObject", BRANCH_KEY, {}, (IMPLICIT, IMPLICIT, IMPLICIT, ALLOWED, ALLOWED)),
    ("s3:PutObjectTagging", NOTES, {}, (IMPLICIT, IMPLICIT, IMPLICIT, IMPLICIT, IMPLICIT)),
    # reads: headers for inspect and prune (no plaintext: see KMS below); of the keystore, only the
    # claims, for the classes that read keys (an untagged or missing index entry is checked against
    # its claim, and verify reads every claim: issue 32), and the `erasing` stage for erase (issue 34)
    ("s3:GetObject", NOTES, {}, (ALLOWED, ALLOWED, ALLOWED, ALLOWED, IMPLICIT)),
    ("s3:GetObjectTagging", NOTES, {}, (ALLOWED, IMPLICIT, ALLOWED, IMPLICIT, IMPLICIT)),
    ("s3:GetObject", BRANCH_KEY, {}, (IMPLICIT, ALLOWED, IMPLICIT, ALLOWED, IMPLICIT)),
    ("s3:GetObject", PLANTED_CLAIM, {}, (IMPLICIT, ALLOWED, IMPLICIT, ALLOWED, IMPLICIT)),  # verify reports it
    ("s3:GetObject", BRANCH_ENTRY, {}, (IMPLICIT,) * 5),
    # a name mode claim (`s3memory migrate`'s, read when its entry is missing); its entry is never read
    ("s3:GetObject", NAMES_CLAIM, {}, (IMPLICIT, ALLOWED, IMPLICIT, ALLOWED, IMPLICIT)),
    ("s3:GetObject", NAMES_ENTRY, {}, (IMPLICIT,) * 5),
    ("s3:GetObject", obj("agents/alice/.s3memory/keys/names.000000031", KEYSTORE_BUCKET_ARN), {}, (IMPLICIT,) * 5),
    ("s3:GetObject", ERASING, {}, (IMPLICIT,) * 4 + (ALLOWED,)),
    ("s3:GetObject", SHREDDED, {}, (IMPLICIT,) * 5),
    ("s3:GetObject", obj("other-app/x/.s3memory/keys/00000001", KEYSTORE_BUCKET_ARN), {}, (IMPLICIT,) * 5),
    ("s3:GetObjectVersion", NOTES, {}, (IMPLICIT, IMPLICIT, IMPLICIT, IMPLICIT, IMPLICIT)),
    ("s3:ListBucketVersions", BUCKET_ARN, {"s3:prefix": "agents/alice/"}, (IMPLICIT,) * 4 + (ALLOWED,)),
    ("s3:ListBucket", BUCKET_ARN, {"s3:prefix": "agents/"}, (ALLOWED,) * 5),
    ("s3:ListBucket", KEYSTORE_BUCKET_ARN, {"s3:prefix": "agents/alice/.s3memory/keys/"}, (ALLOWED,) * 5),
    # KMS: inspect, prune and erase none; audit unwraps; only keys wraps and rewraps
    ("kms:Decrypt", REWRAP_TO_KEY_ARN, {}, (IMPLICIT,) * 5),
    ("kms:Encrypt", DATA_KEY_ARN, {}, (IMPLICIT,) * 5),
    ("kms:CreateGrant", DATA_KEY_ARN, {}, (IMPLICIT,) * 5),
    ("kms:Decrypt", SSE_KEY_ARN, VIA_S3, (IMPLICIT, ALLOWED, IMPLICIT, ALLOWED, IMPLICIT)),
    ("kms:GenerateDataKey", SSE_KEY_ARN, VIA_S3, (IMPLICIT, IMPLICIT, IMPLICIT, ALLOWED, IMPLICIT)),
    ("kms:Decrypt", SSE_KEY_ARN, {}, (IMPLICIT,) * 5),
    # the run's results: every worker; nothing else in that bucket
    ("s3:PutObject", RESULT, {}, (ALLOWED,) * 5),
    ("s3:GetObject", RESULT, {}, (ALLOWED,) * 5),
    ("s3:ListBucket", RESULTS_BUCKET_ARN, {"s3:prefix": f"{RESULTS_PREFIX}run-1/done/agent/"}, (ALLOWED,) * 5),
    ("s3:DeleteObject", RESULT, {}, (IMPLICIT,) * 5),
    ("s3:PutObject", obj("elsewhere/x", RESULTS_BUCKET_ARN), {}, (IMPLICIT,) * 5),
    # other prefixes and buckets, other principals
    ("s3:ListBucket", BUCKET_ARN, {"s3:prefix": "other-app/"}, (IMPLICIT,) * 5),
    ("s3:GetObject", obj("other-app/x"), {}, (IMPLICIT,) * 5),
    ("s3:DeleteObject", obj("agents/alice/notes.md", "arn:aws:s3:::another-bucket"), {}, (IMPLICIT,) * 5),
    ("s3:PutBucketPolicy", BUCKET_ARN, {}, (IMPLICIT,) * 5),
    ("sts:AssumeRole", AGENT_ROLE_ARN, {}, (IMPLICIT,) * 5),
]


@pytest.mark.parametrize(("action", "resource", "context", "expected"), DECISIONS)
def test_what_each_class_may_and_may_not_do(
    simulator: Simulator | str, action: str, resource: str, context: dict[str, str], expected: tuple[str, ...]
) -> None:
    decided = tuple(_decide(simulator, role_class, action, resource, context) for role_class in CLASSES)
    assert dict(zip(CLASSES, decided, strict=True)) == dict(zip(CLASSES, expected, strict=True))


# The data key's grants (decided structurally: the evaluator cannot see an encryption context).
AGENT_CONDITION = {"Null": {"kms:EncryptionContext:s3memory:agent": "false"}}
DATA_KEY_GRANTS = {
    "inspect": set(),
    "prune": set(),
    "erase": set(),
    "audit": {("kms:Decrypt", DATA_KEY_ARN)},
    "keys": {
        ("kms:Decrypt", DATA_KEY_ARN),
        ("kms:GenerateDataKey", DATA_KEY_ARN),
        ("kms:ReEncryptFrom", DATA_KEY_ARN),
        ("kms:ReEncryptTo", DATA_KEY_ARN),
        ("kms:ReEncryptTo", REWRAP_TO_KEY_ARN),
    },
}


@pytest.mark.parametrize("role_class", CLASSES)
def test_only_audit_and_keys_reach_the_data_key_and_only_with_an_agent_context(
    recorded: dict[str, list[Call]], role_class: str
) -> None:
    grants = set()
    for statement in policy(f"fleet-{role_class}")["Statement"]:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        if statement["Effect"] != "Allow" or not any(a.startswith("kms:") for a in actions):
            continue
        if resources == [SSE_KEY_ARN]:
            assert statement["Condition"] == {"StringEquals": {"kms:ViaService": f"s3.{REGION}.amazonaws.com"}}
            continue
        assert statement["Condition"] == AGENT_CONDITION, statement["Sid"]
        grants |= {(a, r) for a in actions for r in resources}
    assert grants == DATA_KEY_GRANTS[role_class]
    assert set(_kms_requests(recorded[role_class])) <= grants


# -- the state machine, the schedule and the trust policies -----------------------------------------

SM_SESSION = f"arn:aws:sts::{ACCOUNT}:assumed-role/{FLEET_NAME}-sfn/states"
MANIFEST = obj(f"{RESULTS_PREFIX}run-1/manifest.json", RESULTS_BUCKET_ARN)
MAP_RESULTS = obj(f"{RESULTS_PREFIX}map-runs/0d1e/SUCCEEDED_0.json", RESULTS_BUCKET_ARN)
CHILD = f"{FLEET_EXECUTION_ARN}/agents:5b2c1f0e-6b8e-4b6f-9d3a-0e1f2a3b4c5d"


@pytest.mark.parametrize(
    ("action", "resource", "expected"),
    [
        *[("lambda:InvokeFunction", arn, ALLOWED) for arn in FLEET_WORKER_ARNS.values()],
        ("lambda:InvokeFunction", FLEET_WORKER_ARNS["prune"].replace("fleet-prune", "agent"), IMPLICIT),
        ("lambda:InvokeFunction", f"{FLEET_WORKER_ARNS['prune']}:1", IMPLICIT),
        ("lambda:UpdateFunctionCode", FLEET_WORKER_ARNS["prune"], IMPLICIT),
        ("s3:GetObject", MANIFEST, ALLOWED),
        ("s3:PutObject", MAP_RESULTS, ALLOWED),
        ("s3:AbortMultipartUpload", MAP_RESULTS, ALLOWED),
        ("s3:ListMultipartUploadParts", MAP_RESULTS, ALLOWED),
        ("s3:DeleteObject", MANIFEST, IMPLICIT),
        ("s3:GetObject", obj("agents/alice/notes.md"), IMPLICIT),
        ("s3:DeleteObject", obj("agents/alice/notes.md"), IMPLICIT),
        ("kms:Decrypt", DATA_KEY_ARN, IMPLICIT),
        ("states:StartExecution", FLEET_STATE_MACHINE_ARN, ALLOWED),
        ("states:StartExecution", FLEET_STATE_MACHINE_ARN.replace(FLEET_NAME, "other"), IMPLICIT),
        ("states:DescribeExecution", CHILD, ALLOWED),
        ("states:StopExecution", CHILD, ALLOWED),
        ("states:RedriveExecution", CHILD, ALLOWED),
        ("states:StopExecution", f"{FLEET_EXECUTION_ARN.replace(FLEET_NAME, 'other')}/agents:x", IMPLICIT),
        ("states:DeleteStateMachine", FLEET_STATE_MACHINE_ARN, IMPLICIT),
        ("iam:PassRole", f"arn:aws:iam::{ACCOUNT}:role/{FLEET_NAME}-prune", IMPLICIT),
    ],
)
def test_the_state_machine_role(simulator: Simulator | str, action: str, resource: str, expected: str) -> None:
    decision = _sim(simulator).evaluate(
        principal=SM_SESSION,
        action=action,
        resource=resource,
        account=ACCOUNT,
        context={"aws:SecureTransport": "true"},
        identity_policies=[policy("fleet-state-machine")],
        resource_policy=_resource_policy(resource),
    )
    assert decision.result == expected


def test_the_state_machine_may_invoke_exactly_the_five_workers() -> None:
    (statement,) = [s for s in policy("fleet-state-machine")["Statement"] if s["Action"] == "lambda:InvokeFunction"]
    assert statement["Resource"] == [FLEET_WORKER_ARNS[c] for c in sorted(CLASSES)]
    assert {JOBS[job].role_class(o) for job in JOBS for o in ({}, {"dry_run": True})} == set(CLASSES)


OPERATOR_SESSION = f"arn:aws:sts::{ACCOUNT}:assumed-role/s3memory-operator/alice"
MAP_RUN = f"arn:aws:states:{REGION}:{ACCOUNT}:mapRun:{FLEET_NAME}/agents:5b2c1f0e"


@pytest.mark.parametrize(
    ("action", "resource", "expected"),
    [
        ("states:StartExecution", FLEET_STATE_MACHINE_ARN, ALLOWED),
        ("states:DescribeExecution", f"{FLEET_EXECUTION_ARN}:run-1", ALLOWED),
        ("states:RedriveExecution", f"{FLEET_EXECUTION_ARN}:run-1", ALLOWED),
        ("states:StopExecution", f"{FLEET_EXECUTION_ARN}:run-1", ALLOWED),
        ("states:ListMapRuns", f"{FLEET_EXECUTION_ARN}:run-1", ALLOWED),
        ("states:DescribeMapRun", MAP_RUN, ALLOWED),
        ("s3:PutObject", MANIFEST, ALLOWED),
        ("s3:GetObject", RESULT, ALLOWED),
        ("s3:DeleteObject", RESULT, IMPLICIT),
        ("states:StartExecution", FLEET_STATE_MACHINE_ARN.replace(FLEET_NAME, "other"), IMPLICIT),
        ("states:UpdateStateMachine", FLEET_STATE_MACHINE_ARN, IMPLICIT),
        ("states:UpdateMapRun", MAP_RUN, IMPLICIT),
        ("lambda:InvokeFunction", FLEET_WORKER_ARNS["erase"], IMPLICIT),
        ("iam:PassRole", f"arn:aws:iam::{ACCOUNT}:role/{FLEET_NAME}-sfn", IMPLICIT),
    ],
)
def test_the_fleet_operator_policy_runs_the_state_machine_and_nothing_else(
    simulator: Simulator | str, action: str, resource: str, expected: str
) -> None:
    """An operator starts runs; the workers' roles, not the operator, touch the memories."""
    decision = _sim(simulator).evaluate(
        principal=OPERATOR_SESSION,
        action=action,
        resource=resource,
        account=ACCOUNT,
        context={"aws:SecureTransport": "true"},
        identity_policies=[policy("fleet-operator")],
        resource_policy=_resource_policy(resource),
    )
    assert decision.result == expected


SCHEDULER_SESSION = f"arn:aws:sts::{ACCOUNT}:assumed-role/{RETENTION_NAME}-scheduler/scheduler"


@pytest.mark.parametrize(
    ("action", "resource", "expected"),
    [
        ("states:StartExecution", FLEET_STATE_MACHINE_ARN, ALLOWED),
        ("states:StartExecution", FLEET_STATE_MACHINE_ARN.replace(FLEET_NAME, "other"), IMPLICIT),
        ("states:StopExecution", f"{FLEET_EXECUTION_ARN}:run-1", IMPLICIT),
        ("lambda:InvokeFunction", FLEET_WORKER_ARNS["prune"], IMPLICIT),
        ("s3:DeleteObject", obj("agents/alice/notes.md"), IMPLICIT),
    ],
)
def test_the_schedule_role_may_only_start_the_state_machine(
    simulator: Simulator | str, action: str, resource: str, expected: str
) -> None:
    decision = _sim(simulator).evaluate(
        principal=SCHEDULER_SESSION,
        action=action,
        resource=resource,
        account=ACCOUNT,
        context={},
        identity_policies=[policy("retention-scheduler")],
    )
    assert decision.result == expected


@pytest.mark.parametrize(
    ("document", "principal", "context", "expected"),
    [
        ("fleet-worker-trust", "lambda.amazonaws.com", {}, ALLOWED),
        ("fleet-worker-trust", "states.amazonaws.com", {}, IMPLICIT),
        (
            "fleet-state-machine-trust",
            "states.amazonaws.com",
            {"aws:SourceAccount": ACCOUNT, "aws:SourceArn": FLEET_STATE_MACHINE_ARN},
            ALLOWED,
        ),
        (
            "fleet-state-machine-trust",
            "states.amazonaws.com",
            {"aws:SourceAccount": "210987654321", "aws:SourceArn": FLEET_STATE_MACHINE_ARN},
            IMPLICIT,
        ),
        ("fleet-state-machine-trust", "lambda.amazonaws.com", {"aws:SourceAccount": ACCOUNT}, IMPLICIT),
        (
            "retention-scheduler-trust",
            "scheduler.amazonaws.com",
            {"aws:SourceAccount": ACCOUNT, "aws:SourceArn": RETENTION_SCHEDULE_GROUP_ARN},
            ALLOWED,
        ),
        ("retention-scheduler-trust", "scheduler.amazonaws.com", {}, IMPLICIT),
        ("retention-scheduler-trust", "events.amazonaws.com", {"aws:SourceAccount": ACCOUNT}, IMPLICIT),
    ],
)
def test_only_the_right_service_assumes_each_role(
    simulator: Simulator | str, document: str, principal: str, context: dict[str, str], expected: str
) -> None:
    decision = _sim(simulator).evaluate(
        principal=principal,
        action="sts:AssumeRole",
        resource=f"arn:aws:iam::{ACCOUNT}:role/some-role",
        account=ACCOUNT,
        context=context,
        identity_policies=[],
        resource_policy=policy(document),
    )
    assert decision.result == expected


@pytest.mark.parametrize(("job", "role_class"), [("verify", "audit"), ("reseal", "keys")])
def test_the_key_readers_read_a_name_mode_claim_without_its_entry_and_may(
    simulator: Simulator | str, job: str, role_class: str
) -> None:
    """An agent with encrypted names moved to plain by `s3memory migrate`, whose mode record's
    entry is missing (the migrate stopped between its claim and its entry): its name mode is read
    from the claim `names.00000003`, so the jobs that resolve names with a key (verify, reseal; not
    rotate, which reads no names) GET it; their roles allow that (before: ImplicitlyDenied, the
    agent failed with AccessDenied on AWS)."""
    agent = f"nora-{job}"
    with mock_aws(), pytest.MonkeyPatch.context() as patch:
        s3 = boto3.client("s3", region_name=MOTO_REGION)
        kms = boto3.client("kms", region_name=MOTO_REGION)
        for bucket in (BUCKET, KEYSTORE_BUCKET, RESULTS_BUCKET):
            s3.create_bucket(Bucket=bucket)
        key = kms.create_key()["KeyMetadata"]["Arn"]
        with S3MemoryTool(
            bucket=BUCKET, agent_id=agent, keys=KmsKeys(key, kms_client=kms), s3_client=s3, prefix=PREFIX,
            keystore_bucket=KEYSTORE_BUCKET, names="encrypted",
        ) as tool:  # fmt: skip
            tool.call({"command": "create", "path": "/memories/a.md", "file_text": "a\n"})
        for name, value in {
            "S3MEMORY_BUCKET": BUCKET,
            "S3MEMORY_KEYSTORE_BUCKET": KEYSTORE_BUCKET,
            "S3MEMORY_PREFIX": PREFIX,
            "S3MEMORY_REGION": MOTO_REGION,
            "S3MEMORY_NAMES": "plain",
            "S3MEMORY_KMS_KEY_ID": key,
            "S3MEMORY_FENCE_SECONDS": "0",  # migrate's wait for running tools: none run
        }.items():
            patch.setenv(name, value)
        assert main(["migrate", "--yes", "--agent", agent, "--names", "plain", "-q"]) == 0
        folder = f"{PREFIX}{agent}/.s3memory/keys/"
        listed = s3.list_objects_v2(Bucket=KEYSTORE_BUCKET, Prefix=folder + "names.")["Contents"]
        names = [o["Key"].removeprefix(folder) for o in listed]
        assert [n.rsplit(".", 1)[0] if n.count(".") == 3 else n for n in names] == [
            "names.00000001.encrypted", "names.00000002", "names.00000002.to-plain", "names.00000003",
            "names.00000003.plain",
        ]  # fmt: skip
        s3.delete_object(Bucket=KEYSTORE_BUCKET, Key=folder + names[-1])  # mode 3's entry; its claim stays
        with recording(patch) as recorder:
            patch.setattr(worker, "_RUNTIME", [])
            answer = worker.lambda_handler(_event(job, {}, agent), Context())
            calls = recorder.take()
            for built in worker._RUNTIME:
                built.close()
    assert [(r["outcome"], r["reason"]) for r in answer["results"]] == [("ok", "")], answer
    requests = [(a, r, dict(c)) for a, r, c in iam_requests(calls)]
    claim = obj(f"{folder}names.00000003", KEYSTORE_BUCKET_ARN)
    assert ("s3:GetObject", claim) in {(a, r) for a, r, _ in requests}, sorted({r for _, r, _ in requests})
    refused = {
        (action, resource): result
        for action, resource, context in requests
        if (result := _decide(simulator, role_class, action, resource, context)) != ALLOWED
    }
    assert refused == {}
