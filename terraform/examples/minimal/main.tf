# The smallest deployment of the module: the memory bucket, its keystore bucket, the KMS keys and
# the agent-access role that `assume_agent_session` assumes. Everything else keeps its default.

provider "aws" {
  region = var.region
}

module "s3memory" {
  source = "../.."
  # The module takes a provider for the replica region too; without replica_region it is never used.
  providers = {
    aws         = aws
    aws.replica = aws
  }

  bucket_name                       = var.bucket_name
  agent_role_trusted_principal_arns = var.agent_role_trusted_principal_arns
}
