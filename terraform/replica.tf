################################################################################
# Multi-region memory: replica buckets, a replica of the envelope key, S3 replication both ways
################################################################################

# With replica_region set, the caller's `aws.replica` provider (configured for that region) gets:
#   - a replica of the envelope key (aws_kms_key.data_keys is then a multi-region key: same key
#     material and key id in both regions, so a branch key wrapped in one region unwraps in the
#     other), and a regional key for the replica buckets' default encryption;
#   - a versioned replica memory bucket and a versioned replica keystore bucket, hardened like
#     the primary ones (same bucket policies), with Object Lock when compliance_profile is set;
#   - replication of every object under `prefix` in both directions (primary -> replica for normal
#     operation, replica -> primary for failback), delete markers included, Replication Time
#     Control when replication_time_control is true;
#   - the agent role and the operator policy extended to the replica side (same ABAC grants).
# Replication copies bytes and metadata, not version ids: see docs/disaster-recovery.md.
# Crypto-shredding with a replica: S3 does not replicate the deletion of a version, so
# `s3memory shred` must be run against each region (SECURITY.md).

locals {
  replicated                   = var.replica_region != null
  replica_bucket_name          = coalesce(var.replica_bucket_name, "${var.bucket_name}-replica")
  replica_keystore_bucket_name = coalesce(var.replica_keystore_bucket_name, "${local.replica_bucket_name}-keys")

  replica_agent_access_policy = local.replicated ? templatefile("${path.module}/policies/agent-access.json.tftpl", {
    bucket_arn          = aws_s3_bucket.replica[0].arn
    keystore_bucket_arn = aws_s3_bucket.replica_keystore[0].arn
    agent_prefix        = var.prefix
    data_key_arn        = aws_kms_replica_key.data_keys[0].arn
    sse_key_arn         = aws_kms_key.replica_sse[0].arn
    region              = var.replica_region
  }) : null
  replica_bucket_policy = local.replicated ? templatefile("${path.module}/policies/bucket.json.tftpl", {
    bucket_arn     = aws_s3_bucket.replica[0].arn
    agent_prefix   = var.prefix
    agent_role_arn = aws_iam_role.agent_access.arn
  }) : null
  replica_keystore_bucket_policy = local.replicated ? templatefile("${path.module}/policies/keystore-bucket.json.tftpl", {
    keystore_bucket_arn = aws_s3_bucket.replica_keystore[0].arn
    agent_prefix        = var.prefix
    agent_role_arn      = aws_iam_role.agent_access.arn
  }) : null
  replica_sse_key_policy = local.replicated ? templatefile("${path.module}/policies/sse-key.json.tftpl", {
    account_root_arn = local.account_root_arn
    agent_role_arn   = aws_iam_role.agent_access.arn
    region           = var.replica_region
  }) : null
  replica_operator_policy = local.replicated ? templatefile("${path.module}/policies/operator.json.tftpl", {
    bucket_arn          = aws_s3_bucket.replica[0].arn
    keystore_bucket_arn = aws_s3_bucket.replica_keystore[0].arn
    agent_prefix        = var.prefix
    data_key_arn        = aws_kms_replica_key.data_keys[0].arn
    sse_key_arn         = aws_kms_key.replica_sse[0].arn
    region              = var.replica_region
  }) : null
  replication_trust_policy = local.replicated ? templatefile("${path.module}/policies/replication-trust.json.tftpl", {
    account_id = data.aws_caller_identity.current.account_id
  }) : null
  replication_policy = local.replicated ? templatefile("${path.module}/policies/replication.json.tftpl", {
    bucket_arn                  = aws_s3_bucket.this.arn
    keystore_bucket_arn         = aws_s3_bucket.keystore.arn
    replica_bucket_arn          = aws_s3_bucket.replica[0].arn
    replica_keystore_bucket_arn = aws_s3_bucket.replica_keystore[0].arn
    agent_prefix                = var.prefix
    sse_key_arn                 = aws_kms_key.sse.arn
    replica_sse_key_arn         = aws_kms_key.replica_sse[0].arn
    region                      = local.region
    replica_region              = var.replica_region
  }) : null

  # source bucket -> (destination bucket ARN, destination SSE key ARN), per direction and bucket
  replication_rules = local.replicated ? {
    memory_to_replica   = { destination = aws_s3_bucket.replica[0].arn, key = aws_kms_key.replica_sse[0].arn }
    keystore_to_replica = { destination = aws_s3_bucket.replica_keystore[0].arn, key = aws_kms_key.replica_sse[0].arn }
    memory_to_primary   = { destination = aws_s3_bucket.this.arn, key = aws_kms_key.sse.arn }
    keystore_to_primary = { destination = aws_s3_bucket.keystore.arn, key = aws_kms_key.sse.arn }
  } : {}
}

