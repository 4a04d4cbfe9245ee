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
