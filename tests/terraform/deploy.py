"""A concrete test deployment: the values `terraform/main.tf` passes to each policy template.

`module_template_values()` mirrors the `templatefile()` calls in main.tf and retention.tf
(test_hcl.py checks that they pass exactly these names to each template), with fixed ARNs standing in for
the resources Terraform would create.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.terraform.render import render_file

REPO = Path(__file__).resolve().parents[2]
TERRAFORM = REPO / "terraform"
POLICIES = TERRAFORM / "policies"
EXAMPLE = TERRAFORM / "examples" / "lambda-agent"
EXAMPLE_POLICIES = EXAMPLE / "policies"

ACCOUNT = "123456789012"
REGION = "eu-west-1"
BUCKET = "acme-s3memory"
BUCKET_ARN = f"arn:aws:s3:::{BUCKET}"
KEYSTORE_BUCKET = f"{BUCKET}-keys"  # the module's default: "<bucket_name>-keys"
KEYSTORE_BUCKET_ARN = f"arn:aws:s3:::{KEYSTORE_BUCKET}"
PREFIX = "agents/"
AGENT_ROLE_NAME = "s3memory-agent-access"
AGENT_ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/{AGENT_ROLE_NAME}"
LAMBDA_ROLE_NAME = "s3memory-agent-lambda"
LAMBDA_ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/{LAMBDA_ROLE_NAME}"
OPERATOR_ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/s3memory-operator"
DATA_KEY_ARN = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6"
SSE_KEY_ARN = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/9a8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d"
ACCOUNT_ROOT_ARN = f"arn:aws:iam::{ACCOUNT}:root"
LOG_GROUP_ARN = f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:/aws/lambda/s3memory-agent"
SECRET_ARN = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:anthropic-api-key-AbCdEf"

# The retention job (retention.tf), as deployed with name = "s3memory".
RETENTION_NAME = "s3memory-retention"
RETENTION_FUNCTION_ARN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{RETENTION_NAME}"
RETENTION_ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/{RETENTION_NAME}"
RETENTION_SCHEDULER_ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/{RETENTION_NAME}-scheduler"
RETENTION_LOG_GROUP_ARN = f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:/aws/lambda/{RETENTION_NAME}"
RETENTION_SCHEDULE_GROUP_ARN = f"arn:aws:scheduler:{REGION}:{ACCOUNT}:schedule-group/{RETENTION_NAME}"

# The replica side (replica.tf, replica_region = "eu-central-1"): the envelope key's replica keeps
# the primary's key id (a multi-region key), in the replica region.
REPLICA_REGION = "eu-central-1"
REPLICA_BUCKET = f"{BUCKET}-replica"
REPLICA_BUCKET_ARN = f"arn:aws:s3:::{REPLICA_BUCKET}"
REPLICA_KEYSTORE_BUCKET = f"{REPLICA_BUCKET}-keys"
REPLICA_KEYSTORE_BUCKET_ARN = f"arn:aws:s3:::{REPLICA_KEYSTORE_BUCKET}"
REPLICA_DATA_KEY_ARN = DATA_KEY_ARN.replace(REGION, REPLICA_REGION)
REPLICA_SSE_KEY_ARN = f"arn:aws:kms:{REPLICA_REGION}:{ACCOUNT}:key/5e4f3a2b-1c0d-4e9f-8a7b-6c5d4e3f2a1b"

# The `stores` of the test deployment: support agents read the guidelines, curators write them.
STORE = "support-guidelines"
STORE_READERS = ["support-*"]
STORE_WRITERS = ["curator-?"]

AGENT_TAG_KEY = "s3memory-agent"
AGENT_TAG_VARIABLE = "${aws:PrincipalTag/s3memory-agent}"


def module_template_values(prefix: str = PREFIX) -> dict[str, dict[str, str]]:
    """Template file name → the variables main.tf renders it with."""
    return {
        "agent-trust.json.tftpl": {
            "trusted_principal_arns": json.dumps([LAMBDA_ROLE_ARN], separators=(",", ":")),  # as jsonencode()
        },
        "agent-access.json.tftpl": {
            "bucket_arn": BUCKET_ARN,
            "keystore_bucket_arn": KEYSTORE_BUCKET_ARN,
            "agent_prefix": prefix,
            "data_key_arn": DATA_KEY_ARN,
            "sse_key_arn": SSE_KEY_ARN,
            "region": REGION,
        },
        "bucket.json.tftpl": {
            "bucket_arn": BUCKET_ARN,
            "agent_prefix": prefix,
            "agent_role_arn": AGENT_ROLE_ARN,
        },
        "keystore-bucket.json.tftpl": {
            "keystore_bucket_arn": KEYSTORE_BUCKET_ARN,
            "agent_prefix": prefix,
            "agent_role_arn": AGENT_ROLE_ARN,
        },
        "data-key.json.tftpl": {
            "account_root_arn": ACCOUNT_ROOT_ARN,
            "agent_role_arn": AGENT_ROLE_ARN,
        },
        "sse-key.json.tftpl": {
            "account_root_arn": ACCOUNT_ROOT_ARN,
            "agent_role_arn": AGENT_ROLE_ARN,
            "region": REGION,
        },
        "operator.json.tftpl": {
            "bucket_arn": BUCKET_ARN,
            "keystore_bucket_arn": KEYSTORE_BUCKET_ARN,
            "agent_prefix": prefix,
            "data_key_arn": DATA_KEY_ARN,
            "sse_key_arn": SSE_KEY_ARN,
            "region": REGION,
        },
        # one store (the `for` of local.store_read_policies / store_write_policies)
        "store-read.json.tftpl": _store_values(prefix, STORE_READERS + STORE_WRITERS),
        "store-write.json.tftpl": _store_values(prefix, STORE_WRITERS),
        # replica.tf (replica_region): the replication role; the replica side renders the templates above again
        "replication-trust.json.tftpl": {"account_id": ACCOUNT},
        "replication.json.tftpl": {
            "bucket_arn": BUCKET_ARN,
            "keystore_bucket_arn": KEYSTORE_BUCKET_ARN,
            "replica_bucket_arn": REPLICA_BUCKET_ARN,
            "replica_keystore_bucket_arn": REPLICA_KEYSTORE_BUCKET_ARN,
            "agent_prefix": prefix,
            "sse_key_arn": SSE_KEY_ARN,
            "replica_sse_key_arn": REPLICA_SSE_KEY_ARN,
            "region": REGION,
            "replica_region": REPLICA_REGION,
        },
        # retention.tf (the opt-in retention job)
        "retention-trust.json.tftpl": {},
        "retention-function.json.tftpl": {
            "bucket_arn": BUCKET_ARN,
            "agent_prefix": prefix,
            "log_group_arn": RETENTION_LOG_GROUP_ARN,
        },
        "retention-scheduler-trust.json.tftpl": {
            "account_id": ACCOUNT,
            "schedule_group_arn": RETENTION_SCHEDULE_GROUP_ARN,
        },
        "retention-scheduler.json.tftpl": {
            "function_arn": RETENTION_FUNCTION_ARN,
        },
    }


def _store_values(prefix: str, agents: list[str]) -> dict[str, str]:
    return {
        "bucket_arn": BUCKET_ARN,
        "keystore_bucket_arn": KEYSTORE_BUCKET_ARN,
        "store_prefix": f"{prefix}_stores/{STORE}/",
        "store_owner": f"_stores/{STORE}",
        "agents": json.dumps(agents, separators=(",", ":")),  # as jsonencode()
        "data_key_arn": DATA_KEY_ARN,
        "sse_key_arn": SSE_KEY_ARN,
        "region": REGION,
    }


def example_template_values() -> dict[str, dict[str, str]]:
    """Template file name → the variables examples/lambda-agent/main.tf renders it with."""
    return {
        "lambda-trust.json.tftpl": {},
        "lambda-execution.json.tftpl": {
            "log_group_arn": LOG_GROUP_ARN,
            "agent_role_arn": AGENT_ROLE_ARN,
            "secret_arn": SECRET_ARN,
        },
    }


def policy(name: str, prefix: str = PREFIX) -> Any:
    """A module policy template rendered and parsed, e.g. policy("agent-access")."""
    file = f"{name}.json.tftpl"
    return json.loads(render_file(POLICIES / file, module_template_values(prefix)[file]))


def example_policy(name: str) -> Any:
    file = f"{name}.json.tftpl"
    return json.loads(render_file(EXAMPLE_POLICIES / file, example_template_values()[file]))


def replica_template_values(prefix: str = PREFIX) -> dict[str, dict[str, str]]:
    """The templates replica.tf renders a second time for the replica side, with its values."""
    values = module_template_values(prefix)
    replica = {
        "bucket_arn": REPLICA_BUCKET_ARN,
        "keystore_bucket_arn": REPLICA_KEYSTORE_BUCKET_ARN,
        "data_key_arn": REPLICA_DATA_KEY_ARN,
        "sse_key_arn": REPLICA_SSE_KEY_ARN,
        "region": REPLICA_REGION,
    }
    pick = {
        "agent-access.json.tftpl", "operator.json.tftpl", "bucket.json.tftpl", "keystore-bucket.json.tftpl",
        "sse-key.json.tftpl",
    }  # fmt: skip
    return {name: {k: replica.get(k, v) for k, v in values[name].items()} for name in pick}


def replica_policy(name: str, prefix: str = PREFIX) -> Any:
    """A template as replica.tf renders it for the replica side, parsed."""
    file = f"{name}.json.tftpl"
    return json.loads(render_file(POLICIES / file, replica_template_values(prefix)[file]))