# --- KMS in the replica region ---------------------------------------------------------------

resource "aws_kms_replica_key" "data_keys" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  description             = "s3memory envelope data keys (${var.bucket_name}), replica in ${var.replica_region}; encryption context s3memory:agent"
  primary_key_arn         = aws_kms_key.data_keys.arn
  deletion_window_in_days = var.kms_deletion_window_in_days
  policy                  = local.data_key_policy
  tags                    = var.tags
}

resource "aws_kms_alias" "replica_data_keys" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  name          = "alias/${var.name}-data-keys"
  target_key_id = aws_kms_replica_key.data_keys[0].key_id
}

resource "aws_kms_key" "replica_sse" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  description             = "s3memory replica buckets' default encryption (${local.replica_bucket_name}); used by S3 with Bucket Keys"
  key_usage               = "ENCRYPT_DECRYPT"
  enable_key_rotation     = true
  deletion_window_in_days = var.kms_deletion_window_in_days
  policy                  = local.replica_sse_key_policy
  tags                    = var.tags
}

# --- the replica memory bucket -----------------------------------------------------------------

resource "aws_s3_bucket" "replica" {
  # checkov:skip=CKV_AWS_144:This bucket is the cross-region replica; it replicates back to the primary (aws_s3_bucket_replication_configuration.replica_memory).
  # checkov:skip=CKV_AWS_18:Server access logs must go to a bucket in the same region; access_log_bucket is in the primary region. Add logging for the replica region where a log bucket exists there.
  # checkov:skip=CKV2_AWS_62:Nothing consumes S3 event notifications for memory objects.
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket              = local.replica_bucket_name
  force_destroy       = var.force_destroy
  object_lock_enabled = local.compliance
  tags                = var.tags
}

resource "aws_s3_bucket_public_access_block" "replica" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket                  = aws_s3_bucket.replica[0].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "replica" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket = aws_s3_bucket.replica[0].id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_versioning" "replica" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket = aws_s3_bucket.replica[0].id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "replica" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket = aws_s3_bucket.replica[0].id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.replica_sse[0].arn
    }
    bucket_key_enabled = true
  }
}

resource "aws_s3_bucket_policy" "replica" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket     = aws_s3_bucket.replica[0].id
  policy     = local.replica_bucket_policy
  depends_on = [aws_s3_bucket_public_access_block.replica]
}

resource "aws_s3_bucket_object_lock_configuration" "replica" {
  count    = local.replicated && local.compliance ? 1 : 0
  provider = aws.replica

  bucket = aws_s3_bucket.replica[0].id
  rule {
    default_retention {
      mode  = var.compliance_profile.mode
      days  = var.compliance_profile.retention_days
      years = var.compliance_profile.retention_years
    }
  }
  depends_on = [aws_s3_bucket_versioning.replica]
}

# The primary's lifecycle rules, again: S3 does not replicate lifecycle configurations.
resource "aws_s3_bucket_lifecycle_configuration" "replica" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket = aws_s3_bucket.replica[0].id

  rule {
    id     = "abort-incomplete-multipart-uploads"
    status = "Enabled"
    filter {}
    abort_incomplete_multipart_upload {
      days_after_initiation = var.abort_incomplete_multipart_upload_days
    }
  }

  rule {
    id     = "memory-versions"
    status = "Enabled"
    filter {
      prefix = var.prefix
    }
    noncurrent_version_expiration {
      noncurrent_days = var.noncurrent_version_expiration_days
    }
    expiration {
      days                         = var.memory_expiration_days
      expired_object_delete_marker = var.memory_expiration_days == null ? true : null
    }
  }

  depends_on = [aws_s3_bucket_versioning.replica]
}

