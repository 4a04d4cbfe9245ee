output "environment" {
  description = "S3MEMORY_* for the tools and the CLI in the primary region."
  value       = module.s3memory.environment
}

output "failover_environment" {
  description = "S3MEMORY_* for the tools and the CLI in the replica region, after a failover."
  value       = module.s3memory.failover_environment
}
