# `terraform test` with a mocked AWS provider (no account, no network): the documents this
# module deploys must equal, byte for byte, the ones tests/terraform renders in Python with the
# same values (tests/terraform/deploy.py). tests/terraform/test_terraform_cli.py runs this file
# and passes the Python renderings as the `expected` variable; it also checks the validations.
# Run on its own (`terraform init && terraform test` in terraform/), it reads the same renderings
# from tests/expected.auto.tfvars.json, which tests/terraform/test_terraform_cli.py keeps equal to
# them (every policy document and the fleet's state machine definition); regenerate it after
# changing a policy or state machine template:
#   python -c 'import json; from tests.terraform.test_terraform_cli import expected_renderings; \
#     print(json.dumps({"expected": expected_renderings()}, indent=2, sort_keys=True))' \
#     > terraform/tests/expected.auto.tfvars.json
# Attributes left null in the configuration get generated values from the mocked provider, so
# the assertions only read attributes the configuration sets.

mock_provider "aws" {
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws" }
  }
  mock_data "aws_region" {
    defaults = { name = "eu-west-1" }
  }
}

mock_provider "aws" {
  alias = "replica"
}

override_resource {
  target = aws_s3_bucket.this
  values = { arn = "arn:aws:s3:::acme-s3memory", id = "acme-s3memory" }
}

override_resource {
  target = aws_s3_bucket.keystore
  values = { arn = "arn:aws:s3:::acme-s3memory-keys", id = "acme-s3memory-keys" }
}

override_resource {
  target = aws_kms_key.data_keys
  values = { arn = "arn:aws:kms:eu-west-1:123456789012:key/0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6", key_id = "0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6" }
}