# --- the replica keystore bucket (never a lifecycle rule, never Object Lock) -------------------

resource "aws_s3_bucket" "replica_keystore" {
  # checkov:skip=CKV_AWS_144:This bucket is the cross-region replica of the keystore; it replicates back to the primary keystore.
  # checkov:skip=CKV_AWS_18:Server access logs must go to a bucket in the same region; access_log_bucket is in the primary region.
  # checkov:skip=CKV2_AWS_61:Deliberately no lifecycle configuration: an expiry rule would delete branch keys that memories still need.
  # checkov:skip=CKV2_AWS_62:Nothing consumes S3 event notifications for branch keys.
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket        = local.replica_keystore_bucket_name
  force_destroy = var.force_destroy
  tags          = var.tags

  lifecycle {
    precondition {
      condition     = length(local.replica_keystore_bucket_name) <= 63 && local.replica_keystore_bucket_name != local.replica_bucket_name
      error_message = "The replica keystore bucket name (replica_keystore_bucket_name, or \"<replica bucket name>-keys\") must be at most 63 characters and differ from the replica bucket name."
    }
  }
}

resource "aws_s3_bucket_public_access_block" "replica_keystore" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket                  = aws_s3_bucket.replica_keystore[0].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "replica_keystore" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket = aws_s3_bucket.replica_keystore[0].id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_versioning" "replica_keystore" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket = aws_s3_bucket.replica_keystore[0].id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "replica_keystore" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket = aws_s3_bucket.replica_keystore[0].id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.replica_sse[0].arn
    }
    bucket_key_enabled = true
  }
}

resource "aws_s3_bucket_policy" "replica_keystore" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket     = aws_s3_bucket.replica_keystore[0].id
  policy     = local.replica_keystore_bucket_policy
  depends_on = [aws_s3_bucket_public_access_block.replica_keystore]
}

# --- replication, both ways --------------------------------------------------------------------

resource "aws_iam_role" "replication" {
  count = local.replicated ? 1 : 0

  name               = "${var.name}-replication"
  description        = "S3 replication of s3memory's memory and keystore buckets between ${local.region} and ${var.replica_region}"
  assume_role_policy = local.replication_trust_policy
  tags               = var.tags
}

resource "aws_iam_role_policy" "replication" {
  count = local.replicated ? 1 : 0

  name   = "s3memory-replication"
  role   = aws_iam_role.replication[0].id
  policy = local.replication_policy
}

resource "aws_s3_bucket_replication_configuration" "memory" {
  count = local.replicated ? 1 : 0

  bucket = aws_s3_bucket.this.id
  role   = aws_iam_role.replication[0].arn
  rule {
    id     = "memory-to-replica"
    status = "Enabled"
    filter {
      prefix = var.prefix
    }
    delete_marker_replication {
      status = "Enabled"
    }
    source_selection_criteria {
      sse_kms_encrypted_objects {
        status = "Enabled"
      }
      replica_modifications {
        status = "Enabled"
      }
    }
    destination {
      bucket        = local.replication_rules.memory_to_replica.destination
      storage_class = "STANDARD"
      encryption_configuration {
        replica_kms_key_id = local.replication_rules.memory_to_replica.key
      }
      dynamic "replication_time" {
        for_each = var.replication_time_control ? [1] : []
        content {
          status = "Enabled"
          time {
            minutes = 15
          }
        }
      }
      dynamic "metrics" {
        for_each = var.replication_time_control ? [1] : []
        content {
          status = "Enabled"
          event_threshold {
            minutes = 15
          }
        }
      }
    }
  }
  depends_on = [aws_s3_bucket_versioning.this, aws_s3_bucket_versioning.replica]
}

