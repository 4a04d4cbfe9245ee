output "function_name" {
  description = "Name of the agent function: behind an API Gateway authorizer, or invoked with {\"agent_id\": ..., \"prompt\": ...} when trust_event_agent_id is true."
  value       = aws_lambda_function.agent.function_name
}

output "function_arn" {
  description = "ARN of the agent function."
  value       = aws_lambda_function.agent.arn
}

output "lambda_role_arn" {
  description = "ARN of the function's execution role (trusted by the agent-access role)."
  value       = aws_iam_role.lambda.arn
}

output "lambda_execution_policy_json" {
  description = "The function role's permissions policy, as deployed."
  value       = aws_iam_role_policy.lambda.policy
}

output "bucket_name" {
  description = "Name of the memory bucket."
  value       = module.s3memory.bucket_name
}

output "bucket_arn" {
  description = "ARN of the memory bucket."
  value       = module.s3memory.bucket_arn
}

output "keystore_bucket_name" {
  description = "Name of the keystore bucket that holds the agents' branch keys (S3MEMORY_KEYSTORE_BUCKET)."
  value       = module.s3memory.keystore_bucket_name
}

output "data_key_arn" {
  description = "ARN of the envelope KMS key."
  value       = module.s3memory.data_key_arn
}

output "data_key_alias_name" {
  description = "Alias of the envelope KMS key."
  value       = module.s3memory.data_key_alias_name
}

output "agent_role_arn" {
  description = "ARN of the agent-access role the function assumes per agent."
  value       = module.s3memory.agent_role_arn
}

output "operator_policy_arn" {
  description = "ARN of the operator policy for the s3memory CLI's bulk commands (attach to operators only)."
  value       = module.s3memory.operator_policy_arn
}

output "agent_access_policy_json" {
  description = "The agent-access role's permissions policy, as deployed."
  value       = module.s3memory.agent_access_policy_json
}

output "bucket_policy_json" {
  description = "The memory bucket's policy, as deployed."
  value       = module.s3memory.bucket_policy_json
}

output "operator_policy_json" {
  description = "The operator policy document, as deployed."
  value       = module.s3memory.operator_policy_json
}

output "s3memory_layer_version_arn" {
  description = "ARN of the s3memory layer version the function uses; null when s3memory is bundled in the function's package."
  value       = one(aws_lambda_layer_version.s3memory[*].arn)
}
