################################################################################
# The compliance profile: S3 Object Lock on the memory bucket, never on the keystore bucket
################################################################################

# With compliance_profile set, every new version of a memory object is locked for the default
# retention: S3 refuses to delete or overwrite that version before its retain-until date (in
# GOVERNANCE mode unless the request bypasses governance retention with
# s3:BypassGovernanceRetention, which s3memory never sends; in COMPLIANCE mode for everyone).
# A plain DELETE still adds a delete marker, so agents and `prune` work as before; lifecycle
# rules remove noncurrent versions only once their retention has ended.
#
# The keystore bucket is never locked: crypto-shredding (`s3memory shred`) must be able to delete
# every version of an agent's branch keys, after which the locked ciphertext can no longer be
# decrypted by anyone. A lock there would make an agent impossible to erase before its
# retention ends, so the profile requires the keys in their own bucket (the module always
# creates one and sets S3MEMORY_KEYSTORE_BUCKET in the `environment` output).

locals {
  compliance = var.compliance_profile != null
}

resource "aws_s3_bucket_object_lock_configuration" "this" {
  count  = local.compliance ? 1 : 0
  bucket = aws_s3_bucket.this.id

  rule {
    default_retention {
      mode  = var.compliance_profile.mode
      days  = var.compliance_profile.retention_days
      years = var.compliance_profile.retention_years
    }
  }

  lifecycle {
    precondition {
      condition     = aws_s3_bucket.keystore.id != aws_s3_bucket.this.id && !aws_s3_bucket.keystore.object_lock_enabled
      error_message = "compliance_profile needs the branch keys in a separate keystore bucket without Object Lock (keystore_bucket_name must differ from bucket_name), or shred could not erase a locked agent."
    }
  }

  # Object Lock applies to versions: versioning must be on first (it is, and cannot be suspended).
  depends_on = [aws_s3_bucket_versioning.this]
}
