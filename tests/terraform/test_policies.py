"""The rendered Terraform policies, evaluated by a real IAM evaluator (@cloud-copilot/iam-simulate).

Each case states the exact decision: Allowed, ImplicitlyDenied (nothing allows it) or
ExplicitlyDenied (a Deny statement matches). The agent-access role policy is checked on its own
(so it isolates agents by itself) and together with the bucket policy (which must not break the
legitimate requests, and must hold even if someone widens the role).

KMS: the evaluator drops `kms:EncryptionContext:*` keys from the request (it reports them in
`ignoredContextKeys`), so it cannot decide "alice's own context is allowed, bob's is refused".
What it can decide is checked with it (actions outside GenerateDataKey/Decrypt, sessions
without the agent tag, a request whose context it does not see); the binding of the context
to the agent tag is checked by structural assertions on the rendered JSON (see the
`test_kms_*_structure` tests), against the context the library actually sends.
"""

from __future__ import annotations

from typing import Any

import pytest

from s3memory.storage.keys import encryption_context
from tests.terraform.deploy import (
    ACCOUNT,
    AGENT_ROLE_ARN,
    AGENT_ROLE_NAME,
    AGENT_TAG_VARIABLE,
    BUCKET_ARN,
    DATA_KEY_ARN,
    KEYSTORE_BUCKET_ARN,
    LAMBDA_ROLE_NAME,
    OPERATOR_ROLE_ARN,
    PREFIX,
    REGION,
    SECRET_ARN,
    SSE_KEY_ARN,
    example_policy,
    policy,
)
from tests.terraform.simulator import Decision, Simulator

ALLOWED, IMPLICIT, EXPLICIT = "Allowed", "ImplicitlyDenied", "ExplicitlyDenied"
WIDE_S3 = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
WIDE_KMS = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "kms:*", "Resource": "*"}]}
LAMBDA_SESSION = f"arn:aws:sts::{ACCOUNT}:assumed-role/{LAMBDA_ROLE_NAME}/s3memory-agent"


def session_of(agent: str) -> str:
    return f"arn:aws:sts::{ACCOUNT}:assumed-role/{AGENT_ROLE_NAME}/s3memory-{agent}"


def obj(key: str) -> str:
    return f"{BUCKET_ARN}/{key}"


class Requests:
    """Builds one request per call: an agent session (tagged or not) or another principal."""

    def __init__(self, simulator: Simulator | str) -> None:
        self._simulator = simulator

    @property
    def sim(self) -> Simulator:
        # Failing here, inside the test, reports FAILED (with the setup hint), never a skip.
        if isinstance(self._simulator, str):
            pytest.fail(self._simulator, pytrace=False)
        return self._simulator

    def agent(
        self,
        action: str,
        resource: str,
        *,
        tag: str | None = "alice",
        bucket_policy: bool = False,
        key_policy: Any | None = None,
        identity: list[Any] | None = None,
        prefix: str = PREFIX,
        secure: bool = True,
        context: dict[str, str] | None = None,
    ) -> Decision:
        request_context: dict[str, str | list[str]] = {"aws:SecureTransport": "true" if secure else "false"}
        if tag is not None:
            request_context["aws:PrincipalTag/s3memory-agent"] = tag
        request_context.update(context or {})
        resource_policy = policy("bucket", prefix) if bucket_policy else key_policy
        return self.sim.evaluate(
            principal=session_of(tag or "untagged"),
            action=action,
            resource=resource,
            account=ACCOUNT,
            context=request_context,
            identity_policies=identity if identity is not None else [policy("agent-access", prefix)],
            resource_policy=resource_policy,
        )

    def principal(
        self,
        principal: str,
        action: str,
        resource: str,
        *,
        identity: list[Any],
        resource_policy: Any | None = None,
        context: dict[str, str | list[str]] | None = None,
    ) -> Decision:
        return self.sim.evaluate(
            principal=principal,
            action=action,
            resource=resource,
            account=ACCOUNT,
            context={"aws:SecureTransport": "true", **(context or {})},
            identity_policies=identity,
            resource_policy=resource_policy,
        )


