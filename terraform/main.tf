data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}

locals {
  # The session tag that carries the agent id; it must match s3memory.sts.AGENT_TAG_KEY.
  agent_tag_key    = "s3memory-agent"
  account_root_arn = "arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root"
  region           = data.aws_region.current.name
  access_log_path  = coalesce(var.access_log_prefix, "${var.bucket_name}/")

  # The keystore bucket (branch keys, format v2): its own bucket so that no lifecycle rule or
  # replication of the memory bucket can ever reach a branch key.
  keystore_bucket_name     = coalesce(var.keystore_bucket_name, "${var.bucket_name}-keys")
  keystore_access_log_path = coalesce(var.access_log_prefix, "${local.keystore_bucket_name}/")

  # Every policy is a JSON template under policies/, rendered here and, with the same values,
  # by tests/terraform/render.py, so the documents that are tested are the ones deployed.
  agent_trust_policy = templatefile("${path.module}/policies/agent-trust.json.tftpl", {
    trusted_principal_arns = jsonencode(var.agent_role_trusted_principal_arns)
  })
  agent_access_policy = templatefile("${path.module}/policies/agent-access.json.tftpl", {
    bucket_arn          = aws_s3_bucket.this.arn
    keystore_bucket_arn = aws_s3_bucket.keystore.arn
    agent_prefix        = var.prefix
    data_key_arn        = aws_kms_key.data_keys.arn
    sse_key_arn         = aws_kms_key.sse.arn
    region              = local.region
  })
  bucket_policy = templatefile("${path.module}/policies/bucket.json.tftpl", {
    bucket_arn     = aws_s3_bucket.this.arn
    agent_prefix   = var.prefix
    agent_role_arn = aws_iam_role.agent_access.arn
  })
  keystore_bucket_policy = templatefile("${path.module}/policies/keystore-bucket.json.tftpl", {
    keystore_bucket_arn = aws_s3_bucket.keystore.arn
    agent_prefix        = var.prefix
    agent_role_arn      = aws_iam_role.agent_access.arn
  })
  data_key_policy = templatefile("${path.module}/policies/data-key.json.tftpl", {
    account_root_arn = local.account_root_arn
    agent_role_arn   = aws_iam_role.agent_access.arn
  })
  sse_key_policy = templatefile("${path.module}/policies/sse-key.json.tftpl", {
    account_root_arn = local.account_root_arn
    agent_role_arn   = aws_iam_role.agent_access.arn
    region           = local.region
  })
  # Shared stores (issue: S3MEMORY_MOUNTS): one read policy per store for its readers and writers,
  # one write policy per store that has writers. Agent-id patterns are IAM StringLike patterns.
  store_read_policies = { for id, store in var.stores : id => templatefile("${path.module}/policies/store-read.json.tftpl", {
    bucket_arn          = aws_s3_bucket.this.arn
    keystore_bucket_arn = aws_s3_bucket.keystore.arn
    store_prefix        = "${var.prefix}_stores/${id}/"
    store_owner         = "_stores/${id}"
    agents              = jsonencode(distinct(concat(store.readers, store.writers)))
    data_key_arn        = aws_kms_key.data_keys.arn
    sse_key_arn         = aws_kms_key.sse.arn
    region              = local.region
  }) }
  store_write_policies = { for id, store in var.stores : id => templatefile("${path.module}/policies/store-write.json.tftpl", {
    bucket_arn          = aws_s3_bucket.this.arn
    keystore_bucket_arn = aws_s3_bucket.keystore.arn
    store_prefix        = "${var.prefix}_stores/${id}/"
    store_owner         = "_stores/${id}"
    agents              = jsonencode(store.writers)
    data_key_arn        = aws_kms_key.data_keys.arn
    sse_key_arn         = aws_kms_key.sse.arn
    region              = local.region
  }) if length(store.writers) > 0 }
  operator_policy = templatefile("${path.module}/policies/operator.json.tftpl", {
    bucket_arn          = aws_s3_bucket.this.arn
    keystore_bucket_arn = aws_s3_bucket.keystore.arn
    agent_prefix        = var.prefix
    data_key_arn        = aws_kms_key.data_keys.arn
    sse_key_arn         = aws_kms_key.sse.arn
    region              = local.region
  })
}

################################################################################
# KMS: one key for the envelope data keys, a separate one for bucket default SSE
################################################################################

