"""A concrete test deployment: the values `terraform/main.tf` passes to each policy template.

`module_template_values()` mirrors the `templatefile()` calls in main.tf and fleet.tf
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

# The fleet jobs (fleet.tf), as deployed with name = "s3memory".
FLEET_NAME = "s3memory-fleet"
FLEET_CLASSES = ("audit", "erase", "inspect", "keys", "prune")
FLEET_WORKER_ARN_PREFIX = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{FLEET_NAME}-"
FLEET_WORKER_ARNS = {c: f"{FLEET_WORKER_ARN_PREFIX}{c}" for c in FLEET_CLASSES}
FLEET_LOG_GROUP_ARNS = {
    c: f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:/aws/lambda/{FLEET_NAME}-{c}" for c in FLEET_CLASSES
}
FLEET_STATE_MACHINE_ARN = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{FLEET_NAME}"
FLEET_EXECUTION_ARN = f"arn:aws:states:{REGION}:{ACCOUNT}:execution:{FLEET_NAME}"
RESULTS_BUCKET = f"{BUCKET}-fleet"  # the module's default: "<bucket_name>-fleet"
RESULTS_BUCKET_ARN = f"arn:aws:s3:::{RESULTS_BUCKET}"
RESULTS_PREFIX = "runs/"
REWRAP_TO_KEY_ARN = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b"
FLEET_RETRY = {
    "retry_interval_seconds": "2",
    "retry_backoff_rate": "2",
    "retry_max_attempts": "6",
    "retry_max_delay_seconds": "60",
}
RETENTION_NAME = "s3memory-retention"
RETENTION_SCHEDULER_ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/{RETENTION_NAME}-scheduler"
RETENTION_SCHEDULE_GROUP_ARN = f"arn:aws:scheduler:{REGION}:{ACCOUNT}:schedule-group/{RETENTION_NAME}"
STATE_MACHINE_TEMPLATE = TERRAFORM / "fleet" / "state-machine.asl.json.tftpl"

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
        # fleet.tf (the opt-in fleet jobs and the retention schedule)
        "fleet-worker-trust.json.tftpl": {},
        "fleet-inspect.json.tftpl": _fleet_values(prefix, "inspect"),
        "fleet-prune.json.tftpl": _fleet_values(prefix, "prune"),
        "fleet-audit.json.tftpl": {**_fleet_values(prefix, "audit"), **_kms_values()},
        "fleet-keys.json.tftpl": {
            **_fleet_values(prefix, "keys"),
            **_kms_values(),
            "rewrap_to_key_arns": json.dumps([DATA_KEY_ARN, REWRAP_TO_KEY_ARN], separators=(",", ":")),
        },
        "fleet-erase.json.tftpl": _fleet_values(prefix, "erase"),
        "fleet-state-machine-trust.json.tftpl": {"account_id": ACCOUNT, "state_machine_arn": FLEET_STATE_MACHINE_ARN},
        "fleet-state-machine.json.tftpl": {
            "worker_function_arns": json.dumps(list(FLEET_WORKER_ARNS.values()), separators=(",", ":")),
            "results_bucket_arn": RESULTS_BUCKET_ARN,
            "results_prefix": RESULTS_PREFIX,
            "state_machine_arn": FLEET_STATE_MACHINE_ARN,
            "map_run_execution_arn_prefix": f"{FLEET_EXECUTION_ARN}/agents:",
        },
        "fleet-results-bucket.json.tftpl": {"results_bucket_arn": RESULTS_BUCKET_ARN},
        "fleet-operator.json.tftpl": {
            "state_machine_arn": FLEET_STATE_MACHINE_ARN,
            "execution_arn_prefix": f"{FLEET_EXECUTION_ARN}:",
            "map_run_arn_prefix": f"arn:aws:states:{REGION}:{ACCOUNT}:mapRun:{FLEET_NAME}/agents:",
            "results_bucket_arn": RESULTS_BUCKET_ARN,
            "results_prefix": RESULTS_PREFIX,
        },
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
        "retention-scheduler-trust.json.tftpl": {
            "account_id": ACCOUNT,
            "schedule_group_arn": RETENTION_SCHEDULE_GROUP_ARN,
        },
        "retention-scheduler.json.tftpl": {"state_machine_arn": FLEET_STATE_MACHINE_ARN},
    }


def _fleet_values(prefix: str, role_class: str) -> dict[str, str]:
    return {
        "bucket_arn": BUCKET_ARN,
        "keystore_bucket_arn": KEYSTORE_BUCKET_ARN,
        "agent_prefix": prefix,
        "results_bucket_arn": RESULTS_BUCKET_ARN,
        "results_prefix": RESULTS_PREFIX,
        "log_group_arn": FLEET_LOG_GROUP_ARNS[role_class],
    }


def _kms_values() -> dict[str, str]:
    return {"data_key_arn": DATA_KEY_ARN, "sse_key_arn": SSE_KEY_ARN, "region": REGION}


def state_machine_values(region: str = REGION, account: str = ACCOUNT) -> dict[str, str]:
    """The variables fleet.tf renders the state machine's definition with."""
    prefix = f"arn:aws:lambda:{region}:{account}:function:{FLEET_NAME}-"
    return {
        **FLEET_RETRY,
        "list_function_arn": f"{prefix}inspect",
        "worker_function_arn_prefix": prefix,
        "results_bucket": RESULTS_BUCKET,
        "results_prefix": RESULTS_PREFIX,
    }


def state_machine_definition(region: str = REGION, account: str = ACCOUNT) -> Any:
    """The fleet state machine's definition as fleet.tf renders it, parsed."""
    return json.loads(render_file(STATE_MACHINE_TEMPLATE, state_machine_values(region, account)))


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
