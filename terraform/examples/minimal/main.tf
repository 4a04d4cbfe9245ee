# The smallest deployment of the module: the memory bucket, its keystore bucket, the KMS keys and
# the agent-access role that `assume_agent_session` assumes. Everything else keeps its default.

provider "aws" {
  region = var.region
}

module "s3memory" {
  source = "../.."

  bucket_name                       = var.bucket_name
  agent_role_trusted_principal_arns = var.agent_role_trusted_principal_arns
}

variable "region" {
  description = "AWS region of the buckets and keys."
  type        = string
  default     = "eu-west-1"
}

variable "bucket_name" {
  description = "Name of the memory bucket (globally unique)."
  type        = string
}

variable "agent_role_trusted_principal_arns" {
  description = "Roles (e.g. your agent's Lambda role) allowed to assume the agent-access role."
  type        = list(string)
}

output "s3memory_environment" {
  description = "The S3MEMORY_* settings a tool needs (from_env reads them)."
  value = {
    S3MEMORY_BUCKET          = module.s3memory.bucket_name
    S3MEMORY_KEYSTORE_BUCKET = module.s3memory.keystore_bucket_name
    S3MEMORY_PREFIX          = module.s3memory.prefix
    S3MEMORY_KMS_KEY_ID      = module.s3memory.data_key_arn
    S3MEMORY_AGENT_ROLE_ARN  = module.s3memory.agent_role_arn
  }
}
