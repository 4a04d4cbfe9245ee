# Both features of issue 36 at once: multi-region memory (a replica in a second region, S3
# replication both ways, a multi-region envelope key) and the compliance profile (Object Lock on
# the memory buckets, never on the keystore buckets). docs/disaster-recovery.md runs the drill.

provider "aws" {
  region = var.region
}

provider "aws" {
  alias  = "replica"
  region = var.replica_region
}

module "s3memory" {
  source = "../.."
  providers = {
    aws         = aws
    aws.replica = aws.replica
  }

  bucket_name                       = var.bucket_name
  agent_role_trusted_principal_arns = var.agent_role_trusted_principal_arns
  replica_region                    = var.replica_region
  replication_time_control          = true
  compliance_profile = {
    mode           = var.lock_mode
    retention_days = var.retention_days
  }
}
