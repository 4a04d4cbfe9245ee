"""The operator policy covers what `s3memory history`, `show`, `restore`, `redact` and `prune` send.

The commands run in process (`s3memory.cli.main`) on moto against a versioned bucket and a
separate keystore bucket, with S3MEMORY_TRACK_ACCESS on (restore's writes then carry the access
tag); every request is recorded (tests/terraform/recording.py) and mapped to its IAM action the
way S3 authorizes it. Then:

* each command's S3 requests, replayed through the IAM evaluator with the rendered operator
  policy and the bucket's own policy, are all Allowed;
* the actions the version commands use are exactly the expected ones, and all granted;
* their KMS requests carry the `s3memory:agent` context the operator's KMS grant requires
  (the evaluator ignores encryption-context keys, so this is checked on the requests);
* the same version requests made by an agent's tagged session are refused: the agent role has
  no `s3:DeleteObjectVersion`, `s3:GetObjectVersion`, `s3:ListBucketVersions` or
  `s3:GetBucketVersioning`, and the bucket policy denies them even to a widened role.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import boto3
import pytest
from moto import mock_aws

from s3memory import KmsKeys, S3MemoryTool
from s3memory.cli import main
from tests.support import enable_versioning
from tests.terraform.deploy import (
    ACCOUNT,
    AGENT_ROLE_NAME,
    BUCKET,
    BUCKET_ARN,
    DATA_KEY_ARN,
    KEYSTORE_BUCKET,
    KEYSTORE_BUCKET_ARN,
    OPERATOR_ROLE_ARN,
    PREFIX,
    policy,
)
from tests.terraform.recording import Call, actions_used, granted_actions, iam_requests, kms_action, recording
from tests.terraform.simulator import Simulator

ALLOWED, IMPLICIT, EXPLICIT = "Allowed", "ImplicitlyDenied", "ExplicitlyDenied"
AGENT = "alice"
REGION = "us-east-1"
WIDE_S3 = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}

# What each command sends (IAM actions), on a versioned bucket with a keystore bucket.
EXPECTED = {
    "history": {
        "s3:GetBucketVersioning", "s3:ListBucketVersions", "s3:GetObjectVersion", "s3:ListBucket", "kms:Decrypt",
    },
    "show": {"s3:GetObjectVersion", "s3:ListBucket", "kms:Decrypt"},
    "restore": {
        "s3:GetBucketVersioning", "s3:ListBucketVersions", "s3:GetObjectVersion", "s3:ListBucket", "s3:GetObject",
        "s3:PutObject", "s3:PutObjectTagging", "s3:DeleteObject", "kms:Decrypt", "s3:GetBucketObjectLockConfiguration",
    },
    # --all-versions reads each version's sealed attribution (renames to follow): a header and its key
    "redact": {
        "s3:ListBucketVersions", "s3:GetObjectVersion", "s3:DeleteObjectVersion", "kms:Decrypt",
        "s3:GetBucketObjectLockConfiguration",
    },
    # restore, redact and prune read the bucket's Object Lock configuration once, before anything else
    "prune": {"s3:ListBucket", "s3:GetObject", "s3:GetObjectTagging", "s3:DeleteObject",
              "s3:GetBucketObjectLockConfiguration"},
}  # fmt: skip
# Commands that need no key may also list the agent's keystore folder once, to learn whether its
# file names are stored encrypted (how to show them); nothing else may appear.
MAY_ALSO = {"s3:ListBucket"}
VERSION_ACTIONS = {"s3:GetBucketVersioning", "s3:ListBucketVersions", "s3:GetObjectVersion", "s3:DeleteObjectVersion"}


def _cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue() + err.getvalue()


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, list[Call]]]:
    """Each command once, as the operator; {command: the calls it sent}."""
    with mock_aws(), pytest.MonkeyPatch.context() as patch:
        s3 = boto3.client("s3", region_name=REGION)
        kms = boto3.client("kms", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        s3.create_bucket(Bucket=KEYSTORE_BUCKET)
        enable_versioning(s3, BUCKET)
        key_arn = kms.create_key(Description="s3memory data keys")["KeyMetadata"]["Arn"]

        def tool() -> S3MemoryTool:
            keys = KmsKeys(key_arn, kms_client=kms)
            return S3MemoryTool(
                bucket=BUCKET, agent_id=AGENT, keys=keys, s3_client=s3, prefix=PREFIX, keystore_bucket=KEYSTORE_BUCKET
            )

        past = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(days=10)
        with patch.context() as clock, tool() as agent:
            clock.setattr("moto.s3.models.utcnow", lambda: past)  # written 10 days ago
            for name, text in (("a", "one"), ("b", "bee"), ("d", "old")):
                agent.call({"command": "create", "path": f"/memories/{name}.md", "file_text": f"{text}\n"})
        with tool() as agent:
            agent.call({"command": "str_replace", "path": "/memories/a.md", "old_str": "one", "new_str": "two"})
            agent.call({"command": "create", "path": "/memories/c.md", "file_text": "new\n"})
            agent.call({"command": "delete", "path": "/memories/b.md"})
        first_a = s3.list_object_versions(Bucket=BUCKET, Prefix=f"{PREFIX}{AGENT}/a.md")["Versions"][-1]["VersionId"]
        five_days_ago = (datetime.now(timezone.utc) - timedelta(days=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
        for name, value in {
            "S3MEMORY_BUCKET": BUCKET,
            "S3MEMORY_KEYSTORE_BUCKET": KEYSTORE_BUCKET,
            "S3MEMORY_PREFIX": PREFIX,
            "S3MEMORY_KMS_KEY_ID": key_arn,
            "S3MEMORY_REGION": REGION,
            "S3MEMORY_TRACK_ACCESS": "true",
        }.items():
            patch.setenv(name, value)
        commands = {
            "history": ["history", "--agent", AGENT, "--json", "-q"],
            "show": ["show", "--agent", AGENT, "/memories/a.md", "--version", first_a],
            # a.md back to "one", b.md written again, c.md (created since) deleted
            "restore": ["restore", "--agent", AGENT, "--at", five_days_ago, "-q", "--yes"],
            "redact": ["redact", "--agent", AGENT, "/memories/c.md", "--all-versions", "--yes"],
            # d.md: written 10 days ago, never read since (no access tag)
            "prune": ["prune", "--agent", AGENT, "--not-accessed-for", "1d", "-q", "--yes"],
        }
        recorded: dict[str, list[Call]] = {}
        with recording(patch) as recorder:
            for name, argv in commands.items():
                code, output = _cli(*argv)
                assert code == 0, (name, output)
                recorded[name] = recorder.take()
        yield recorded


def _sim(simulator: Simulator | str) -> Simulator:
    if isinstance(simulator, str):
        pytest.fail(simulator, pytrace=False)
    return simulator


def _resource_policy(resource: str) -> Any:
    return policy("keystore-bucket" if resource.split("/")[0] == KEYSTORE_BUCKET_ARN else "bucket")


@pytest.mark.parametrize("command", list(EXPECTED))
def test_each_command_sends_exactly_the_expected_actions(runs: dict[str, list[Call]], command: str) -> None:
    used = actions_used(runs[command])
    assert EXPECTED[command] <= used <= EXPECTED[command] | MAY_ALSO


@pytest.mark.parametrize("command", list(EXPECTED))
def test_the_operator_policy_grants_every_action_used(runs: dict[str, list[Call]], command: str) -> None:
    assert actions_used(runs[command]) - granted_actions(policy("operator")) == set()


@pytest.mark.parametrize("command", list(EXPECTED))
def test_every_recorded_request_is_allowed_for_the_operator(
    simulator: Simulator | str, runs: dict[str, list[Call]], command: str
) -> None:
    requests = iam_requests(runs[command])
    assert requests
    decisions = {}
    for action, resource, context in requests:
        decision = _sim(simulator).evaluate(
            principal=OPERATOR_ROLE_ARN,
            action=action,
            resource=resource,
            account=ACCOUNT,
            context={"aws:SecureTransport": "true", **dict(context)},
            identity_policies=[policy("operator")],
            resource_policy=_resource_policy(resource),
        )
        assert decision.ignored_context_keys == [], (action, resource)
        decisions[(action, resource, context)] = decision.result
    assert {request: result for request, result in decisions.items() if result != ALLOWED} == {}


@pytest.mark.parametrize("command", ["history", "show", "restore"])
def test_kms_requests_carry_the_agent_context_the_operator_grant_requires(
    runs: dict[str, list[Call]], command: str
) -> None:
    kms_calls = [call for call in runs[command] if call.service == "kms"]
    assert kms_calls
    (grant,) = [s for s in policy("operator")["Statement"] if s["Sid"] == "UnwrapAndRewrapDataKeysOfAnyAgent"]
    assert grant["Resource"] == DATA_KEY_ARN
    assert grant["Condition"] == {"Null": {"kms:EncryptionContext:s3memory:agent": "false"}}
    for call in kms_calls:
        assert kms_action(call) in grant["Action"]
        assert call.params["EncryptionContext"]["s3memory:agent"] == AGENT, call.operation


def test_the_version_commands_reach_the_version_actions(runs: dict[str, list[Call]]) -> None:
    """The runs exercise every version action, so the agent checks below have something to refuse."""
    used = set().union(*(actions_used(runs[c]) for c in ("history", "show", "restore", "redact")))
    assert used >= VERSION_ACTIONS


@pytest.mark.parametrize("bucket_policy", [False, True], ids=["role", "with-bucket-policy"])
def test_an_agent_session_cannot_make_the_version_requests(
    simulator: Simulator | str, runs: dict[str, list[Call]], bucket_policy: bool
) -> None:
    """Alice's own tagged session, on her own prefix: refused by the role (nothing allows it) and,
    with the bucket policy, explicitly, even with the role widened to all of S3."""
    requests = [
        (action, resource, context)
        for command in ("history", "show", "restore", "redact")
        for action, resource, context in iam_requests(runs[command])
        if action in VERSION_ACTIONS
    ]
    assert {action for action, _, _ in requests} == VERSION_ACTIONS
    decisions = {}
    for action, resource, context in requests:
        decision = _sim(simulator).evaluate(
            principal=f"arn:aws:sts::{ACCOUNT}:assumed-role/{AGENT_ROLE_NAME}/s3memory-{AGENT}",
            action=action,
            resource=resource,
            account=ACCOUNT,
            context={"aws:SecureTransport": "true", "aws:PrincipalTag/s3memory-agent": AGENT, **dict(context)},
            identity_policies=[WIDE_S3 if bucket_policy else policy("agent-access")],
            resource_policy=policy("bucket") if bucket_policy else None,
        )
        decisions[(action, resource)] = decision.result
    expected = EXPLICIT if bucket_policy else IMPLICIT
    assert {request: result for request, result in decisions.items() if result != expected} == {}


# -- the operator stays inside the prefix and out of bucket administration -----------------------


@pytest.mark.parametrize(
    ("action", "resource"),
    [
        ("s3:GetObjectVersion", f"{BUCKET_ARN}/other-app/notes.txt"),
        ("s3:DeleteObjectVersion", f"{BUCKET_ARN}/other-app/notes.txt"),
        ("s3:GetObjectTagging", f"{BUCKET_ARN}/other-app/notes.txt"),
        ("s3:PutObjectTagging", f"{BUCKET_ARN}/other-app/notes.txt"),
        ("s3:GetBucketVersioning", "arn:aws:s3:::another-bucket"),
        ("s3:PutBucketVersioning", BUCKET_ARN),
        ("s3:PutLifecycleConfiguration", BUCKET_ARN),
        ("s3:GetObjectVersion", "arn:aws:s3:::another-bucket/agents/alice/notes.txt"),
    ],
)
def test_the_operator_reaches_nothing_else(simulator: Simulator | str, action: str, resource: str) -> None:
    decision = _sim(simulator).evaluate(
        principal=OPERATOR_ROLE_ARN,
        action=action,
        resource=resource,
        account=ACCOUNT,
        context={"aws:SecureTransport": "true"},
        identity_policies=[policy("operator")],
    )
    assert decision.result == IMPLICIT


def test_the_operator_lists_versions_only_under_the_prefix(simulator: Simulator | str) -> None:
    def listing(prefix: str) -> str:
        return (
            _sim(simulator)
            .evaluate(
                principal=OPERATOR_ROLE_ARN,
                action="s3:ListBucketVersions",
                resource=BUCKET_ARN,
                account=ACCOUNT,
                context={"aws:SecureTransport": "true", "s3:prefix": prefix},
                identity_policies=[policy("operator")],
                resource_policy=policy("bucket"),
            )
            .result
        )

    assert listing(f"{PREFIX}{AGENT}/a.md") == ALLOWED
    assert listing("other-app/") == IMPLICIT
