"""The IAM actions the library really uses are exactly what the agent-access role grants.

Every memory command runs through `S3MemoryTool` with `KmsKeys` on moto; `before-call.*.*`
hooks record each botocore operation with its parameters. Each operation maps to IAM actions
through an explicit table (an operation missing from it fails the test: decide its IAM action
and add it, or stop using it). Then:

* the actions used equal the actions the rendered agent-access policy grants, and that policy
  names no wildcard action: nothing is missing, nothing is spare;
* every recorded request stays in the agent's prefix and sends the agent's encryption context;
* every recorded S3 request, replayed through the IAM evaluator with the rendered role and
  bucket policies, is allowed for the agent's tagged session and refused for a sibling id.

Everything runs twice: with the branch keys in the memory bucket (no keystore bucket) and in a
separate keystore bucket, as the module deploys it (S3MEMORY_KEYSTORE_BUCKET).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from anthropic.lib.tools import ToolError
from moto import mock_aws

from s3memory import KmsKeys, S3MemoryTool
from tests.terraform.deploy import (
    ACCOUNT,
    AGENT_ROLE_NAME,
    BUCKET,
    BUCKET_ARN,
    KEYSTORE_BUCKET,
    PREFIX,
    policy,
)
from tests.terraform.simulator import Simulator

AGENT = "agent-42"
SIBLING = "agent-4"
REGION = "us-east-1"

# botocore operation → the IAM actions it needs (S3 and KMS service authorization references).
IAM_ACTIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("s3", "GetObject"): ("s3:GetObject",),
    ("s3", "HeadObject"): ("s3:GetObject",),
    ("s3", "PutObject"): ("s3:PutObject",),
    ("s3", "PutObjectTagging"): ("s3:PutObjectTagging",),
    ("s3", "DeleteObject"): ("s3:DeleteObject",),
    ("s3", "DeleteObjects"): ("s3:DeleteObject",),  # authorized per key
    ("s3", "ListObjectsV2"): ("s3:ListBucket",),
    ("kms", "GenerateDataKey"): ("kms:GenerateDataKey",),
    ("kms", "Decrypt"): ("kms:Decrypt",),
}

EXPECTED_AGENT_ACTIONS = {
    "s3:GetObject",
    "s3:PutObject",
    "s3:PutObjectTagging",
    "s3:DeleteObject",
    "s3:ListBucket",
    "kms:GenerateDataKey",
    "kms:Decrypt",
}

COMMANDS: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/notes.txt", "file_text": "alpha\nbeta\n"},
    {"command": "create", "path": "/memories/projects/plan.md", "file_text": "# plan\n"},
    {"command": "create", "path": "/memories/projects/q3/goals.md", "file_text": "ship\n"},
    {"command": "view", "path": "/memories/notes.txt"},
    {"command": "view", "path": "/memories/notes.txt", "view_range": [1, 1]},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/projects"},
    {"command": "str_replace", "path": "/memories/notes.txt", "old_str": "beta", "new_str": "gamma"},
    {"command": "insert", "path": "/memories/notes.txt", "insert_line": 1, "insert_text": "inserted"},
    {"command": "rename", "old_path": "/memories/notes.txt", "new_path": "/memories/archive/notes.txt"},
    {"command": "rename", "old_path": "/memories/projects", "new_path": "/memories/old-projects"},
    {"command": "delete", "path": "/memories/archive/notes.txt"},
    {"command": "delete", "path": "/memories/old-projects"},
    {"command": "view", "path": "/memories"},
]
# Failing commands take their own paths through storage (conditional writes that lose, lookups).
FAILING_COMMANDS: list[dict[str, Any]] = [
    {"command": "create", "path": "/memories/keep.txt", "file_text": "x"},
    {"command": "create", "path": "/memories/keep.txt", "file_text": "again"},
    {"command": "view", "path": "/memories/missing.txt"},
    {"command": "str_replace", "path": "/memories/keep.txt", "old_str": "nope", "new_str": "y"},
    {"command": "rename", "old_path": "/memories/keep.txt", "new_path": "/memories/keep.txt/inside"},
    {"command": "delete", "path": "/memories/missing"},
]


@dataclass(frozen=True)
class Call:
    service: str
    operation: str
    params: dict[str, Any]


class Recorder:
    """Every botocore operation the clients send (`before-call.*.*`), with its API parameters."""

    def __init__(self, *clients: Any) -> None:
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._params = threading.local()
        for client in clients:
            client.meta.events.register("before-parameter-build.*.*", self._keep_params)
            client.meta.events.register("before-call.*.*", self._record)

    def _keep_params(self, params: dict[str, Any], **_: Any) -> None:
        self._params.value = dict(params)

    def _record(self, model: Any, **_: Any) -> None:
        params = getattr(self._params, "value", {})
        with self._lock:
            self.calls.append(Call(model.service_model.service_name, model.name, params))

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()


@dataclass
class Run:
    calls: list[Call]
    key_id: str
    keystore_bucket: str  # where the branch keys went: KEYSTORE_BUCKET, or BUCKET without one
    names: str  # how the tools stored file names: "plain" or "encrypted"


@pytest.fixture(
    scope="module",
    params=[(None, "plain"), (KEYSTORE_BUCKET, "plain"), (None, "encrypted"), (KEYSTORE_BUCKET, "encrypted")],
    ids=["keys-in-memory-bucket", "keystore-bucket", "hidden-names", "hidden-names-keystore-bucket"],
)
def run(request: pytest.FixtureRequest) -> Iterator[Run]:
    """Every command (and the failing ones) once, as agent-42, recorded; with file names stored
    plain or encrypted (which adds the name key and the mode entry to the keystore's writes)."""
    keystore_bucket: str | None = request.param[0]
    names: str = request.param[1]
    with mock_aws():
        s3 = boto3.client("s3", region_name=REGION)
        kms = boto3.client("kms", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        if keystore_bucket is not None:
            s3.create_bucket(Bucket=keystore_bucket)
        key_id = kms.create_key(Description="s3memory data keys")["KeyMetadata"]["Arn"]
        recorder = Recorder(s3, kms)

        def new_tool() -> S3MemoryTool:
            # A fresh KmsKeys has an empty data-key cache, as in a new process.
            keys = KmsKeys(key_id, kms_client=kms)
            return S3MemoryTool(
                bucket=BUCKET,
                agent_id=AGENT,
                keys=keys,
                s3_client=s3,
                prefix=PREFIX,
                keystore_bucket=keystore_bucket,
                track_access=True,  # the run covers the access tag's requests too
                names=names,  # type: ignore[arg-type]
            )

        with new_tool() as writer:
            for command in COMMANDS:
                writer.call(command)
            writer.call(FAILING_COMMANDS[0])
            for command in FAILING_COMMANDS[1:]:
                with pytest.raises(ToolError):
                    writer.call(command)
        with new_tool() as reader:  # reading what another process wrote unwraps its data key
            reader.call({"command": "view", "path": "/memories/keep.txt"})
            reader.call({"command": "str_replace", "path": "/memories/keep.txt", "old_str": "x", "new_str": "y"})
            reader.clear_all_memory()
        yield Run(list(recorder.calls), key_id, keystore_bucket or BUCKET, names)


def _actions(call: Call) -> tuple[str, ...]:
    actions = IAM_ACTIONS.get((call.service, call.operation))
    if actions is not None and call.operation == "PutObject" and call.params.get("Tagging"):
        actions += ("s3:PutObjectTagging",)  # a PutObject with tags needs both
    if actions is None:
        pytest.fail(
            f"{call.service}:{call.operation} has no IAM mapping: add it to IAM_ACTIONS (and, if agents need it, "
            "to terraform/policies/agent-access.json.tftpl and EXPECTED_AGENT_ACTIONS)",
            pytrace=False,
        )
    return actions


def _granted_actions(document: Any) -> set[str]:
    """What the Allow statements name (Deny statements only narrow them: no Allow uses NotAction)."""
    granted: set[str] = set()
    for statement in document["Statement"]:
        assert "NotAction" not in statement, statement["Sid"]
        if statement["Effect"] == "Deny":
            continue
        assert statement["Effect"] == "Allow", statement["Sid"]
        actions = statement["Action"]
        granted.update([actions] if isinstance(actions, str) else actions)
    return granted


def test_the_run_exercised_every_command(run: Run) -> None:
    operations = {(c.service, c.operation) for c in run.calls}
    assert ("s3", "ListObjectsV2") in operations
    assert ("s3", "PutObject") in operations
    assert ("kms", "GenerateDataKey") in operations
    assert ("kms", "Decrypt") in operations
    assert ("s3", "DeleteObjects") in operations or ("s3", "DeleteObject") in operations
    assert {c["command"] for c in COMMANDS} == {"view", "create", "str_replace", "insert", "rename", "delete"}


def test_every_operation_maps_to_iam_actions(run: Run) -> None:
    for call in run.calls:
        assert _actions(call)


def test_actions_used_are_all_granted_to_the_agent_role(run: Run) -> None:
    used = {action for call in run.calls for action in _actions(call)}
    granted = _granted_actions(policy("agent-access"))
    assert used - granted == set()


def test_agent_role_grants_exactly_the_actions_used(run: Run) -> None:
    used = {action for call in run.calls for action in _actions(call)}
    assert used == EXPECTED_AGENT_ACTIONS
    assert _granted_actions(policy("agent-access")) == EXPECTED_AGENT_ACTIONS


def test_agent_role_names_no_wildcard_action() -> None:
    for action in _granted_actions(policy("agent-access")):
        assert "*" not in action
        assert "?" not in action


def _keys_of(call: Call) -> list[str]:
    if call.operation == "DeleteObjects":
        return [entry["Key"] for entry in call.params["Delete"]["Objects"]]
    if call.operation == "ListObjectsV2":
        return [call.params["Prefix"]]
    return [call.params["Key"]]


KEYSTORE_FOLDER = f"{PREFIX}{AGENT}/.s3memory/keys/"


def test_every_s3_request_stays_in_the_agent_prefix(run: Run) -> None:
    s3_calls = [c for c in run.calls if c.service == "s3"]
    assert s3_calls
    for call in s3_calls:
        assert call.params["Bucket"] in (BUCKET, run.keystore_bucket)
        for key in _keys_of(call):
            assert key.startswith(f"{PREFIX}{AGENT}/"), (call.operation, key)
            if call.params["Bucket"] != BUCKET:  # the keystore bucket holds branch keys only
                assert key.startswith(KEYSTORE_FOLDER), (call.operation, key)


def test_the_run_reached_the_keystore(run: Run) -> None:
    keystore_calls = [
        c for c in run.calls if c.service == "s3" and any(k.startswith(KEYSTORE_FOLDER) for k in _keys_of(c))
    ]
    assert {c.params["Bucket"] for c in keystore_calls} == {run.keystore_bucket}
    assert "PutObject" in {c.operation for c in keystore_calls}


def test_the_keystore_writes_are_those_of_the_name_mode(run: Run) -> None:
    """With hidden names the agent also creates its name key (generation 0) and the entry of its
    mode; every one of them is checked against the policies below like the branch key's."""
    written = sorted(
        key.removeprefix(KEYSTORE_FOLDER).split("-")[0].split(".00")[0]
        for call in run.calls
        if call.service == "s3" and call.operation == "PutObject"
        for key in _keys_of(call)
        if key.startswith(KEYSTORE_FOLDER)
    )
    branch_key = ["00000001", "00000001"]  # the claim and the index entry
    expected = ["00000000", "00000000", *branch_key, "names"] if run.names == "encrypted" else branch_key
    assert written == expected


def test_the_agent_only_creates_branch_keys(run: Run) -> None:
    """Every write to the keystore is create-only (If-None-Match: *), nothing there is deleted:
    what the policies' `s3:if-none-match` conditions require."""
    for call in run.calls:
        if call.service != "s3" or call.operation == "ListObjectsV2":
            continue
        if any(key.startswith(KEYSTORE_FOLDER) for key in _keys_of(call)):
            assert call.operation in ("GetObject", "HeadObject", "PutObject"), call.operation
            if call.operation == "PutObject":
                assert call.params.get("IfNoneMatch") == "*", call.params["Key"]


def test_every_kms_request_sends_the_agent_encryption_context(run: Run) -> None:
    """`s3memory:agent` is the agent's own id (what the role and key policies bind to the tag);
    the only other key allowed is the branch id of format v2."""
    kms_calls = [c for c in run.calls if c.service == "kms"]
    assert kms_calls
    for call in kms_calls:
        context = call.params["EncryptionContext"]
        assert context["s3memory:agent"] == AGENT, call.operation
        assert set(context) <= {"s3memory:agent", "s3memory:branch"}, call.operation


def _string_like(pattern: str, value: str) -> bool:
    """IAM's StringLike: `*` any run of characters, `?` one character, the rest literal."""
    return (
        re.fullmatch("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), value)
        is not None
    )


def test_every_data_key_the_agent_asks_for_passes_the_key_policys_generation_limit(run: Run) -> None:
    """The key policy denies the agent role a GenerateDataKey whose `s3memory:branch` is not
    StringLike its pattern (the simulator drops KMS context keys, so it is evaluated here): every
    key the library asks for passes, a far generation or a missing branch would not."""
    (deny,) = [s for s in policy("data-key")["Statement"] if s["Sid"] == "DenyAgentBranchKeysBeyondGeneration9999"]
    pattern = deny["Condition"]["StringNotLike"]["kms:EncryptionContext:s3memory:branch"]
    generated = [c.params["EncryptionContext"] for c in run.calls if c.operation == "GenerateDataKey"]
    assert generated
    assert [
        c.get("s3memory:branch", "") for c in generated if not _string_like(pattern, c.get("s3memory:branch", ""))
    ] == []
    far = [f"{n:08d}-0a9843cf5e52de04" for n in (10000, 99999999)]
    assert [_string_like(pattern, branch) for branch in ["00009999-0a9843cf5e52de04", *far, ""]] == [
        True,
        False,
        False,
        False,
    ]


S3Request = tuple[str, str, tuple[tuple[str, str], ...]]


def _s3_requests(run: Run) -> list[S3Request]:
    """(IAM action, resource ARN, condition context) of every S3 request of the run, deduplicated."""
    return s3_requests(run.calls)


def s3_requests(calls: list[Call]) -> list[S3Request]:
    """(IAM action, resource ARN, condition context) of every S3 request of `calls`, deduplicated."""
    requests: set[S3Request] = set()
    for call in calls:
        if call.service != "s3":
            continue
        bucket_arn = f"arn:aws:s3:::{call.params['Bucket']}"
        for action in _actions(call):
            if call.operation == "ListObjectsV2":
                requests.add((action, bucket_arn, (("s3:prefix", call.params["Prefix"]),)))
            else:
                # The If-None-Match header reaches IAM as the condition key s3:if-none-match.
                # (a key of s3:PutObject only: the tagging half of a tagged PutObject does not see it).
                conditional = "IfNoneMatch" in call.params and action == "s3:PutObject"
                headers = (("s3:if-none-match", call.params["IfNoneMatch"]),) if conditional else ()
                requests.update((action, f"{bucket_arn}/{key}", headers) for key in _keys_of(call))
    return sorted(requests)


def _decisions(simulator: Simulator | str, run: Run, tag: str) -> dict[tuple[str, str], str]:
    if isinstance(simulator, str):
        pytest.fail(simulator, pytrace=False)
    decisions = {}
    for action, resource, context in _s3_requests(run):
        in_keystore_bucket = resource.split("/")[0] != BUCKET_ARN
        decision = simulator.evaluate(
            principal=f"arn:aws:sts::{ACCOUNT}:assumed-role/{AGENT_ROLE_NAME}/s3memory-{tag}",
            action=action,
            resource=resource,
            account=ACCOUNT,
            context={
                "aws:SecureTransport": "true",
                "aws:PrincipalTag/s3memory-agent": tag,
                **dict(context),
            },
            identity_policies=[policy("agent-access")],
            resource_policy=policy("keystore-bucket" if in_keystore_bucket else "bucket"),
        )
        assert decision.ignored_context_keys == [], (action, resource, decision.ignored_context_keys)
        decisions[(action, resource + "".join(f" {k}={v}" for k, v in context))] = decision.result
    return decisions


def test_every_recorded_s3_request_is_allowed_for_the_agents_session(simulator: Simulator | str, run: Run) -> None:
    decisions = _decisions(simulator, run, AGENT)
    assert len(decisions) >= 5
    assert {request: result for request, result in decisions.items() if result != "Allowed"} == {}


def test_every_recorded_s3_request_is_refused_for_a_sibling_agent(simulator: Simulator | str, run: Run) -> None:
    decisions = _decisions(simulator, run, SIBLING)
    assert len(decisions) >= 5
    assert {request: result for request, result in decisions.items() if result != "ExplicitlyDenied"} == {}
