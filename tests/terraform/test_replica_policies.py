"""The replica side of replica_region (issue 36), proved with the IAM policy simulator.

replica.tf renders the agent-access, operator, bucket, keystore-bucket and SSE key templates a
second time with the replica's ARNs and region, and attaches the agent's as a managed policy to
the same role: an agent session must reach its own prefix, branch keys and data keys in the
replica region exactly as in the primary one, and no other agent's; the replication role may
replicate under the prefix only.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.terraform.deploy import (
    ACCOUNT,
    AGENT_ROLE_NAME,
    BUCKET_ARN,
    KEYSTORE_BUCKET_ARN,
    OPERATOR_ROLE_ARN,
    REPLICA_BUCKET_ARN,
    REPLICA_DATA_KEY_ARN,
    REPLICA_KEYSTORE_BUCKET_ARN,
    REPLICA_REGION,
    policy,
    replica_policy,
)
from tests.terraform.simulator import Simulator

ALLOWED = "Allowed"


def _sim(simulator: Simulator | str) -> Simulator:
    if isinstance(simulator, str):
        pytest.fail(simulator, pytrace=False)
    return simulator


def agent(
    sim: Simulator, action: str, resource: str, tag: str, *, resource_policy: Any = None, context: Any = None
) -> str:
    return sim.evaluate(
        principal=f"arn:aws:sts::{ACCOUNT}:assumed-role/{AGENT_ROLE_NAME}/s3memory-{tag}",
        action=action,
        resource=resource,
        account=ACCOUNT,
        context={"aws:SecureTransport": "true", "aws:PrincipalTag/s3memory-agent": tag, **(context or {})},
        identity_policies=[policy("agent-access"), replica_policy("agent-access")],
        resource_policy=resource_policy,
    ).result


@pytest.mark.parametrize(
    ("action", "resource", "policy_name"),
    [
        ("s3:GetObject", f"{REPLICA_BUCKET_ARN}/agents/alice/notes.md", "bucket"),
        ("s3:PutObject", f"{REPLICA_BUCKET_ARN}/agents/alice/notes.md", "bucket"),
        ("s3:DeleteObject", f"{REPLICA_BUCKET_ARN}/agents/alice/notes.md", "bucket"),
        ("s3:GetObject", f"{REPLICA_KEYSTORE_BUCKET_ARN}/agents/alice/.s3memory/keys/00000001", "keystore-bucket"),
    ],
)
def test_an_agent_reaches_its_own_files_and_keys_on_the_replica(
    simulator: Simulator | str, action: str, resource: str, policy_name: str
) -> None:
    sim = _sim(simulator)
    assert agent(sim, action, resource, "alice", resource_policy=replica_policy(policy_name)) == ALLOWED
    other = resource.replace("/alice/", "/bob/")
    assert agent(sim, action, other, "alice", resource_policy=replica_policy(policy_name)) != ALLOWED


def test_an_agent_unwraps_only_its_own_keys_with_the_replica_key() -> None:
    """Structural, as for the primary key (test_policies.py): the evaluator drops encryption-context
    keys, so it cannot decide this; the replica grant names the replica key and the agent's own context."""
    grants = [s for s in replica_policy("agent-access")["Statement"] if s["Sid"] == "OwnAgentDataKeys"]
    assert grants == [{
        "Sid": "OwnAgentDataKeys", "Effect": "Allow", "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
        "Resource": REPLICA_DATA_KEY_ARN,
        "Condition": {"StringEquals": {"kms:EncryptionContext:s3memory:agent": "${aws:PrincipalTag/s3memory-agent}"}},
    }]  # fmt: skip


def test_the_replica_grants_are_the_primary_ones_with_the_replica_arns() -> None:
    primary, replica = policy("agent-access"), replica_policy("agent-access")
    assert [s["Sid"] for s in replica["Statement"]] == [s["Sid"] for s in primary["Statement"]]
    assert BUCKET_ARN not in str(replica).replace(REPLICA_BUCKET_ARN, "").replace(REPLICA_KEYSTORE_BUCKET_ARN, "")
    assert f"s3.{REPLICA_REGION}.amazonaws.com" in str(replica)


def test_the_replication_role_replicates_under_the_prefix_only(simulator: Simulator | str) -> None:
    sim = _sim(simulator)
    role = f"arn:aws:iam::{ACCOUNT}:role/s3memory-replication"

    def decide(action: str, resource: str) -> str:
        return sim.evaluate(principal=role, action=action, resource=resource, account=ACCOUNT, context={},
                            identity_policies=[policy("replication")]).result  # fmt: skip

    assert decide("s3:ReplicateObject", f"{REPLICA_BUCKET_ARN}/agents/alice/notes.md") == ALLOWED
    assert decide("s3:ReplicateDelete", f"{BUCKET_ARN}/agents/alice/notes.md") == ALLOWED  # failback
    assert decide("s3:ReplicateObject", f"{REPLICA_BUCKET_ARN}/elsewhere/x") != ALLOWED
    assert decide("s3:DeleteObjectVersion", f"{REPLICA_BUCKET_ARN}/agents/alice/notes.md") != ALLOWED


@pytest.mark.parametrize(
    ("side", "buckets"),
    [("primary", (BUCKET_ARN, KEYSTORE_BUCKET_ARN)), ("replica", (REPLICA_BUCKET_ARN, REPLICA_KEYSTORE_BUCKET_ARN))],
)
def test_the_operator_reads_each_sides_replication_before_an_erase(
    simulator: Simulator | str, side: str, buckets: tuple[str, str]
) -> None:
    """`purge` and `shred` read the memory and keystore buckets' replication configuration first
    (S3 never replicates the deletion of a version): the operator may, on each side; an agent may not."""
    sim = _sim(simulator)
    operator_policy = policy("operator") if side == "primary" else replica_policy("operator")
    for bucket in buckets:
        decision = sim.evaluate(principal=OPERATOR_ROLE_ARN, action="s3:GetReplicationConfiguration",
                                resource=bucket, account=ACCOUNT, context={"aws:SecureTransport": "true"},
                                identity_policies=[operator_policy])  # fmt: skip
        assert decision.result == ALLOWED, bucket
        assert agent(sim, "s3:GetReplicationConfiguration", bucket, "alice") != ALLOWED, bucket
