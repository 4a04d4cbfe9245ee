"""Shared stores under the module's policies: every request a real tool sends to a store, recorded
on moto, decided by the IAM simulator for a writer, a reader and an agent with no grant.

The deployment (tests/terraform/deploy.py) grants `support-guidelines` to readers `support-*` and
writers `curator-?`. A curator's tool fills and edits the store through a read-write mount; a
support agent's tool reads it through a read-only mount. Each request runs against the agent-role
policy plus the attached store policies, and against the bucket's (or keystore bucket's) policy.
KMS conditions are evaluated here, not by the simulator, which drops encryption context keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from s3memory import KmsKeys, Mount, S3MemoryTool
from tests.terraform.deploy import (
    ACCOUNT,
    AGENT_ROLE_NAME,
    BUCKET,
    BUCKET_ARN,
    KEYSTORE_BUCKET,
    PREFIX,
    STORE,
    policy,
)
from tests.terraform.simulator import Simulator
from tests.terraform.test_agent_actions import REGION, Call, Recorder, _keys_of, s3_requests

pytestmark = pytest.mark.moto_only  # in-process moto, recorded
CURATOR, SUPPORT, OUTSIDER = "curator-1", "support-7", "billing-3"
STORE_PREFIX = f"{PREFIX}_stores/{STORE}/"

WRITES: list[dict[str, Any]] = [
    {"command": "create", "path": "/memories/g/refunds.md", "file_text": "Refund within 30 days.\n"},
    {"command": "create", "path": "/memories/g/tone/voice.md", "file_text": "Be kind.\n"},
    {"command": "str_replace", "path": "/memories/g/refunds.md", "old_str": "30", "new_str": "45"},
    {"command": "insert", "path": "/memories/g/refunds.md", "insert_line": 1, "insert_text": "Ask first."},
    {"command": "rename", "old_path": "/memories/g/tone", "new_path": "/memories/g/style"},
    {"command": "create", "path": "/memories/g/old.md", "file_text": "x"},
    {"command": "delete", "path": "/memories/g/old.md"},
]
READS: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/guidelines"},
    {"command": "view", "path": "/memories/guidelines/refunds.md"},
    {"command": "view", "path": "/memories/guidelines/style/voice.md"},
]


def _store_calls(calls: list[Call]) -> list[Call]:
    """The calls that reach the store: S3 keys and prefixes under it, KMS in its context."""
    found = []
    for call in calls:
        if call.service == "kms":
            if call.params.get("EncryptionContext", {}).get("s3memory:agent") == f"_stores/{STORE}":
                found.append(call)
        elif call.params.get("Prefix", "").startswith(STORE_PREFIX) or any(
            k.startswith(STORE_PREFIX) for k in _keys_of(call)
        ):
            found.append(call)
    return found


@pytest.fixture(scope="module")
def recorded() -> Iterator[tuple[list[Call], list[Call]]]:
    """(the curator's store calls, the support agent's store calls), each from a fresh process."""
    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        kms = boto3.client("kms", region_name=REGION)
        for bucket in (BUCKET, KEYSTORE_BUCKET):
            s3.create_bucket(Bucket=bucket)
        key_id = kms.create_key(Description="s3memory data keys")["KeyMetadata"]["Arn"]

        def tool(agent: str, mount: Mount, name: str) -> S3MemoryTool:
            return S3MemoryTool(bucket=BUCKET, agent_id=agent, keys=KmsKeys(key_id, kms_client=kms), s3_client=s3,
                                prefix=PREFIX, keystore_bucket=KEYSTORE_BUCKET, mounts={name: mount})  # fmt: skip

        recorder = Recorder(s3, kms)
        with tool(CURATOR, Mount(STORE, read_only=False), "g") as curator:
            for command in WRITES:
                curator.call(command)
        writes = _store_calls(recorder.calls)
        recorder.reset()
        with tool(SUPPORT, Mount(STORE), "guidelines") as support:
            for command in READS:
                support.call(command)
        yield writes, _store_calls(recorder.calls)


def _decide(simulator: Simulator | str, calls: list[Call], agent: str) -> dict[str, str]:
    if isinstance(simulator, str):
        pytest.fail(simulator, pytrace=False)
    identity = [policy("agent-access"), policy("store-read"), policy("store-write")]
    decisions = {}
    for action, resource, context in s3_requests(calls):
        in_memory_bucket = resource == BUCKET_ARN or resource.startswith(BUCKET_ARN + "/")
        decision = simulator.evaluate(
            principal=f"arn:aws:sts::{ACCOUNT}:assumed-role/{AGENT_ROLE_NAME}/s3memory-{agent}",
            action=action,
            resource=resource,
            account=ACCOUNT,
            context={"aws:SecureTransport": "true", "aws:PrincipalTag/s3memory-agent": agent, **dict(context)},
            identity_policies=identity,
            resource_policy=policy("bucket" if in_memory_bucket else "keystore-bucket"),
        )
        assert decision.ignored_context_keys == [], (action, resource)
        decisions[f"{action} {resource}" + "".join(f" {k}={v}" for k, v in context)] = decision.result
    return decisions


def test_the_recording_reached_the_store_and_its_keystore(recorded: tuple[list[Call], list[Call]]) -> None:
    writes, reads = recorded
    operations = {c.operation for c in writes}
    assert {"PutObject", "GetObject", "ListObjectsV2", "GenerateDataKey"} <= operations
    assert any(c.params.get("Bucket") == KEYSTORE_BUCKET for c in writes)
    assert {c.operation for c in reads} <= {"ListObjectsV2", "GetObject", "Decrypt"}
    assert {"ListObjectsV2", "GetObject", "Decrypt"} <= {c.operation for c in reads}


def test_a_writer_may_make_every_request_of_its_edits(simulator: Simulator | str, recorded: Any) -> None:
    decisions = _decide(simulator, recorded[0], CURATOR)
    assert len(decisions) >= 10
    assert {request: result for request, result in decisions.items() if result != "Allowed"} == {}


def test_a_reader_may_read_but_not_make_a_writers_requests(simulator: Simulator | str, recorded: Any) -> None:
    reads = _decide(simulator, recorded[1], SUPPORT)
    assert {request: result for request, result in reads.items() if result != "Allowed"} == {}
    writes = _decide(simulator, recorded[0], SUPPORT)
    refused = {r for r, result in writes.items() if result != "Allowed"}
    changing = {r for r in writes if r.split()[0] in {"s3:PutObject", "s3:DeleteObject", "s3:PutObjectTagging"}}
    assert len(changing) >= 5
    assert refused == changing  # every put, tag, delete and key claim; its reads pass


def test_an_agent_with_no_grant_can_do_nothing_on_the_store(simulator: Simulator | str, recorded: Any) -> None:
    for calls in recorded:
        decisions = _decide(simulator, calls, OUTSIDER)
        assert decisions
        assert {request: result for request, result in decisions.items() if result == "Allowed"} == {}


def _string_like(patterns: list[str], value: str) -> bool:
    return any(re.fullmatch("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in p), value)
               for p in patterns)  # fmt: skip


def _kms_allowed(agent: str, operation: str, context: dict[str, str]) -> bool:
    """The store statements' KMS grants and the key policy's denies, for the agent role's session."""
    key_policy = policy("data-key")
    (others,) = [s for s in key_policy["Statement"] if s["Sid"] == "DenyAgentDataKeysOfOtherAgents"]
    owner = context["s3memory:agent"]
    not_own = owner != agent
    not_store = not _string_like([others["Condition"]["StringNotLike"]["kms:EncryptionContext:s3memory:agent"]], owner)
    if not_own and not_store:
        return False
    for name in ("store-read", "store-write"):
        for statement in policy(name)["Statement"]:
            condition = statement["Condition"]
            if (
                statement["Action"] == f"kms:{operation}"
                and condition.get("StringEquals", {}).get("kms:EncryptionContext:s3memory:agent") == owner
                and _string_like(condition["StringLike"]["aws:PrincipalTag/s3memory-agent"], agent)
            ):
                return True
    return False


def test_kms_requests_of_the_store_are_allowed_only_as_granted(recorded: Any) -> None:
    writes, reads = recorded
    kms = [(c.operation, c.params["EncryptionContext"]) for c in writes + reads if c.service == "kms"]
    assert {operation for operation, _ in kms} == {"GenerateDataKey", "Decrypt"}
    assert [op for op, ctx in kms if op == "GenerateDataKey" and not _kms_allowed(CURATOR, op, ctx)] == []
    assert [op for op, ctx in kms if op == "Decrypt" and not _kms_allowed(SUPPORT, op, ctx)] == []
    assert [op for op, ctx in kms if op == "GenerateDataKey" and _kms_allowed(SUPPORT, op, ctx)] == []
    assert [op for op, ctx in kms if _kms_allowed(OUTSIDER, op, ctx)] == []