# The envelope key. Agents reach it only with the encryption context
# {"s3memory:agent": <their own session tag>}; see README "Why two KMS keys".
resource "aws_kms_key" "data_keys" {
  description             = "s3memory envelope data keys (${var.bucket_name}); encryption context s3memory:agent"
  key_usage               = "ENCRYPT_DECRYPT"
  enable_key_rotation     = true
  deletion_window_in_days = var.kms_deletion_window_in_days
  policy                  = local.data_key_policy
  tags                    = var.tags

  # replica_region (replica.tf): a multi-region key, replicated there. Only at creation: changing
  # it replaces the key, and every branch key wrapped by the old one (docs/disaster-recovery.md).
  multi_region = var.replica_region != null
}

resource "aws_kms_alias" "data_keys" {
  name          = "alias/${var.name}-data-keys"
  target_key_id = aws_kms_key.data_keys.key_id
}

# Default SSE for the bucket. It must not be the envelope key: S3 calls KMS with the
# context {"aws:s3:arn": ...}, which the envelope key's agent condition refuses.
resource "aws_kms_key" "sse" {
  description             = "s3memory bucket default encryption (${var.bucket_name}); used by S3 with Bucket Keys"
  key_usage               = "ENCRYPT_DECRYPT"
  enable_key_rotation     = true
  deletion_window_in_days = var.kms_deletion_window_in_days
  policy                  = local.sse_key_policy
  tags                    = var.tags
}

resource "aws_kms_alias" "sse" {
  name          = "alias/${var.name}-s3-sse"
  target_key_id = aws_kms_key.sse.key_id
}

################################################################################
# S3 bucket
################################################################################

resource "aws_s3_bucket" "this" {
  # checkov:skip=CKV_AWS_144:Cross-region replication needs a second region with its own bucket, keys and agent role; it is a deployment choice outside this module. Versioning covers recovery within the region.
  # checkov:skip=CKV2_AWS_62:Nothing consumes S3 event notifications for memory objects; notifications for every memory write would only add cost. Add them where a consumer exists.
  bucket        = var.bucket_name
  force_destroy = var.force_destroy
  tags          = var.tags

  # compliance_profile (compliance.tf): Object Lock can only be turned on when the bucket is created.
  object_lock_enabled = var.compliance_profile != null
}

resource "aws_s3_bucket_public_access_block" "this" {
  bucket                  = aws_s3_bucket.this.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_versioning" "this" {
  bucket = aws_s3_bucket.this.id

  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  bucket = aws_s3_bucket.this.id

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.sse.arn
    }
    bucket_key_enabled = true
  }
}

resource "aws_s3_bucket_policy" "this" {
  bucket = aws_s3_bucket.this.id
  policy = local.bucket_policy

  # The public access block must exist first, or S3 may evaluate the policy without it.
  depends_on = [aws_s3_bucket_public_access_block.this]
}

resource "aws_s3_bucket_lifecycle_configuration" "this" {
  bucket = aws_s3_bucket.this.id

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

    # Branch keys are out of this rule's reach: they live in the keystore bucket, which has no
    # lifecycle configuration (the `environment` output sets S3MEMORY_KEYSTORE_BUCKET; without
    # it the library keeps them under <prefix><agent>/.s3memory/keys/ here, inside this prefix).
    # With memory_expiration_days set, current versions expire that many days after their last
    # write (S3 then also removes expired delete markers itself); without it, only expired
    # delete markers are cleaned up. S3 refuses both settings in one expiration block.
    expiration {
      days                         = var.memory_expiration_days
      expired_object_delete_marker = var.memory_expiration_days == null ? true : null
    }
  }

  # Lifecycle rules act on versions, so versioning must be configured first.
  depends_on = [aws_s3_bucket_versioning.this]
}

resource "aws_s3_bucket_logging" "this" {
  count = var.access_log_bucket == null ? 0 : 1

  bucket        = aws_s3_bucket.this.id
  target_bucket = var.access_log_bucket
  target_prefix = local.access_log_path
}

################################################################################
# S3 keystore bucket: the agents' branch keys (object format v2)
################################################################################

