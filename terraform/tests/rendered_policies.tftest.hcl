# `terraform test` with a mocked AWS provider (no account, no network): the documents this
# module deploys must equal, byte for byte, the ones tests/terraform renders in Python with the
# same values (tests/terraform/deploy.py). tests/terraform/test_terraform_cli.py runs this file
# and passes the Python renderings as the `expected` variable; it also checks the validations.
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