@pytest.fixture
def req(simulator: Simulator | str) -> Requests:
    return Requests(simulator)


# -- S3: the agent-access role policy on its own ----------------------------------------------

OWN_OBJECT_CASES = [
    ("s3:GetObject", "agents/alice/notes.txt"),
    ("s3:PutObject", "agents/alice/notes.txt"),
    ("s3:DeleteObject", "agents/alice/notes.txt"),
    ("s3:PutObject", "agents/alice/projects/deep/plan.md"),
    ("s3:PutObject", "agents/alice/.s3memory/intents/rename-1.json"),
]


@pytest.mark.parametrize(("action", "key"), OWN_OBJECT_CASES)
def test_role_allows_alice_her_own_objects(req: Requests, action: str, key: str) -> None:
    assert req.agent(action, obj(key)).result == ALLOWED


@pytest.mark.parametrize("listed", ["agents/alice/", "agents/alice/projects/"])
def test_role_allows_alice_to_list_her_prefix(req: Requests, listed: str) -> None:
    assert req.agent("s3:ListBucket", BUCKET_ARN, context={"s3:prefix": listed}).result == ALLOWED


@pytest.mark.parametrize("action", ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"])
def test_role_denies_alice_bobs_objects(req: Requests, action: str) -> None:
    assert req.agent(action, obj("agents/bob/notes.txt")).result == IMPLICIT


def test_role_denies_alice_listing_bobs_prefix(req: Requests) -> None:
    assert req.agent("s3:ListBucket", BUCKET_ARN, context={"s3:prefix": "agents/bob/"}).result == IMPLICIT


def test_role_denies_alice_listing_the_bucket_root_without_a_prefix(req: Requests) -> None:
    assert req.agent("s3:ListBucket", BUCKET_ARN).result == IMPLICIT


@pytest.mark.parametrize("listed", ["", "agents/", "agents/ali", "agents/alice"])
def test_role_denies_alice_listings_wider_than_her_prefix(req: Requests, listed: str) -> None:
    assert req.agent("s3:ListBucket", BUCKET_ARN, context={"s3:prefix": listed}).result == IMPLICIT


@pytest.mark.parametrize("key", ["agents/alice/notes.txt", "agents/alice/.s3memory/intents/x.json"])
def test_role_denies_sibling_id_ali_the_objects_of_alice(req: Requests, key: str) -> None:
    assert req.agent("s3:GetObject", obj(key), tag="ali").result == IMPLICIT


def test_role_denies_sibling_id_ali_listing_alice(req: Requests) -> None:
    assert req.agent("s3:ListBucket", BUCKET_ARN, tag="ali", context={"s3:prefix": "agents/alice/"}).result == IMPLICIT


def test_role_denies_sibling_id_ali_a_prefix_that_also_matches_alice(req: Requests) -> None:
    # "agents/ali" would list agents/alice/... too; only "agents/ali/" is hers.
    assert req.agent("s3:ListBucket", BUCKET_ARN, tag="ali", context={"s3:prefix": "agents/ali"}).result == IMPLICIT


@pytest.mark.parametrize("key", ["agents/alice2/notes.txt", "agents/alice-archive/notes.txt", "agents/ali/x"])
def test_role_denies_alice_the_objects_of_ids_that_extend_or_shorten_hers(req: Requests, key: str) -> None:
    assert req.agent("s3:GetObject", obj(key)).result == IMPLICIT


@pytest.mark.parametrize("key", ["agents/alice/notes.txt", "agents//notes.txt", "notes.txt"])
def test_role_denies_a_session_without_the_agent_tag(req: Requests, key: str) -> None:
    assert req.agent("s3:GetObject", obj(key), tag=None).result == IMPLICIT


@pytest.mark.parametrize(
    "action",
    ["s3:GetObjectVersion", "s3:DeleteObjectVersion", "s3:PutObjectAcl", "s3:GetObjectTagging", "s3:RestoreObject"],
)
def test_role_grants_no_other_object_action_even_in_her_prefix(req: Requests, action: str) -> None:
    assert req.agent(action, obj("agents/alice/notes.txt")).result == IMPLICIT


@pytest.mark.parametrize("action", ["s3:ListBucketVersions", "s3:PutBucketPolicy", "s3:GetBucketPolicy"])
def test_role_grants_no_bucket_action_but_listing(req: Requests, action: str) -> None:
    assert req.agent(action, BUCKET_ARN, context={"s3:prefix": "agents/alice/"}).result == IMPLICIT


# -- S3: with the bucket policy ----------------------------------------------------------------


@pytest.mark.parametrize(("action", "key"), OWN_OBJECT_CASES)
def test_bucket_policy_keeps_alice_her_own_objects(req: Requests, action: str, key: str) -> None:
    assert req.agent(action, obj(key), bucket_policy=True).result == ALLOWED


def test_bucket_policy_keeps_alice_listing_her_prefix(req: Requests) -> None:
    assert (
        req.agent("s3:ListBucket", BUCKET_ARN, bucket_policy=True, context={"s3:prefix": "agents/alice/"}).result
        == ALLOWED
    )


@pytest.mark.parametrize("action", ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"])
def test_bucket_policy_denies_alice_bobs_objects(req: Requests, action: str) -> None:
    assert req.agent(action, obj("agents/bob/notes.txt"), bucket_policy=True).result == EXPLICIT


def test_bucket_policy_denies_alice_listing_bobs_prefix(req: Requests) -> None:
    decision = req.agent("s3:ListBucket", BUCKET_ARN, bucket_policy=True, context={"s3:prefix": "agents/bob/"})
    assert decision.result == EXPLICIT


def test_bucket_policy_denies_alice_listing_the_bucket_root(req: Requests) -> None:
    assert req.agent("s3:ListBucket", BUCKET_ARN, bucket_policy=True).result == EXPLICIT


def test_bucket_policy_denies_sibling_id_ali_the_objects_of_alice(req: Requests) -> None:
    decision = req.agent("s3:GetObject", obj("agents/alice/notes.txt"), tag="ali", bucket_policy=True)
    assert decision.result == EXPLICIT


def test_bucket_policy_denies_sibling_id_ali_listing_agents_ali(req: Requests) -> None:
    decision = req.agent(
        "s3:ListBucket", BUCKET_ARN, tag="ali", bucket_policy=True, context={"s3:prefix": "agents/ali"}
    )
    assert decision.result == EXPLICIT


@pytest.mark.parametrize(("action", "key"), OWN_OBJECT_CASES)
def test_bucket_policy_denies_non_tls_requests(req: Requests, action: str, key: str) -> None:
    assert req.agent(action, obj(key), bucket_policy=True, secure=False).result == EXPLICIT


def test_bucket_policy_denies_non_tls_listing(req: Requests) -> None:
    decision = req.agent(
        "s3:ListBucket", BUCKET_ARN, bucket_policy=True, secure=False, context={"s3:prefix": "agents/alice/"}
    )
    assert decision.result == EXPLICIT


def test_bucket_policy_denies_tls_older_than_1_2(req: Requests) -> None:
    decision = req.agent(
        "s3:GetObject", obj("agents/alice/notes.txt"), bucket_policy=True, context={"s3:TlsVersion": "1.1"}
    )
    assert decision.result == EXPLICIT


def test_bucket_policy_denies_non_tls_to_operators_too(req: Requests) -> None:
    decision = req.principal(
        OPERATOR_ROLE_ARN,
        "s3:GetObject",
        obj("agents/alice/notes.txt"),
        identity=[policy("operator")],
        resource_policy=policy("bucket"),
        context={"aws:SecureTransport": "false"},
    )
    assert decision.result == EXPLICIT


def test_bucket_policy_holds_if_the_role_is_widened_to_all_of_s3(req: Requests) -> None:
    decision = req.agent("s3:GetObject", obj("agents/bob/notes.txt"), bucket_policy=True, identity=[WIDE_S3])
    assert decision.result == EXPLICIT


def test_bucket_policy_stops_a_widened_role_listing_other_agents(req: Requests) -> None:
    decision = req.agent(
        "s3:ListBucket", BUCKET_ARN, bucket_policy=True, identity=[WIDE_S3], context={"s3:prefix": "agents/"}
    )
    assert decision.result == EXPLICIT


@pytest.mark.parametrize("action", ["s3:DeleteObjectVersion", "s3:GetObjectVersion", "s3:PutObjectAcl"])
def test_bucket_policy_stops_a_widened_role_using_other_actions_in_its_prefix(req: Requests, action: str) -> None:
    decision = req.agent(action, obj("agents/alice/notes.txt"), bucket_policy=True, identity=[WIDE_S3])
    assert decision.result == EXPLICIT


def test_bucket_policy_stops_a_widened_role_session_without_the_tag(req: Requests) -> None:
    decision = req.agent("s3:GetObject", obj("agents//x"), tag=None, bucket_policy=True, identity=[WIDE_S3])
    assert decision.result == EXPLICIT


# -- other prefixes render the same isolation -------------------------------------------------


@pytest.mark.parametrize("prefix", ["", "team-a/agents/"])
def test_other_prefixes_allow_alice_her_own_objects(req: Requests, prefix: str) -> None:
    key = f"{prefix}alice/notes.txt"
    assert req.agent("s3:PutObject", obj(key), prefix=prefix, bucket_policy=True).result == ALLOWED


@pytest.mark.parametrize("prefix", ["", "team-a/agents/"])
def test_other_prefixes_deny_alice_bobs_objects(req: Requests, prefix: str) -> None:
    key = f"{prefix}bob/notes.txt"
    assert req.agent("s3:GetObject", obj(key), prefix=prefix).result == IMPLICIT
    assert req.agent("s3:GetObject", obj(key), prefix=prefix, bucket_policy=True).result == EXPLICIT


@pytest.mark.parametrize("prefix", ["", "team-a/agents/"])
def test_other_prefixes_let_alice_list_only_her_prefix(req: Requests, prefix: str) -> None:
    assert (
        req.agent("s3:ListBucket", BUCKET_ARN, prefix=prefix, context={"s3:prefix": f"{prefix}alice/"}).result
        == ALLOWED
    )
    assert req.agent("s3:ListBucket", BUCKET_ARN, prefix=prefix, context={"s3:prefix": prefix}).result == IMPLICIT


# -- KMS: what the evaluator can decide ---------------------------------------------------------


def test_kms_evaluator_drops_the_encryption_context_key(req: Requests) -> None:
    """Pins the evaluator's limitation; if it starts evaluating the key, move the KMS checks to it."""
    decision = req.agent("kms:Decrypt", DATA_KEY_ARN, context={"kms:EncryptionContext:s3memory:agent": "alice"})
    assert decision.ignored_context_keys == ["kms:EncryptionContext:s3memory:agent"]
    assert decision.result == IMPLICIT


@pytest.mark.parametrize("action", ["kms:Decrypt", "kms:GenerateDataKey"])
def test_kms_key_policy_denies_a_widened_role_data_keys_without_its_context(req: Requests, action: str) -> None:
    """A request whose context the evaluator does not see = a request without the agent's context."""
    decision = req.agent(action, DATA_KEY_ARN, identity=[WIDE_KMS], key_policy=policy("data-key"))
    assert decision.result == EXPLICIT


@pytest.mark.parametrize(
    "action",
    [
        "kms:Encrypt",
        "kms:ReEncryptFrom",
        "kms:ReEncryptTo",
        "kms:GenerateDataKeyWithoutPlaintext",
        "kms:CreateGrant",
        "kms:DescribeKey",
        "kms:PutKeyPolicy",
        "kms:ScheduleKeyDeletion",
    ],
)
def test_kms_key_policy_denies_a_widened_role_every_other_operation(req: Requests, action: str) -> None:
    decision = req.agent(action, DATA_KEY_ARN, identity=[WIDE_KMS], key_policy=policy("data-key"))
    assert decision.result == EXPLICIT


def test_kms_key_policy_denies_a_session_without_the_agent_tag(req: Requests) -> None:
    decision = req.agent("kms:Decrypt", DATA_KEY_ARN, tag=None, identity=[WIDE_KMS], key_policy=policy("data-key"))
    assert decision.result == EXPLICIT


def test_kms_role_policy_grants_no_other_operation_on_the_data_key(req: Requests) -> None:
    assert req.agent("kms:Encrypt", DATA_KEY_ARN).result == IMPLICIT
    assert req.agent("kms:ReEncryptFrom", DATA_KEY_ARN).result == IMPLICIT


def test_kms_key_policy_leaves_other_principals_to_iam(req: Requests) -> None:
    decision = req.principal(
        OPERATOR_ROLE_ARN,
        "kms:DescribeKey",
        DATA_KEY_ARN,
        identity=[policy("operator")],
        resource_policy=policy("data-key"),
    )
    assert decision.result == ALLOWED


def test_kms_sse_key_is_usable_by_agents_only_through_s3(req: Requests) -> None:
    key_policy = policy("sse-key")
    direct = req.agent("kms:Decrypt", SSE_KEY_ARN, identity=[WIDE_KMS], key_policy=key_policy)
    via_s3 = req.agent(
        "kms:Decrypt",
        SSE_KEY_ARN,
        identity=[WIDE_KMS],
        key_policy=key_policy,
        context={"kms:ViaService": f"s3.{REGION}.amazonaws.com"},
    )
    assert direct.result == EXPLICIT
    assert via_s3.result == ALLOWED


# -- KMS: structure (the evaluator cannot see encryption-context keys) --------------------------


def _statements(document: Any, resource: str | None = None) -> list[Any]:
    return [s for s in document["Statement"] if resource is None or s.get("Resource") == resource]


def test_kms_condition_key_is_the_context_the_library_sends() -> None:
    assert encryption_context("alice") == {"s3memory:agent": "alice"}
    condition_key = "kms:EncryptionContext:" + next(iter(encryption_context("alice")))
    assert condition_key == "kms:EncryptionContext:s3memory:agent"


def test_kms_role_policy_structure_binds_the_context_to_the_agent_tag() -> None:
    on_data_key = _statements(policy("agent-access"), DATA_KEY_ARN)
    assert on_data_key == [
        {
            "Sid": "OwnAgentDataKeys",
            "Effect": "Allow",
            "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
            "Resource": DATA_KEY_ARN,
            "Condition": {"StringEquals": {"kms:EncryptionContext:s3memory:agent": AGENT_TAG_VARIABLE}},
        }
    ]


def test_kms_role_policy_structure_names_no_other_key_but_the_sse_key_through_s3() -> None:
    kms_statements = [s for s in policy("agent-access")["Statement"] if any(a.startswith("kms:") for a in s["Action"])]
    assert sorted(s["Resource"] for s in kms_statements) == sorted([DATA_KEY_ARN, SSE_KEY_ARN])
    (sse,) = _statements(policy("agent-access"), SSE_KEY_ARN)
    # With S3 Bucket Keys S3's context is the bucket ARN; without them, the object ARN. The same
    # for the keystore bucket, whose objects are the agent's branch keys.
    assert sse["Condition"] == {
        "StringEquals": {"kms:ViaService": f"s3.{REGION}.amazonaws.com"},
        "StringLike": {
            "kms:EncryptionContext:aws:s3:arn": [
                BUCKET_ARN,
                f"{BUCKET_ARN}/agents/{AGENT_TAG_VARIABLE}/*",
                KEYSTORE_BUCKET_ARN,
                f"{KEYSTORE_BUCKET_ARN}/agents/{AGENT_TAG_VARIABLE}/.s3memory/keys/*",
            ]
        },
    }


def test_kms_key_policy_structure_denies_other_agents_contexts() -> None:
    deny = next(s for s in policy("data-key")["Statement"] if s["Sid"] == "DenyAgentDataKeysOfOtherAgents")
    assert deny == {
        "Sid": "DenyAgentDataKeysOfOtherAgents",
        "Effect": "Deny",
        "Principal": {"AWS": AGENT_ROLE_ARN},
        "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
        "Resource": "*",
        "Condition": {  # denied unless its own context, or a store's (which a store grant must allow)
            "StringNotEquals": {"kms:EncryptionContext:s3memory:agent": AGENT_TAG_VARIABLE},
            "StringNotLike": {"kms:EncryptionContext:s3memory:agent": "_stores/*"},
        },
    }


def test_kms_key_policy_structure_has_no_wildcard_principal() -> None:
    for name in ("data-key", "sse-key"):
        for statement in policy(name)["Statement"]:
            assert statement["Principal"] != "*", (name, statement["Sid"])
            assert "*" not in str(statement["Principal"]["AWS"]), (name, statement["Sid"])


def test_sse_key_is_not_the_envelope_key() -> None:
    """The trap: S3's own KMS calls carry {"aws:s3:arn": ...}, which the agent condition refuses."""
    assert SSE_KEY_ARN != DATA_KEY_ARN
    encryption = next(iter(_statements(policy("agent-access"), SSE_KEY_ARN)))
    assert "kms:EncryptionContext:s3memory:agent" not in str(encryption["Condition"])


# -- the agent-access trust policy ---------------------------------------------------------------


def _tag_context(value: str, *, extra: dict[str, str] | None = None) -> dict[str, str | list[str]]:
    context: dict[str, str | list[str]] = {"aws:RequestTag/s3memory-agent": value}
    context.update({f"aws:RequestTag/{k}": v for k, v in (extra or {}).items()})
    context["aws:TagKeys"] = ["s3memory-agent", *(extra or {})]
    return context


def _lambda_identity() -> list[Any]:
    return [example_policy("lambda-execution")]


def test_trust_lets_the_lambda_role_assume_the_agent_role(req: Requests) -> None:
    decision = req.principal(
        LAMBDA_SESSION,
        "sts:AssumeRole",
        AGENT_ROLE_ARN,
        identity=_lambda_identity(),
        resource_policy=policy("agent-trust"),
    )
    assert decision.result == ALLOWED


def test_trust_lets_the_lambda_role_tag_the_session_with_an_agent_id(req: Requests) -> None:
    decision = req.principal(
        LAMBDA_SESSION,
        "sts:TagSession",
        AGENT_ROLE_ARN,
        identity=_lambda_identity(),
        resource_policy=policy("agent-trust"),
        context=_tag_context("alice"),
    )
    assert decision.result == ALLOWED


@pytest.mark.parametrize("value", ["bob/notes", "alice/../bob", "", ".s3memory", "-x", "_x"])
def test_trust_refuses_tag_values_that_could_leave_the_agent_prefix(req: Requests, value: str) -> None:
    decision = req.principal(
        LAMBDA_SESSION,
        "sts:TagSession",
        AGENT_ROLE_ARN,
        identity=_lambda_identity(),
        resource_policy=policy("agent-trust"),
        context=_tag_context(value),
    )
    assert decision.result == IMPLICIT


def test_trust_refuses_extra_session_tags(req: Requests) -> None:
    decision = req.principal(
        LAMBDA_SESSION,
        "sts:TagSession",
        AGENT_ROLE_ARN,
        identity=_lambda_identity(),
        resource_policy=policy("agent-trust"),
        context=_tag_context("alice", extra={"team": "x"}),
    )
    assert decision.result == IMPLICIT


def test_trust_refuses_other_roles_of_the_account(req: Requests) -> None:
    other = f"arn:aws:sts::{ACCOUNT}:assumed-role/some-other-role/x"
    decision = req.principal(
        other, "sts:AssumeRole", AGENT_ROLE_ARN, identity=_lambda_identity(), resource_policy=policy("agent-trust")
    )
    assert decision.result == IMPLICIT


def test_an_agent_session_cannot_re_assume_the_role_as_another_agent(req: Requests) -> None:
    decision = req.principal(
        session_of("alice"),
        "sts:TagSession",
        AGENT_ROLE_ARN,
        identity=[policy("agent-access")],
        resource_policy=policy("agent-trust"),
        context=_tag_context("bob"),
    )
    assert decision.result == IMPLICIT


# -- the Lambda example's own role ---------------------------------------------------------------


def test_lambda_role_cannot_read_memories_itself(req: Requests) -> None:
    decision = req.principal(
        LAMBDA_SESSION,
        "s3:GetObject",
        obj("agents/alice/notes.txt"),
        identity=_lambda_identity(),
        resource_policy=policy("bucket"),
    )
    assert decision.result == IMPLICIT


def test_lambda_role_cannot_use_the_data_key_itself(req: Requests) -> None:
    decision = req.principal(
        LAMBDA_SESSION, "kms:Decrypt", DATA_KEY_ARN, identity=_lambda_identity(), resource_policy=policy("data-key")
    )
    assert decision.result == IMPLICIT


def test_lambda_role_reads_only_its_api_key_secret(req: Requests) -> None:
    own = req.principal(LAMBDA_SESSION, "secretsmanager:GetSecretValue", SECRET_ARN, identity=_lambda_identity())
    other_secret = SECRET_ARN.replace("anthropic-api-key-AbCdEf", "other-XyZ123")
    other = req.principal(LAMBDA_SESSION, "secretsmanager:GetSecretValue", other_secret, identity=_lambda_identity())
    assert own.result == ALLOWED
    assert other.result == IMPLICIT


# -- the operator policy -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "key"),
    [
        ("s3:GetObject", "agents/alice/notes.txt"),
        ("s3:GetObjectVersion", "agents/bob/notes.txt"),
        ("s3:PutObject", "agents/bob/notes.txt"),
        ("s3:DeleteObjectVersion", "agents/alice/notes.txt"),
    ],
)
def test_operator_reaches_every_agent(req: Requests, action: str, key: str) -> None:
    decision = req.principal(
        OPERATOR_ROLE_ARN, action, obj(key), identity=[policy("operator")], resource_policy=policy("bucket")
    )
    assert decision.result == ALLOWED


def test_operator_lists_all_versions_under_the_prefix(req: Requests) -> None:
    decision = req.principal(
        OPERATOR_ROLE_ARN,
        "s3:ListBucketVersions",
        BUCKET_ARN,
        identity=[policy("operator")],
        resource_policy=policy("bucket"),
        context={"s3:prefix": "agents/"},
    )
    assert decision.result == ALLOWED


def test_operator_stays_inside_the_prefix(req: Requests) -> None:
    outside = req.principal(OPERATOR_ROLE_ARN, "s3:GetObject", obj("other-app/x"), identity=[policy("operator")])
    bucket_admin = req.principal(OPERATOR_ROLE_ARN, "s3:PutBucketPolicy", BUCKET_ARN, identity=[policy("operator")])
    assert outside.result == IMPLICIT
    assert bucket_admin.result == IMPLICIT