# Branch keys live in `<prefix><agent_id>/.s3memory/keys/` of this bucket (the library's
# S3MEMORY_KEYSTORE_BUCKET). Crypto-shredding (`s3memory shred`) deletes every version of an
# agent's branch keys and relies on no other copy of them surviving, so this bucket
# deliberately has:
#   - no replication (no replica bucket may keep a branch key after shred),
#   - no lifecycle configuration (no rule may expire a branch key that memories still need;
#     in particular memory_expiration_days acts on the memory bucket only),
# and must not be added to AWS Backup or any other copy mechanism.
# Versioning is on so that an accidental delete can be undone; shred deletes all versions.
resource "aws_s3_bucket" "keystore" {
  # checkov:skip=CKV_AWS_144:Deliberately not replicated: crypto-shredding (s3memory shred) holds only if no replica of a branch key survives the deletion of every version here.
  # checkov:skip=CKV2_AWS_61:Deliberately no lifecycle configuration: an expiry rule would delete branch keys that memories still need, and noncurrent versions are removed by s3memory shred, not by age.
  # checkov:skip=CKV2_AWS_62:Nothing consumes S3 event notifications for branch keys.
  bucket        = local.keystore_bucket_name
  force_destroy = var.force_destroy
  tags          = var.tags

  lifecycle {
    precondition {
      condition     = length(local.keystore_bucket_name) <= 63 && local.keystore_bucket_name != var.bucket_name
      error_message = "The keystore bucket name (keystore_bucket_name, or \"<bucket_name>-keys\" when it is null) must be at most 63 characters and differ from bucket_name; set keystore_bucket_name."
    }
  }
}

resource "aws_s3_bucket_public_access_block" "keystore" {
  bucket                  = aws_s3_bucket.keystore.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "keystore" {
  bucket = aws_s3_bucket.keystore.id

  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_versioning" "keystore" {
  bucket = aws_s3_bucket.keystore.id

  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "keystore" {
  bucket = aws_s3_bucket.keystore.id

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.sse.arn
    }
    bucket_key_enabled = true
  }
}

resource "aws_s3_bucket_policy" "keystore" {
  bucket = aws_s3_bucket.keystore.id
  policy = local.keystore_bucket_policy

  depends_on = [aws_s3_bucket_public_access_block.keystore]
}

resource "aws_s3_bucket_logging" "keystore" {
  count = var.access_log_bucket == null ? 0 : 1

  bucket        = aws_s3_bucket.keystore.id
  target_bucket = var.access_log_bucket
  target_prefix = local.keystore_access_log_path
}

################################################################################
# IAM: the agent-access role (ABAC on the s3memory-agent session tag)
################################################################################

resource "aws_iam_role" "agent_access" {
  name                 = "${var.name}-agent-access"
  description          = "s3memory agents: each session reaches only ${var.prefix}<s3memory-agent tag>/ in ${var.bucket_name}, its own branch keys in ${local.keystore_bucket_name} and its own data keys"
  assume_role_policy   = local.agent_trust_policy
  max_session_duration = var.agent_role_max_session_duration
  tags                 = var.tags
}

resource "aws_iam_role_policy" "agent_access" {
  name   = "s3memory-agent-access"
  role   = aws_iam_role.agent_access.id
  policy = local.agent_access_policy
}

# Shared stores: managed policies (a role has 10 managed policies by default, 20 at most), so
# stores do not eat into the 10,240-character budget of the role's inline policy.
resource "aws_iam_policy" "store_read" {
  for_each    = local.store_read_policies
  name        = "${var.name}-store-${each.key}-read"
  description = "s3memory: read the shared store ${each.key} (${var.prefix}_stores/${each.key}/) and unwrap its keys"
  policy      = each.value
  tags        = var.tags
}

resource "aws_iam_role_policy_attachment" "store_read" {
  for_each   = aws_iam_policy.store_read
  role       = aws_iam_role.agent_access.name
  policy_arn = each.value.arn
}

resource "aws_iam_policy" "store_write" {
  for_each    = local.store_write_policies
  name        = "${var.name}-store-${each.key}-write"
  description = "s3memory: write the shared store ${each.key} (${var.prefix}_stores/${each.key}/) and create its keys"
  policy      = each.value
  tags        = var.tags
}

resource "aws_iam_role_policy_attachment" "store_write" {
  for_each   = aws_iam_policy.store_write
  role       = aws_iam_role.agent_access.name
  policy_arn = each.value.arn
}

################################################################################
# IAM: the operator policy (CLI bulk commands); created, never attached to agents
################################################################################

resource "aws_iam_policy" "operator" {
  name        = "${var.name}-operator"
  description = "s3memory operator commands (export, purge of all versions, rewrap, verify) on ${var.bucket_name}; attach to operators only, never to agents"
  policy      = local.operator_policy
  tags        = var.tags
}
