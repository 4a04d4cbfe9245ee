# `terraform test` with a mocked AWS provider (no account, no network): the documents this
# module deploys must equal, byte for byte, the ones tests/terraform renders in Python with the
# same values (tests/terraform/deploy.py). tests/terraform/test_terraform_cli.py runs this file
# and passes the Python renderings as the `expected` variable; it also checks the validations.
# Run on its own (`terraform init && terraform test` in terraform/), it reads the same renderings
# from tests/expected.auto.tfvars.json, which tests/terraform/test_terraform_cli.py keeps equal to
# them; regenerate it after changing a policy template:
#   python -c 'import json; from tests.terraform.deploy import POLICIES, module_template_values as v; \
#     from tests.terraform.render import render_file as r; print(json.dumps({"expected": {n.removesuffix(\
#     ".json.tftpl"): r(POLICIES / n, x) for n, x in v().items()}}, indent=2, sort_keys=True))' \
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

run "retention_job_is_off_by_default" {
  command = plan

  assert {
    condition     = length(aws_lambda_function.retention) == 0 && length(aws_scheduler_schedule.retention) == 0 && length(aws_iam_role.retention) == 0 && length(aws_iam_role.retention_scheduler) == 0
    error_message = "no retention job without retention_not_accessed_days or retention_older_than_days"
  }
  assert {
    condition     = output.retention_function_arn == null && output.retention_policy_json == null && !contains(keys(output.environment), "S3MEMORY_TRACK_ACCESS")
    error_message = "the retention outputs are null and access tracking is not asked for while the job is off"
  }
}

run "retention_job_deploys_the_documents_python_renders" {
  command = apply

  variables {
    retention_not_accessed_days = 90
    retention_package_s3        = { bucket = "acme-artifacts", key = "s3memory/retention.zip" }
  }

  override_resource {
    target = aws_lambda_function.retention
    values = { arn = "arn:aws:lambda:eu-west-1:123456789012:function:s3memory-retention" }
  }
  override_resource {
    target = aws_cloudwatch_log_group.retention
    values = { arn = "arn:aws:logs:eu-west-1:123456789012:log-group:/aws/lambda/s3memory-retention" }
  }
  override_resource {
    target = aws_iam_role.retention
    values = { arn = "arn:aws:iam::123456789012:role/s3memory-retention" }
  }
  override_resource {
    target = aws_iam_role.retention_scheduler
    values = { arn = "arn:aws:iam::123456789012:role/s3memory-retention-scheduler" }
  }
  override_resource {
    target = aws_scheduler_schedule_group.retention
    values = { arn = "arn:aws:scheduler:eu-west-1:123456789012:schedule-group/s3memory-retention" }
  }

  assert {
    condition     = aws_iam_role_policy.retention[0].policy == var.expected["retention-function"] && output.retention_policy_json == var.expected["retention-function"]
    error_message = "retention function policy differs from the Python rendering"
  }
  assert {
    condition     = aws_iam_role.retention[0].assume_role_policy == var.expected["retention-trust"]
    error_message = "retention function trust policy differs from the Python rendering"
  }
  assert {
    condition     = aws_iam_role_policy.retention_scheduler[0].policy == var.expected["retention-scheduler"] && output.retention_scheduler_policy_json == var.expected["retention-scheduler"]
    error_message = "schedule role policy differs from the Python rendering"
  }
  assert {
    condition     = aws_iam_role.retention_scheduler[0].assume_role_policy == var.expected["retention-scheduler-trust"]
    error_message = "schedule role trust policy differs from the Python rendering"
  }
  assert {
    condition     = aws_scheduler_schedule.retention[0].target[0].arn == aws_lambda_function.retention[0].arn && aws_scheduler_schedule.retention[0].target[0].role_arn == aws_iam_role.retention_scheduler[0].arn && aws_scheduler_schedule.retention[0].schedule_expression == "rate(1 day)" && aws_scheduler_schedule.retention[0].group_name == "s3memory-retention"
    error_message = "the schedule invokes the function daily with its own role, in its own group"
  }
  assert {
    condition     = aws_lambda_function.retention[0].environment[0].variables == tomap({ S3MEMORY_BUCKET = "acme-s3memory", S3MEMORY_PREFIX = "agents/", S3MEMORY_REGION = "eu-west-1", RETENTION_DRY_RUN = "false", RETENTION_NOT_ACCESSED_DAYS = "90" })
    error_message = "the function gets the bucket, prefix, region and period only (no key source, no keystore)"
  }
  assert {
    condition     = aws_lambda_function.retention[0].role == aws_iam_role.retention[0].arn && aws_lambda_function.retention[0].reserved_concurrent_executions == 1 && aws_lambda_function.retention[0].s3_key == "s3memory/retention.zip" && aws_lambda_function.retention[0].filename == null
    error_message = "the function runs as its role, one run at a time, from the S3 package"
  }
  assert {
    condition     = output.environment["S3MEMORY_TRACK_ACCESS"] == "true"
    error_message = "pruning by access asks the tools to track access"
  }
}

run "retention_job_by_modification" {
  command = plan

  variables {
    retention_older_than_days     = 365
    retention_schedule_expression = "cron(0 3 * * ? *)"
    retention_package_s3          = { bucket = "acme-artifacts", key = "s3memory/retention.zip" }
  }

  assert {
    condition     = aws_lambda_function.retention[0].environment[0].variables["RETENTION_OLDER_THAN_DAYS"] == "365" && !contains(keys(aws_lambda_function.retention[0].environment[0].variables), "RETENTION_NOT_ACCESSED_DAYS")
    error_message = "retention_older_than_days sets --older-than"
  }
  assert {
    condition     = !contains(keys(output.environment), "S3MEMORY_TRACK_ACCESS") && aws_scheduler_schedule.retention[0].schedule_expression == "cron(0 3 * * ? *)"
    error_message = "pruning by modification needs no access tracking"
  }
}

run "retention_by_access_and_by_modification_is_refused" {
  command = plan
  variables {
    retention_not_accessed_days = 90
    retention_older_than_days   = 365
    retention_package_s3        = { bucket = "acme-artifacts", key = "s3memory/retention.zip" }
  }
  expect_failures = [aws_lambda_function.retention]
}

run "retention_without_a_package_is_refused" {
  command = plan
  variables { retention_not_accessed_days = 90 }
  expect_failures = [aws_lambda_function.retention]
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
