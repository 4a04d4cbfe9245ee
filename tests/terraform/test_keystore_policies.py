"""Branch keys (object format v2) under the rendered policies, evaluated by @cloud-copilot/iam-simulate.

An agent's keystore is `<prefix><agent>/.s3memory/keys/`: in the module's keystore bucket
(S3MEMORY_KEYSTORE_BUCKET), or in the memory bucket when the library runs without one. The agent
reads and lists its own keys and creates new ones with `If-None-Match: *` (the IAM condition key
`s3:if-none-match`); it never overwrites or deletes them and never reaches another agent's. The
operator's rotate, rewrap, reseal and shred do overwrite and delete them.

Each case states the exact decision, as in test_policies.py: Allowed, ImplicitlyDenied (nothing
allows it) or ExplicitlyDenied (a Deny statement matches). Every case runs with the agent-access
role policy alone and with the bucket's policy as well ("bucket policy" below), since each must
hold by itself.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.terraform.deploy import (
    ACCOUNT,
    AGENT_ROLE_NAME,
    AGENT_TAG_VARIABLE,
    BUCKET_ARN,
    DATA_KEY_ARN,
    KEYSTORE_BUCKET_ARN,
    OPERATOR_ROLE_ARN,
    PREFIX,
    SSE_KEY_ARN,
    policy,
)
from tests.terraform.simulator import Decision, Simulator

ALLOWED, IMPLICIT, EXPLICIT = "Allowed", "ImplicitlyDenied", "ExplicitlyDenied"
WIDE_S3 = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
CREATE_ONLY = {"s3:if-none-match": "*"}  # what `If-None-Match: *` puts in the request context

AGENT, OTHER, SIBLING = "agent-a", "agent-b", "agent"  # SIBLING: a prefix of AGENT's id
CLAIM = "00000001"
INDEX_ENTRY = "00000001-0a9843cf5e52de04.1795438800.aws-kms.MmQzZWY5OTUtOTEwZC00YTBi"
# Where an agent's keystore can be: (bucket ARN, resource policy of that bucket).
LOCATIONS = {
    "keystore-bucket": (KEYSTORE_BUCKET_ARN, "keystore-bucket"),
    "memory-bucket": (BUCKET_ARN, "bucket"),
}


def folder(agent: str) -> str:
    return f"{PREFIX}{agent}/.s3memory/keys/"


def key_arn(bucket_arn: str, agent: str, name: str = CLAIM) -> str:
    return f"{bucket_arn}/{folder(agent)}{name}"


class Keystore:
    """Requests against one keystore location, by an agent session (tagged or not) or the operator."""

    def __init__(self, simulator: Simulator | str, location: str, with_bucket_policy: bool) -> None:
        self._simulator = simulator
        self.bucket_arn, self._policy_name = LOCATIONS[location]
        self.location = location
        self.with_bucket_policy = with_bucket_policy

    @property
    def sim(self) -> Simulator:
        # Failing here, inside the test, reports FAILED (with the setup hint), never a skip.
        if isinstance(self._simulator, str):
            pytest.fail(self._simulator, pytrace=False)
        return self._simulator

    @property
    def bucket_policy(self) -> Any | None:
        return policy(self._policy_name) if self.with_bucket_policy else None

    def key(self, agent: str = AGENT, name: str = CLAIM) -> str:
        return key_arn(self.bucket_arn, agent, name)

    def agent(
        self,
        action: str,
        resource: str,
        *,
        tag: str | None = AGENT,
        context: dict[str, str] | None = None,
        identity: list[Any] | None = None,
        secure: bool = True,
    ) -> Decision:
        request_context: dict[str, str | list[str]] = {"aws:SecureTransport": "true" if secure else "false"}
        if tag is not None:
            request_context["aws:PrincipalTag/s3memory-agent"] = tag
        request_context.update(context or {})
        return self.sim.evaluate(
            principal=f"arn:aws:sts::{ACCOUNT}:assumed-role/{AGENT_ROLE_NAME}/s3memory-{tag or 'untagged'}",
            action=action,
            resource=resource,
            account=ACCOUNT,
            context=request_context,
            identity_policies=identity if identity is not None else [policy("agent-access")],
            resource_policy=self.bucket_policy,
        )

    def list(self, listed: str, *, tag: str = AGENT, identity: list[Any] | None = None) -> Decision:
        return self.agent("s3:ListBucket", self.bucket_arn, tag=tag, context={"s3:prefix": listed}, identity=identity)

    def operator(self, action: str, resource: str, context: dict[str, str] | None = None) -> Decision:
        return self.sim.evaluate(
            principal=OPERATOR_ROLE_ARN,
            action=action,
            resource=resource,
            account=ACCOUNT,
            context={"aws:SecureTransport": "true", **(context or {})},
            identity_policies=[policy("operator")],
            resource_policy=self.bucket_policy,
        )


@pytest.fixture(
    params=[
        ("keystore-bucket", False),
        ("keystore-bucket", True),
        ("memory-bucket", False),
        ("memory-bucket", True),
    ],
    ids=[
        "keystore-bucket-role",
        "keystore-bucket-with-bucket-policy",
        "memory-bucket-role",
        "memory-bucket-with-bucket-policy",
    ],
)
def ks(simulator: Simulator | str, request: pytest.FixtureRequest) -> Keystore:
    location, with_bucket_policy = request.param
    return Keystore(simulator, location, with_bucket_policy)


@pytest.fixture(params=[False, True], ids=["role", "with-bucket-policy"])
def keystore_bucket(simulator: Simulator | str, request: pytest.FixtureRequest) -> Keystore:
    return Keystore(simulator, "keystore-bucket", request.param)


# -- the evaluator sees the If-None-Match condition key ------------------------------------------


@pytest.mark.parametrize("location", LOCATIONS)
def test_evaluator_honours_the_if_none_match_condition_key(simulator: Simulator | str, location: str) -> None:
    """Pins that `s3:if-none-match` is evaluated, not dropped like `kms:EncryptionContext:*` keys:
    the same request flips from denied to allowed with the key and nothing is ignored."""
    ks = Keystore(simulator, location, with_bucket_policy=True)
    with_key = ks.agent("s3:PutObject", ks.key(), context=CREATE_ONLY)
    without_key = ks.agent("s3:PutObject", ks.key())
    assert with_key.ignored_context_keys == []
    assert without_key.ignored_context_keys == []
    assert (with_key.result, without_key.result) == (ALLOWED, EXPLICIT)


# -- an agent and its own branch keys ------------------------------------------------------------


@pytest.mark.parametrize("name", [CLAIM, INDEX_ENTRY])
def test_agent_reads_its_own_branch_keys(ks: Keystore, name: str) -> None:
    assert ks.agent("s3:GetObject", ks.key(name=name)).result == ALLOWED


def test_agent_lists_its_own_keystore(ks: Keystore) -> None:
    assert ks.list(folder(AGENT)).result == ALLOWED


@pytest.mark.parametrize("name", [CLAIM, INDEX_ENTRY])
def test_agent_creates_its_own_branch_keys_with_if_none_match(ks: Keystore, name: str) -> None:
    assert ks.agent("s3:PutObject", ks.key(name=name), context=CREATE_ONLY).result == ALLOWED


@pytest.mark.parametrize("name", [CLAIM, INDEX_ENTRY])
def test_agent_cannot_write_its_branch_keys_without_if_none_match(ks: Keystore, name: str) -> None:
    """A PutObject without If-None-Match could overwrite a key: refused by an explicit Deny."""
    assert ks.agent("s3:PutObject", ks.key(name=name)).result == EXPLICIT


@pytest.mark.parametrize("name", [CLAIM, INDEX_ENTRY])
def test_agent_cannot_delete_its_own_branch_keys(ks: Keystore, name: str) -> None:
    assert ks.agent("s3:DeleteObject", ks.key(name=name)).result == EXPLICIT


def test_agent_cannot_delete_versions_of_its_own_branch_keys(ks: Keystore) -> None:
    # The role's Deny names DeleteObjectVersion too, on top of the role never granting it.
    assert ks.agent("s3:DeleteObjectVersion", ks.key()).result == EXPLICIT


# -- what an agent may claim (issue 21): no generation past 9999, no retirement -------------------


@pytest.mark.parametrize(
    "name",
    ["00000000", "00000001", "00009999", INDEX_ENTRY, "00009999-0a9843cf5e52de04.1.aws-kms.AAAA",
     "names.00000001.encrypted"],
)  # fmt: skip
def test_agent_creates_claims_up_to_generation_9999(ks: Keystore, name: str) -> None:
    assert ks.agent("s3:PutObject", ks.key(name=name), context=CREATE_ONLY).result == ALLOWED


@pytest.mark.parametrize(
    "name",
    ["99999999", "10000000", "01000000", "00100000", "00010000", "00010000-0a9843cf5e52de04.1.aws-kms.AAAA",
     "99999999-0a9843cf5e52de04.1.aws-kms.AAAA", "retired.00000001", "retired.99999999", "void.00000003",
     "names.00000002"],
)  # fmt: skip
def test_agent_cannot_claim_past_generation_9999_or_retire_keys(ks: Keystore, name: str) -> None:
    """A stolen agent credential cannot pin the agent to a far generation (issue 21 item 1: the
    library never makes a claim after a gap active, and IAM refuses generations past 9999, which
    at one rotation a day last 27 years), nor plant a retirement (`s3memory retire` is the operator's)
    or a void entry (`s3memory rotate`'s, which would unlink the active key as deleting it would), nor
    claim a name mode after the first (`s3memory migrate`'s: the agent holds the name key, so it could tag one)."""
    expected = IMPLICIT if ks.location == "keystore-bucket" else EXPLICIT
    assert ks.agent("s3:PutObject", ks.key(name=name), context=CREATE_ONLY).result == expected


@pytest.mark.parametrize("name", ["99999999", "retired.00000001", "void.00000003", "names.00000002"])
def test_operator_still_rotates_and_retires_past_the_agents_range(ks: Keystore, name: str) -> None:
    assert ks.operator("s3:PutObject", ks.key(name=name), context=CREATE_ONLY).result == ALLOWED


# -- other agents' branch keys -------------------------------------------------------------------


def test_agent_cannot_read_another_agents_branch_keys(ks: Keystore) -> None:
    expected = EXPLICIT if ks.with_bucket_policy else IMPLICIT
    assert ks.agent("s3:GetObject", ks.key(OTHER)).result == expected
    assert ks.agent("s3:GetObject", ks.key(OTHER, INDEX_ENTRY)).result == expected


def test_agent_cannot_list_another_agents_keystore(ks: Keystore) -> None:
    assert ks.list(folder(OTHER)).result == (EXPLICIT if ks.with_bucket_policy else IMPLICIT)


def test_agent_cannot_create_branch_keys_for_another_agent(ks: Keystore) -> None:
    decision = ks.agent("s3:PutObject", ks.key(OTHER), context=CREATE_ONLY)
    assert decision.result == (EXPLICIT if ks.with_bucket_policy else IMPLICIT)


def test_agent_cannot_overwrite_another_agents_branch_keys(ks: Keystore) -> None:
    assert ks.agent("s3:PutObject", ks.key(OTHER)).result == EXPLICIT


def test_agent_cannot_delete_another_agents_branch_keys(ks: Keystore) -> None:
    assert ks.agent("s3:DeleteObject", ks.key(OTHER)).result == EXPLICIT


def test_sibling_id_cannot_read_the_branch_keys_of_a_longer_id(ks: Keystore) -> None:
    """`agent` is not `agent-a`: its grant ends at `agents/agent/`."""
    decision = ks.agent("s3:GetObject", ks.key(AGENT), tag=SIBLING)
    assert decision.result == (EXPLICIT if ks.with_bucket_policy else IMPLICIT)


# -- the keystore bucket holds branch keys only --------------------------------------------------


@pytest.mark.parametrize("key", [f"{PREFIX}{AGENT}/notes.txt", f"{PREFIX}{AGENT}/.s3memory/intents/x", "other/x"])
def test_agent_reaches_nothing_in_the_keystore_bucket_but_its_keys(keystore_bucket: Keystore, key: str) -> None:
    expected = EXPLICIT if keystore_bucket.with_bucket_policy else IMPLICIT
    resource = f"{KEYSTORE_BUCKET_ARN}/{key}"
    assert keystore_bucket.agent("s3:GetObject", resource).result == expected
    assert keystore_bucket.agent("s3:PutObject", resource, context=CREATE_ONLY).result == expected


@pytest.mark.parametrize("listed", ["", PREFIX, f"{PREFIX}{AGENT}/", f"{PREFIX}{AGENT}/.s3memory/"])
def test_agent_lists_nothing_wider_than_its_keystore(keystore_bucket: Keystore, listed: str) -> None:
    expected = EXPLICIT if keystore_bucket.with_bucket_policy else IMPLICIT
    assert keystore_bucket.list(listed).result == expected


@pytest.mark.parametrize(
    ("action", "on_bucket"),
    [
        ("s3:GetObjectVersion", False),
        ("s3:PutObjectAcl", False),
        ("s3:RestoreObject", False),
        ("s3:ListBucketVersions", True),
        ("s3:PutLifecycleConfiguration", True),
        ("s3:PutReplicationConfiguration", True),
        ("s3:PutBucketPolicy", True),
    ],
)
def test_agent_has_no_other_action_on_the_keystore_bucket(
    keystore_bucket: Keystore, action: str, on_bucket: bool
) -> None:
    resource = KEYSTORE_BUCKET_ARN if on_bucket else keystore_bucket.key()
    decision = keystore_bucket.agent(action, resource, context={"s3:prefix": folder(AGENT)} if on_bucket else None)
    assert decision.result == (EXPLICIT if keystore_bucket.with_bucket_policy else IMPLICIT)


# -- the keystore bucket policy holds by itself --------------------------------------------------


@pytest.mark.parametrize(
    ("action", "resource", "context"),
    [
        ("s3:PutObject", key_arn(KEYSTORE_BUCKET_ARN, AGENT), None),
        ("s3:DeleteObject", key_arn(KEYSTORE_BUCKET_ARN, AGENT), None),
        ("s3:DeleteObjectVersion", key_arn(KEYSTORE_BUCKET_ARN, AGENT), None),
        ("s3:GetObject", key_arn(KEYSTORE_BUCKET_ARN, OTHER), None),
        ("s3:PutObject", key_arn(KEYSTORE_BUCKET_ARN, OTHER), CREATE_ONLY),
        ("s3:ListBucket", KEYSTORE_BUCKET_ARN, {"s3:prefix": PREFIX}),
        ("s3:ListBucketVersions", KEYSTORE_BUCKET_ARN, {"s3:prefix": folder(AGENT)}),
    ],
)
def test_keystore_bucket_policy_holds_if_the_role_is_widened_to_all_of_s3(
    simulator: Simulator | str, action: str, resource: str, context: dict[str, str] | None
) -> None:
    ks = Keystore(simulator, "keystore-bucket", with_bucket_policy=True)
    assert ks.agent(action, resource, context=context, identity=[WIDE_S3]).result == EXPLICIT


def test_keystore_bucket_policy_keeps_a_widened_role_to_reading_and_creating(simulator: Simulator | str) -> None:
    ks = Keystore(simulator, "keystore-bucket", with_bucket_policy=True)
    assert ks.agent("s3:GetObject", ks.key(), identity=[WIDE_S3]).result == ALLOWED
    assert ks.agent("s3:PutObject", ks.key(), identity=[WIDE_S3], context=CREATE_ONLY).result == ALLOWED


def test_memory_bucket_policy_stops_a_widened_role_overwriting_or_deleting_branch_keys(
    simulator: Simulator | str,
) -> None:
    ks = Keystore(simulator, "memory-bucket", with_bucket_policy=True)
    assert ks.agent("s3:PutObject", ks.key(), identity=[WIDE_S3]).result == EXPLICIT
    assert ks.agent("s3:DeleteObject", ks.key(), identity=[WIDE_S3]).result == EXPLICIT
    # ... and leaves its memory files alone.
    notes = f"{BUCKET_ARN}/{PREFIX}{AGENT}/notes.txt"
    assert ks.agent("s3:PutObject", notes, identity=[WIDE_S3]).result == ALLOWED
    assert ks.agent("s3:DeleteObject", notes, identity=[WIDE_S3]).result == ALLOWED


def test_keystore_bucket_policy_denies_a_session_without_the_agent_tag(simulator: Simulator | str) -> None:
    ks = Keystore(simulator, "keystore-bucket", with_bucket_policy=True)
    resource = key_arn(KEYSTORE_BUCKET_ARN, "")
    assert ks.agent("s3:GetObject", resource, tag=None, identity=[WIDE_S3]).result == EXPLICIT


def test_keystore_bucket_policy_denies_non_tls_requests(simulator: Simulator | str) -> None:
    ks = Keystore(simulator, "keystore-bucket", with_bucket_policy=True)
    assert ks.agent("s3:GetObject", ks.key(), secure=False).result == EXPLICIT
    assert ks.agent("s3:GetObject", ks.key(), context={"s3:TlsVersion": "1.1"}).result == EXPLICIT
    assert ks.operator("s3:GetObject", ks.key(), context={"aws:SecureTransport": "false"}).result == EXPLICIT


# -- what the memory files keep ------------------------------------------------------------------


@pytest.mark.parametrize("with_bucket_policy", [False, True], ids=["role", "with-bucket-policy"])
def test_the_branch_key_denies_leave_the_agents_memory_files_alone(
    simulator: Simulator | str, with_bucket_policy: bool
) -> None:
    """Memory files are still overwritten and deleted freely; only `.s3memory/keys/` is create-only."""
    ks = Keystore(simulator, "memory-bucket", with_bucket_policy)
    for key in ("notes.txt", ".s3memory/intents/rename-1.json", "keys/plan.md"):
        resource = f"{BUCKET_ARN}/{PREFIX}{AGENT}/{key}"
        assert ks.agent("s3:PutObject", resource).result == ALLOWED, key
        assert ks.agent("s3:DeleteObject", resource).result == ALLOWED, key


# -- the operator: rotate, rewrap, reseal, shred -------------------------------------------------


@pytest.mark.parametrize(
    "action", ["s3:GetObject", "s3:GetObjectVersion", "s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion"]
)
@pytest.mark.parametrize("agent", [AGENT, OTHER])
def test_operator_manages_every_agents_branch_keys(ks: Keystore, action: str, agent: str) -> None:
    """rotate and rewrap create and overwrite claims (no If-None-Match needed), rewrap deletes old
    index entries, shred deletes every version."""
    assert ks.operator(action, ks.key(agent)).result == ALLOWED
    assert ks.operator(action, ks.key(agent, INDEX_ENTRY)).result == ALLOWED


@pytest.mark.parametrize("action", ["s3:ListBucket", "s3:ListBucketVersions"])
@pytest.mark.parametrize("listed", [PREFIX, folder(AGENT)])
def test_operator_lists_keys_and_versions(ks: Keystore, action: str, listed: str) -> None:
    assert ks.operator(action, ks.bucket_arn, context={"s3:prefix": listed}).result == ALLOWED


@pytest.mark.parametrize("action", ["s3:GetObject", "s3:PutObject", "s3:DeleteObjectVersion"])
def test_operator_reaches_only_branch_keys_in_the_keystore_bucket(keystore_bucket: Keystore, action: str) -> None:
    for key in (f"{PREFIX}{AGENT}/notes.txt", "other-app/x"):
        assert keystore_bucket.operator(action, f"{KEYSTORE_BUCKET_ARN}/{key}").result == IMPLICIT, key


@pytest.mark.parametrize(
    "action", ["s3:PutBucketPolicy", "s3:PutLifecycleConfiguration", "s3:PutReplicationConfiguration"]
)
def test_operator_cannot_reconfigure_the_keystore_bucket(keystore_bucket: Keystore, action: str) -> None:
    assert keystore_bucket.operator(action, KEYSTORE_BUCKET_ARN).result == IMPLICIT


def test_operator_lists_nothing_outside_the_prefix_in_the_keystore_bucket(keystore_bucket: Keystore) -> None:
    decision = keystore_bucket.operator("s3:ListBucketVersions", KEYSTORE_BUCKET_ARN, context={"s3:prefix": ""})
    assert decision.result == IMPLICIT


# -- structure: what the evaluator cannot see (KMS encryption contexts) --------------------------


def _statement(document: Any, sid: str) -> Any:
    return next(s for s in document["Statement"] if s["Sid"] == sid)


def test_agent_policy_structure_of_the_keystore_grants() -> None:
    document = policy("agent-access")
    keys = f"{KEYSTORE_BUCKET_ARN}/{PREFIX}{AGENT_TAG_VARIABLE}/.s3memory/keys/*"
    in_memory_bucket = f"{BUCKET_ARN}/{PREFIX}*/.s3memory/keys/*"
    assert _statement(document, "ReadOwnBranchKeys") == {
        "Sid": "ReadOwnBranchKeys",
        "Effect": "Allow",
        "Action": "s3:GetObject",
        "Resource": keys,
    }
    assert _statement(document, "CreateOwnBranchKeysUpToGeneration9999") == {
        "Sid": "CreateOwnBranchKeysUpToGeneration9999",
        "Effect": "Allow",
        "Action": "s3:PutObject",
        "Resource": [keys.removesuffix("*") + "0000*", keys.removesuffix("*") + "names.????????.*"],
    }
    assert _statement(document, "ListOwnBranchKeys")["Condition"] == {
        "StringLike": {"s3:prefix": f"{PREFIX}{AGENT_TAG_VARIABLE}/.s3memory/keys/*"}
    }
    overwrite = _statement(document, "DenyBranchKeyWritesThatCouldOverwrite")
    assert overwrite["Effect"] == "Deny"
    assert overwrite["Resource"] == [f"{KEYSTORE_BUCKET_ARN}/*", in_memory_bucket]
    assert overwrite["Condition"] == {"Null": {"s3:if-none-match": "true"}}
    delete = _statement(document, "DenyDeletingBranchKeys")
    assert (delete["Effect"], delete["Resource"]) == ("Deny", [f"{KEYSTORE_BUCKET_ARN}/*", in_memory_bucket])
    assert "Condition" not in delete
    # The keystore bucket appears nowhere else but in the SSE key's S3 context.
    named = [s["Sid"] for s in document["Statement"] if KEYSTORE_BUCKET_ARN in str(s)]
    assert named == [
        "ReadOwnBranchKeys",
        "CreateOwnBranchKeysUpToGeneration9999",
        "ListOwnBranchKeys",
        "DenyBranchKeyWritesThatCouldOverwrite",
        "DenyDeletingBranchKeys",
        "BucketDefaultEncryptionThroughS3",
    ]


def test_agent_may_use_the_sse_key_for_its_keystore_through_s3_only() -> None:
    sse = _statement(policy("agent-access"), "BucketDefaultEncryptionThroughS3")
    assert sse["Resource"] == SSE_KEY_ARN
    assert "kms:ViaService" in sse["Condition"]["StringEquals"]
    contexts = sse["Condition"]["StringLike"]["kms:EncryptionContext:aws:s3:arn"]
    assert KEYSTORE_BUCKET_ARN in contexts
    assert f"{KEYSTORE_BUCKET_ARN}/{PREFIX}{AGENT_TAG_VARIABLE}/.s3memory/keys/*" in contexts


def test_only_the_key_policy_conditions_the_branch_context_key_and_only_for_new_agent_keys() -> None:
    """Branch keys add `s3memory:branch` to the context. No condition restricts the set of context
    keys (`kms:EncryptionContextKeys`), so the extra key passes for agents and the operator alike;
    one Deny of the key policy restricts the agent role's GenerateDataKey to generations 0-9999
    (the S3 claims it may make; see test_agent_actions for what the library sends)."""
    for name in ("agent-access", "data-key", "operator"):
        assert "kms:EncryptionContextKeys" not in str(policy(name)), name
    for name in ("agent-access", "operator"):
        assert "s3memory:branch" not in str(policy(name)), name
    key_policy = policy("data-key")
    (branch,) = [s for s in key_policy["Statement"] if "s3memory:branch" in str(s)]
    assert branch["Sid"] == "DenyAgentBranchKeysBeyondGeneration9999"
    assert (branch["Effect"], branch["Action"]) == ("Deny", "kms:GenerateDataKey")
    assert branch["Condition"] == {"StringNotLike": {"kms:EncryptionContext:s3memory:branch": "0000????-*"}}
    on_data_key = _statement(policy("agent-access"), "OwnAgentDataKeys")
    assert on_data_key["Resource"] == DATA_KEY_ARN
    assert on_data_key["Condition"] == {"StringEquals": {"kms:EncryptionContext:s3memory:agent": AGENT_TAG_VARIABLE}}
    operator_kms = _statement(policy("operator"), "UnwrapAndRewrapDataKeysOfAnyAgent")
    assert set(operator_kms["Action"]) >= {"kms:GenerateDataKey", "kms:Decrypt", "kms:ReEncryptFrom", "kms:ReEncryptTo"}
    assert operator_kms["Condition"] == {"Null": {"kms:EncryptionContext:s3memory:agent": "false"}}


def test_operator_policy_structure_of_the_keystore_grants() -> None:
    document = policy("operator")
    objects = _statement(document, "RotateRewrapAndShredBranchKeys")
    assert objects["Resource"] == f"{KEYSTORE_BUCKET_ARN}/{PREFIX}*/.s3memory/keys/*"
    assert objects["Action"] == [
        "s3:GetObject",
        "s3:GetObjectVersion",
        "s3:PutObject",
        "s3:DeleteObject",
        "s3:DeleteObjectVersion",
    ]
    listing = _statement(document, "ListAllBranchKeysAndVersions")
    assert listing["Resource"] == KEYSTORE_BUCKET_ARN
    assert listing["Action"] == ["s3:ListBucket", "s3:ListBucketVersions"]


# -- other prefixes render the same rules ----------------------------------------------------------


@pytest.mark.parametrize("prefix", ["", "team-a/agents/"])
@pytest.mark.parametrize("location", LOCATIONS)
def test_other_prefixes_keep_branch_keys_create_only(simulator: Simulator | str, prefix: str, location: str) -> None:
    if isinstance(simulator, str):
        pytest.fail(simulator, pytrace=False)
    bucket_arn, policy_name = LOCATIONS[location]

    def decide(action: str, agent: str, context: dict[str, str] | None = None) -> str:
        return simulator.evaluate(
            principal=f"arn:aws:sts::{ACCOUNT}:assumed-role/{AGENT_ROLE_NAME}/s3memory-{AGENT}",
            action=action,
            resource=f"{bucket_arn}/{prefix}{agent}/.s3memory/keys/{CLAIM}",
            account=ACCOUNT,
            context={"aws:SecureTransport": "true", "aws:PrincipalTag/s3memory-agent": AGENT, **(context or {})},
            identity_policies=[policy("agent-access", prefix)],
            resource_policy=policy(policy_name, prefix),
        ).result

    assert decide("s3:GetObject", AGENT) == ALLOWED
    assert decide("s3:PutObject", AGENT, CREATE_ONLY) == ALLOWED
    assert decide("s3:PutObject", AGENT) == EXPLICIT
    assert decide("s3:DeleteObject", AGENT) == EXPLICIT
    assert decide("s3:GetObject", OTHER) == EXPLICIT