override_resource {
  target = aws_kms_key.sse
  values = { arn = "arn:aws:kms:eu-west-1:123456789012:key/9a8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d", key_id = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d" }
}

override_resource {
  target = aws_iam_role.agent_access
  values = { arn = "arn:aws:iam::123456789012:role/s3memory-agent-access", id = "s3memory-agent-access", name = "s3memory-agent-access" }
}

variables {
  bucket_name                       = "acme-s3memory"
  agent_role_trusted_principal_arns = ["arn:aws:iam::123456789012:role/s3memory-agent-lambda"]
}

run "deployed_documents_equal_the_python_renderings" {
  command = apply

  assert {
    condition     = output.agent_access_policy_json == var.expected["agent-access"]
    error_message = "agent-access policy differs from the Python rendering"
  }
  assert {
    condition     = output.agent_trust_policy_json == var.expected["agent-trust"]
    error_message = "agent trust policy differs from the Python rendering"
  }
  assert {
    condition     = output.bucket_policy_json == var.expected["bucket"]
    error_message = "bucket policy differs from the Python rendering"
  }
  assert {
    condition     = output.keystore_bucket_policy_json == var.expected["keystore-bucket"]
    error_message = "keystore bucket policy differs from the Python rendering"
  }
  assert {
    condition     = output.data_key_policy_json == var.expected["data-key"]
    error_message = "data-key policy differs from the Python rendering"
  }
  assert {
    condition     = aws_kms_key.sse.policy == var.expected["sse-key"]
    error_message = "sse-key policy differs from the Python rendering"
  }
  assert {
    condition     = output.operator_policy_json == var.expected["operator"]
    error_message = "operator policy differs from the Python rendering"
  }
  assert {
    condition     = aws_iam_role.agent_access.assume_role_policy == var.expected["agent-trust"] && aws_iam_role_policy.agent_access.policy == var.expected["agent-access"] && aws_s3_bucket_policy.this.policy == var.expected["bucket"] && aws_s3_bucket_policy.keystore.policy == var.expected["keystore-bucket"] && aws_kms_key.data_keys.policy == var.expected["data-key"] && aws_iam_policy.operator.policy == var.expected["operator"]
    error_message = "a resource is not given the document its output shows"
  }
}

run "bucket_defaults" {
  command = plan

  assert {
    condition     = aws_s3_bucket_versioning.this.versioning_configuration[0].status == "Enabled"
    error_message = "versioning must be on"
  }
  assert {
    condition     = aws_s3_bucket_ownership_controls.this.rule[0].object_ownership == "BucketOwnerEnforced"
    error_message = "ACLs must be disabled"
  }
  assert {
    condition     = alltrue([aws_s3_bucket_public_access_block.this.block_public_acls, aws_s3_bucket_public_access_block.this.block_public_policy, aws_s3_bucket_public_access_block.this.ignore_public_acls, aws_s3_bucket_public_access_block.this.restrict_public_buckets])
    error_message = "all four public access blocks must be on"
  }
  assert {
    condition     = [for r in aws_s3_bucket_server_side_encryption_configuration.this.rule : [r.bucket_key_enabled, r.apply_server_side_encryption_by_default[0].sse_algorithm]] == [[true, "aws:kms"]]
    error_message = "default SSE must be aws:kms with S3 Bucket Keys"
  }
  assert {
    condition     = aws_kms_key.data_keys.enable_key_rotation && aws_kms_key.sse.enable_key_rotation
    error_message = "both keys rotate"
  }
  assert {
    condition     = [for r in aws_s3_bucket_lifecycle_configuration.this.rule : r.id] == ["abort-incomplete-multipart-uploads", "memory-versions"]
    error_message = "lifecycle rules"
  }
  assert {
    condition     = aws_s3_bucket_lifecycle_configuration.this.rule[1].noncurrent_version_expiration[0].noncurrent_days == 30 && aws_s3_bucket_lifecycle_configuration.this.rule[1].expiration[0].expired_object_delete_marker == true
    error_message = "without memory_expiration_days only delete markers expire"
  }
  assert {
    condition     = length(aws_s3_bucket_logging.this) == 0
    error_message = "logging is off without access_log_bucket"
  }
}

run "keystore_bucket_defaults" {
  command = plan

  assert {
    condition     = aws_s3_bucket.keystore.bucket == "acme-s3memory-keys"
    error_message = "the keystore bucket is named <bucket_name>-keys by default"
  }
  assert {
    condition     = aws_s3_bucket_versioning.keystore.versioning_configuration[0].status == "Enabled"
    error_message = "keystore versioning must be on"
  }
  assert {
    condition     = aws_s3_bucket_ownership_controls.keystore.rule[0].object_ownership == "BucketOwnerEnforced"
    error_message = "keystore ACLs must be disabled"
  }
  assert {
    condition     = alltrue([aws_s3_bucket_public_access_block.keystore.block_public_acls, aws_s3_bucket_public_access_block.keystore.block_public_policy, aws_s3_bucket_public_access_block.keystore.ignore_public_acls, aws_s3_bucket_public_access_block.keystore.restrict_public_buckets])
    error_message = "all four public access blocks must be on for the keystore"
  }
  assert {
    condition     = [for r in aws_s3_bucket_server_side_encryption_configuration.keystore.rule : [r.bucket_key_enabled, r.apply_server_side_encryption_by_default[0].sse_algorithm]] == [[true, "aws:kms"]]
    error_message = "keystore default SSE must be aws:kms with S3 Bucket Keys"
  }
  assert {
    condition     = aws_s3_bucket_lifecycle_configuration.this.bucket == "acme-s3memory"
    error_message = "the only lifecycle configuration is the memory bucket's"
  }
  assert {
    condition     = output.environment["S3MEMORY_KEYSTORE_BUCKET"] == "acme-s3memory-keys" && output.keystore_bucket_name == "acme-s3memory-keys" && output.keystore_bucket_arn == "arn:aws:s3:::acme-s3memory-keys"
    error_message = "the environment and outputs name the keystore bucket"
  }
  assert {
    condition     = length(aws_s3_bucket_logging.keystore) == 0
    error_message = "keystore logging is off without access_log_bucket"
  }
}

run "keystore_bucket_name_can_be_chosen" {
  command = plan

  variables {
    keystore_bucket_name = "acme-branch-keys"
    access_log_bucket    = "acme-logs"
  }

  assert {
    condition     = aws_s3_bucket.keystore.bucket == "acme-branch-keys"
    error_message = "keystore_bucket_name names the keystore bucket"
  }
  assert {
    condition     = aws_s3_bucket_logging.keystore[0].target_prefix == "acme-branch-keys/"
    error_message = "keystore access logs go to <keystore bucket name>/ by default"
  }
}

run "stale_memories_expire_when_asked" {
  command = plan

  variables {
    memory_expiration_days = 90
    access_log_bucket      = "acme-logs"
  }

  assert {
    condition     = aws_s3_bucket_lifecycle_configuration.this.rule[1].expiration[0].days == 90
    error_message = "memory_expiration_days sets the current-version expiry"
  }
  assert {
    condition     = aws_s3_bucket_logging.this[0].target_prefix == "acme-s3memory/"
    error_message = "access logs go to <bucket_name>/ by default"
  }
}

run "prefix_with_a_wildcard_is_refused" {
  command = plan
  variables { prefix = "agents/*/" }
  expect_failures = [var.prefix]
}

run "prefix_without_trailing_slash_is_refused" {
  command = plan
  variables { prefix = "agents" }
  expect_failures = [var.prefix]
}

run "no_trusted_principal_is_refused" {
  command = plan
  variables { agent_role_trusted_principal_arns = [] }
  expect_failures = [var.agent_role_trusted_principal_arns]
}

run "account_root_as_trusted_principal_is_refused" {
  command = plan
  variables { agent_role_trusted_principal_arns = ["arn:aws:iam::123456789012:root"] }
  expect_failures = [var.agent_role_trusted_principal_arns]
}

run "invalid_bucket_name_is_refused" {
  command = plan
  variables { bucket_name = "Acme_Memories" }
  expect_failures = [var.bucket_name]
}

run "invalid_keystore_bucket_name_is_refused" {
  command = plan
  variables { keystore_bucket_name = "Acme_Keys" }
  expect_failures = [var.keystore_bucket_name]
}

run "default_keystore_bucket_name_longer_than_63_is_refused" {
  command = plan
  # 60 characters: valid for the memory bucket, but "<bucket_name>-keys" would be 65.
  variables { bucket_name = "acme-s3memory-with-a-very-long-name-for-the-memory-bucket-01" }
  expect_failures = [aws_s3_bucket.keystore]
}

run "keystore_bucket_name_equal_to_bucket_name_is_refused" {
  command = plan
  variables { keystore_bucket_name = "acme-s3memory" }
  expect_failures = [aws_s3_bucket.keystore]
}

run "zero_day_expiry_is_refused" {
  command = plan
  variables { memory_expiration_days = 0 }
  expect_failures = [var.memory_expiration_days]
}

run "fleet_jobs_are_off_by_default" {
  command = plan

  assert {
    condition     = length(aws_sfn_state_machine.fleet) == 0 && length(aws_lambda_function.fleet_worker) == 0 && length(aws_s3_bucket.fleet_results) == 0 && length(aws_scheduler_schedule.retention) == 0 && length(aws_iam_role.retention_scheduler) == 0
    error_message = "no fleet resources and no retention schedule without fleet_jobs and a retention period"
  }
  assert {
    condition     = output.fleet_state_machine_arn == null && length(output.fleet_worker_policy_json) == 0 && output.retention_scheduler_policy_json == null && !contains(keys(output.environment), "S3MEMORY_TRACK_ACCESS")
    error_message = "the fleet outputs are null and access tracking is not asked for while the jobs are off"
  }
}

run "fleet_jobs_deploy_the_documents_python_renders" {
  command = apply

  variables {
    fleet_jobs                  = true
    fleet_package_s3            = { bucket = "acme-artifacts", key = "s3memory/fleet.zip" }
    fleet_rewrap_to_key_arns    = ["arn:aws:kms:eu-west-1:123456789012:key/5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b"]
    retention_not_accessed_days = 90
  }

  override_resource {
    target = aws_iam_role.retention_scheduler
    values = { arn = "arn:aws:iam::123456789012:role/s3memory-retention-scheduler" }
  }
  override_resource {
    target = aws_scheduler_schedule_group.retention
    values = { arn = "arn:aws:scheduler:eu-west-1:123456789012:schedule-group/s3memory-retention" }
  }
  override_resource {
    target = aws_sfn_state_machine.fleet
    values = { arn = "arn:aws:states:eu-west-1:123456789012:stateMachine:s3memory-fleet" }
  }
  override_resource {
    target = aws_iam_role.fleet_worker
    values = { arn = "arn:aws:iam::123456789012:role/s3memory-fleet-worker" }
  }
  override_resource {
    target = aws_iam_role.fleet_state_machine
    values = { arn = "arn:aws:iam::123456789012:role/s3memory-fleet-sfn" }
  }
  override_resource {
    target = aws_cloudwatch_log_group.fleet_state_machine
    values = { arn = "arn:aws:logs:eu-west-1:123456789012:log-group:/aws/vendedlogs/states/s3memory-fleet" }
  }
  override_resource {
    target = aws_lambda_function.fleet_worker
    values = { arn = "arn:aws:lambda:eu-west-1:123456789012:function:s3memory-fleet-worker" }
  }

  assert {
    condition     = alltrue([for c in ["inspect", "audit", "prune", "keys", "erase"] : aws_iam_role_policy.fleet_worker[c].policy == var.expected["fleet-${c}"] && output.fleet_worker_policy_json[c] == var.expected["fleet-${c}"]])
    error_message = "a fleet worker policy differs from the Python rendering"
  }
  assert {
    condition     = alltrue([for c in ["inspect", "audit", "prune", "keys", "erase"] : aws_iam_role.fleet_worker[c].assume_role_policy == var.expected["fleet-worker-trust"] && aws_lambda_function.fleet_worker[c].role == aws_iam_role.fleet_worker[c].arn && aws_lambda_function.fleet_worker[c].function_name == "s3memory-fleet-${c}"])
    error_message = "each worker runs as its own class's role"
  }
  assert {
    condition     = aws_iam_role_policy.fleet_state_machine[0].policy == var.expected["fleet-state-machine"] && aws_iam_role.fleet_state_machine[0].assume_role_policy == var.expected["fleet-state-machine-trust"] && aws_s3_bucket_policy.fleet_results[0].policy == var.expected["fleet-results-bucket"]
    error_message = "the state machine's policies or the results bucket policy differ from the Python rendering"
  }
  assert {
    condition     = aws_iam_policy.fleet_operator[0].policy == var.expected["fleet-operator"] && output.fleet_operator_policy_json == var.expected["fleet-operator"]
    error_message = "the fleet operator policy differs from the Python rendering"
  }
  assert {
    condition     = aws_sfn_state_machine.fleet[0].definition == var.expected["fleet-state-machine-definition"] && aws_sfn_state_machine.fleet[0].type == "STANDARD" && aws_sfn_state_machine.fleet[0].role_arn == aws_iam_role.fleet_state_machine[0].arn
    error_message = "the state machine's definition differs from the Python rendering"
  }
  assert {
    condition     = aws_iam_role_policy.retention_scheduler[0].policy == var.expected["retention-scheduler"] && aws_iam_role.retention_scheduler[0].assume_role_policy == var.expected["retention-scheduler-trust"]
    error_message = "the schedule role's policies differ from the Python rendering"
  }
  assert {
    condition     = aws_scheduler_schedule.retention[0].target[0].arn == aws_sfn_state_machine.fleet[0].arn && aws_scheduler_schedule.retention[0].target[0].role_arn == aws_iam_role.retention_scheduler[0].arn && aws_scheduler_schedule.retention[0].schedule_expression == "rate(1 day)" && aws_scheduler_schedule.retention[0].group_name == "s3memory-retention"
    error_message = "the schedule starts the state machine daily with its own role, in its own group"
  }
  assert {
    condition     = jsondecode(aws_scheduler_schedule.retention[0].target[0].input) == { job = "prune", options = { dry_run = false, not_accessed_for = "90d" }, stores = false, results = { bucket = "acme-s3memory-fleet", prefix = "runs/" }, batch_size = 50, max_concurrency = 100, tolerated_failure_percentage = 5 }
    error_message = "the schedule starts a prune of every agent by access"
  }
  assert {
    condition     = aws_lambda_function.fleet_worker["prune"].environment[0].variables == tomap({ S3MEMORY_BUCKET = "acme-s3memory", S3MEMORY_KEYSTORE_BUCKET = "acme-s3memory-keys", S3MEMORY_PREFIX = "agents/", S3MEMORY_REGION = "eu-west-1", S3MEMORY_NAMES = "plain", S3MEMORY_FLEET_ROLE_CLASS = "prune", S3MEMORY_FLEET_RESULTS_URI = "s3://acme-s3memory-fleet/runs/", S3MEMORY_MAX_WORKERS = "32" }) && !contains(keys(aws_lambda_function.fleet_worker["inspect"].environment[0].variables), "S3MEMORY_KMS_KEY_ID") && aws_lambda_function.fleet_worker["audit"].environment[0].variables["S3MEMORY_KMS_KEY_ID"] == aws_kms_key.data_keys.arn
    error_message = "the workers get where the memories are; only audit and keys get a key source"
  }
  assert {
    condition     = aws_lambda_function.fleet_worker["keys"].s3_key == "s3memory/fleet.zip" && aws_lambda_function.fleet_worker["keys"].filename == null && aws_lambda_function.fleet_worker["keys"].reserved_concurrent_executions == null && aws_lambda_function.fleet_worker["keys"].timeout == 900
    error_message = "the workers run from the S3 package with unreserved concurrency by default"
  }
  assert {
    condition     = aws_cloudwatch_metric_alarm.fleet_failed_executions[0].metric_name == "ExecutionsFailed" && aws_cloudwatch_metric_alarm.fleet_failed_executions[0].dimensions["StateMachineArn"] == aws_sfn_state_machine.fleet[0].arn && output.fleet_results_bucket == "acme-s3memory-fleet" && output.fleet_results_prefix == "runs/" && output.fleet_environment == tomap({ S3MEMORY_FLEET_STATE_MACHINE = "arn:aws:states:eu-west-1:123456789012:stateMachine:s3memory-fleet", S3MEMORY_FLEET_RESULTS = "s3://acme-s3memory-fleet/runs/" })
    error_message = "the alarm watches the state machine's failed executions; the outputs name the results"
  }
  assert {
    condition     = output.environment["S3MEMORY_TRACK_ACCESS"] == "true"
    error_message = "pruning by access asks the tools to track access"
  }
}

run "fleet_worker_concurrency_can_be_reserved" {
  command = plan

  variables {
    fleet_jobs                        = true
    fleet_package_s3                  = { bucket = "acme-artifacts", key = "s3memory/fleet.zip", object_version = "3" }
    fleet_worker_reserved_concurrency = 200
  }

  assert {
    condition     = alltrue([for f in aws_lambda_function.fleet_worker : f.reserved_concurrent_executions == 200 && f.s3_object_version == "3"])
    error_message = "fleet_worker_reserved_concurrency reserves each worker's concurrency"
  }
}

run "retention_job_by_modification_as_a_dry_run" {
  command = plan

  variables {
    fleet_jobs                    = true
    fleet_package_s3              = { bucket = "acme-artifacts", key = "s3memory/fleet.zip" }
    retention_older_than_days     = 365
    retention_dry_run             = true
    retention_schedule_expression = "cron(0 3 * * ? *)"
  }

  assert {
    condition     = jsondecode(output.retention_input_json).options == { dry_run = true, older_than = "365d" } && !contains(keys(output.environment), "S3MEMORY_TRACK_ACCESS") && aws_scheduler_schedule.retention[0].schedule_expression == "cron(0 3 * * ? *)"
    error_message = "retention_older_than_days sets older_than; a dry run says so; no access tracking"
  }
}

run "retention_by_access_and_by_modification_is_refused" {
  command = plan
  variables {
    fleet_jobs                  = true
    fleet_package_s3            = { bucket = "acme-artifacts", key = "s3memory/fleet.zip" }
    retention_not_accessed_days = 90
    retention_older_than_days   = 365
  }
  expect_failures = [aws_scheduler_schedule.retention]
}

run "retention_without_fleet_jobs_is_refused" {
  command = plan
  variables { retention_not_accessed_days = 90 }
  expect_failures = [aws_scheduler_schedule.retention]
}

run "fleet_jobs_without_a_package_are_refused" {
  command = plan
  variables { fleet_jobs = true }
  expect_failures = [aws_lambda_function.fleet_worker]
}

run "zero_day_retention_is_refused" {
  command = plan
  variables { retention_not_accessed_days = 0 }
  expect_failures = [var.retention_not_accessed_days]
}

run "at_schedule_expression_is_refused" {
  command = plan
  variables { retention_schedule_expression = "at(2030-01-01T00:00:00)" }
  expect_failures = [var.retention_schedule_expression]
}

# --- issue 36: the compliance profile and multi-region memory ---------------------------------

run "compliance_profile_locks_the_memory_bucket_never_the_keystore" {
  command = apply

  variables {
    compliance_profile = { mode = "COMPLIANCE", retention_days = 365 }
  }

  assert {
    condition     = aws_s3_bucket.this.object_lock_enabled == true && aws_s3_bucket.keystore.object_lock_enabled != true
    error_message = "Object Lock goes on the memory bucket only"
  }
  assert {
    condition     = [for r in aws_s3_bucket_object_lock_configuration.this[0].rule : [r.default_retention[0].mode, r.default_retention[0].days]] == [["COMPLIANCE", 365]]
    error_message = "the default retention is the profile's"
  }
  assert {
    condition     = output.environment["S3MEMORY_KEYSTORE_BUCKET"] == "acme-s3memory-keys"
    error_message = "the tools keep their keys in the (unlocked) keystore bucket"
  }
}

run "compliance_profile_is_off_by_default" {
  command = apply

  assert {
    condition     = aws_s3_bucket.this.object_lock_enabled != true && length(aws_s3_bucket_object_lock_configuration.this) == 0
    error_message = "no Object Lock unless asked"
  }
  assert {
    condition     = length(aws_s3_bucket.replica) == 0 && length(aws_kms_replica_key.data_keys) == 0 && aws_kms_key.data_keys.multi_region != true
    error_message = "no replica unless asked"
  }
}

run "compliance_profile_needs_exactly_one_retention" {
  command = plan
  variables {
    compliance_profile = { mode = "GOVERNANCE", retention_days = 30, retention_years = 1 }
  }
  expect_failures = [var.compliance_profile]
}

run "compliance_profile_mode_is_checked" {
  command = plan
  variables {
    compliance_profile = { mode = "LEGAL", retention_days = 30 }
  }
  expect_failures = [var.compliance_profile]
}

run "replica_region_deploys_the_replica_side_with_both_features" {
  command = apply

  override_resource {
    target = aws_s3_bucket.replica
    values = { arn = "arn:aws:s3:::acme-s3memory-replica", id = "acme-s3memory-replica" }
  }
  override_resource {
    target = aws_s3_bucket.replica_keystore
    values = { arn = "arn:aws:s3:::acme-s3memory-replica-keys", id = "acme-s3memory-replica-keys" }
  }
  override_resource {
    target = aws_iam_role.replication
    values = { arn = "arn:aws:iam::123456789012:role/s3memory-replication", id = "s3memory-replication" }
  }
  override_resource {
    target = aws_kms_key.replica_sse
    values = { arn = "arn:aws:kms:eu-central-1:123456789012:key/5e4f3a2b-1c0d-4e9f-8a7b-6c5d4e3f2a1b" }
  }
  override_resource {
    target = aws_kms_replica_key.data_keys
    values = { arn = "arn:aws:kms:eu-central-1:123456789012:key/0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6", key_id = "0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6" }
  }
  override_resource {
    target = aws_iam_policy.agent_access_replica
    values = { arn = "arn:aws:iam::123456789012:policy/s3memory-agent-access-replica" }
  }

  variables {
    replica_region           = "eu-central-1"
    replication_time_control = true
    compliance_profile       = { mode = "GOVERNANCE", retention_years = 1 }
  }

  assert {
    condition     = aws_kms_key.data_keys.multi_region == true && length(aws_kms_replica_key.data_keys) == 1
    error_message = "the envelope key is a multi-region key with a replica"
  }
  assert {
    condition     = aws_s3_bucket.replica[0].bucket == "acme-s3memory-replica" && aws_s3_bucket.replica_keystore[0].bucket == "acme-s3memory-replica-keys"
    error_message = "replica bucket names default to <bucket>-replica and <replica>-keys"
  }
  assert {
    condition     = aws_s3_bucket.replica[0].object_lock_enabled == true && aws_s3_bucket.replica_keystore[0].object_lock_enabled != true
    error_message = "the replica memory bucket is locked like the primary, its keystore is not"
  }
  assert {
    condition     = aws_s3_bucket_versioning.replica[0].versioning_configuration[0].status == "Enabled" && aws_s3_bucket_versioning.replica_keystore[0].versioning_configuration[0].status == "Enabled"
    error_message = "both replica buckets are versioned"
  }
  assert {
    condition = alltrue([for c in [aws_s3_bucket_replication_configuration.memory[0], aws_s3_bucket_replication_configuration.keystore[0], aws_s3_bucket_replication_configuration.replica_memory[0], aws_s3_bucket_replication_configuration.replica_keystore[0]] :
    c.rule[0].delete_marker_replication[0].status == "Enabled" && c.rule[0].filter[0].prefix == "agents/"])
    error_message = "memory objects and keystores replicate both ways, delete markers included"
  }
  assert {
    condition     = aws_s3_bucket_replication_configuration.memory[0].rule[0].destination[0].replication_time[0].time[0].minutes == 15
    error_message = "Replication Time Control when asked"
  }
  assert {
    condition     = output.failover_environment["S3MEMORY_REGION"] == "eu-central-1" && output.failover_environment["S3MEMORY_BUCKET"] == "acme-s3memory-replica" && output.failover_environment["S3MEMORY_KEYSTORE_BUCKET"] == "acme-s3memory-replica-keys"
    error_message = "the failover environment names the replica side"
  }
  assert {
    condition     = length(aws_iam_role_policy_attachment.agent_access_replica) == 1 && length(aws_iam_policy.operator_replica) == 1
    error_message = "the agent role and an operator policy reach the replica side"
  }
}

run "replica_without_rtc_has_no_time_control" {
  command = plan
  variables {
    replica_region = "eu-central-1"
  }
  assert {
    condition     = length(aws_s3_bucket_replication_configuration.memory[0].rule[0].destination[0].replication_time) == 0
    error_message = "RTC is optional"
  }
}

run "invalid_replica_region_is_refused" {
  command = plan
  variables {
    replica_region = "Frankfurt"
  }
  expect_failures = [var.replica_region]
}