resource "aws_s3_bucket_replication_configuration" "keystore" {
  count = local.replicated ? 1 : 0

  bucket = aws_s3_bucket.keystore.id
  role   = aws_iam_role.replication[0].arn
  rule {
    id     = "keystore-to-replica"
    status = "Enabled"
    filter {
      prefix = var.prefix
    }
    delete_marker_replication {
      status = "Enabled"
    }
    source_selection_criteria {
      sse_kms_encrypted_objects {
        status = "Enabled"
      }
      replica_modifications {
        status = "Enabled"
      }
    }
    destination {
      bucket        = local.replication_rules.keystore_to_replica.destination
      storage_class = "STANDARD"
      encryption_configuration {
        replica_kms_key_id = local.replication_rules.keystore_to_replica.key
      }
      dynamic "replication_time" {
        for_each = var.replication_time_control ? [1] : []
        content {
          status = "Enabled"
          time {
            minutes = 15
          }
        }
      }
      dynamic "metrics" {
        for_each = var.replication_time_control ? [1] : []
        content {
          status = "Enabled"
          event_threshold {
            minutes = 15
          }
        }
      }
    }
  }
  depends_on = [aws_s3_bucket_versioning.keystore, aws_s3_bucket_versioning.replica_keystore]
}

# Failback: what agents write on the replica during a failover flows back to the primary.
resource "aws_s3_bucket_replication_configuration" "replica_memory" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket = aws_s3_bucket.replica[0].id
  role   = aws_iam_role.replication[0].arn
  rule {
    id     = "memory-to-primary"
    status = "Enabled"
    filter {
      prefix = var.prefix
    }
    delete_marker_replication {
      status = "Enabled"
    }
    source_selection_criteria {
      sse_kms_encrypted_objects {
        status = "Enabled"
      }
      replica_modifications {
        status = "Enabled"
      }
    }
    destination {
      bucket        = local.replication_rules.memory_to_primary.destination
      storage_class = "STANDARD"
      encryption_configuration {
        replica_kms_key_id = local.replication_rules.memory_to_primary.key
      }
    }
  }
  depends_on = [aws_s3_bucket_versioning.this, aws_s3_bucket_versioning.replica]
}

resource "aws_s3_bucket_replication_configuration" "replica_keystore" {
  count    = local.replicated ? 1 : 0
  provider = aws.replica

  bucket = aws_s3_bucket.replica_keystore[0].id
  role   = aws_iam_role.replication[0].arn
  rule {
    id     = "keystore-to-primary"
    status = "Enabled"
    filter {
      prefix = var.prefix
    }
    delete_marker_replication {
      status = "Enabled"
    }
    source_selection_criteria {
      sse_kms_encrypted_objects {
        status = "Enabled"
      }
      replica_modifications {
        status = "Enabled"
      }
    }
    destination {
      bucket        = local.replication_rules.keystore_to_primary.destination
      storage_class = "STANDARD"
      encryption_configuration {
        replica_kms_key_id = local.replication_rules.keystore_to_primary.key
      }
    }
  }
  depends_on = [aws_s3_bucket_versioning.keystore, aws_s3_bucket_versioning.replica_keystore]
}

# --- the agent role and the operator policy on the replica side --------------------------------

# A managed policy (not a second inline one): the role's inline policies share 10,240 characters.
resource "aws_iam_policy" "agent_access_replica" {
  count = local.replicated ? 1 : 0

  name        = "${var.name}-agent-access-replica"
  description = "s3memory agents in ${var.replica_region}: each session reaches only ${var.prefix}<s3memory-agent tag>/ in ${local.replica_bucket_name}, its own branch keys in ${local.replica_keystore_bucket_name} and its own data keys under the replica key"
  policy      = local.replica_agent_access_policy
  tags        = var.tags
}

resource "aws_iam_role_policy_attachment" "agent_access_replica" {
  count = local.replicated ? 1 : 0

  role       = aws_iam_role.agent_access.name
  policy_arn = aws_iam_policy.agent_access_replica[0].arn
}

resource "aws_iam_policy" "operator_replica" {
  count = local.replicated ? 1 : 0

  name        = "${var.name}-operator-replica"
  description = "s3memory operator commands on the replica ${local.replica_bucket_name} in ${var.replica_region} (failover, failback, doctor --replica); attach to operators only, never to agents"
  policy      = local.replica_operator_policy
  tags        = var.tags
}
