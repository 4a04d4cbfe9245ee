output "bucket_name" {
  description = "Name of the memory bucket (S3MEMORY_BUCKET)."
  value       = aws_s3_bucket.this.id
}

output "bucket_arn" {
  description = "ARN of the memory bucket."
  value       = aws_s3_bucket.this.arn
}

output "keystore_bucket_name" {
  description = "Name of the keystore bucket that holds the agents' branch keys (S3MEMORY_KEYSTORE_BUCKET)."
  value       = aws_s3_bucket.keystore.id
}

output "keystore_bucket_arn" {
  description = "ARN of the keystore bucket."
  value       = aws_s3_bucket.keystore.arn
}

output "prefix" {
  description = "Key prefix of the agent prefixes (S3MEMORY_PREFIX)."
  value       = var.prefix
}

output "data_key_arn" {
  description = "ARN of the KMS key that wraps the envelope data keys (S3MEMORY_KMS_KEY_ID)."
  value       = aws_kms_key.data_keys.arn
}

output "data_key_alias_name" {
  description = "Alias name of the envelope key, e.g. alias/s3memory-data-keys."
  value       = aws_kms_alias.data_keys.name
}

output "data_key_alias_arn" {
  description = "Alias ARN of the envelope key."
  value       = aws_kms_alias.data_keys.arn
}

output "sse_key_arn" {
  description = "ARN of the separate KMS key used for the bucket's default encryption (S3 Bucket Keys)."
  value       = aws_kms_key.sse.arn
}

output "agent_role_arn" {
  description = "ARN of the agent-access role that s3memory.assume_agent_session assumes (S3MEMORY_AGENT_ROLE_ARN)."
  value       = aws_iam_role.agent_access.arn
}

output "agent_role_name" {
  description = "Name of the agent-access role."
  value       = aws_iam_role.agent_access.name
}

output "agent_session_tag_key" {
  description = "Session tag key that carries the agent id; the agent role's grants are keyed on it."
  value       = local.agent_tag_key
}

output "agent_access_policy_json" {
  description = "The agent-access role's permissions policy, as deployed."
  value       = local.agent_access_policy
}

output "agent_trust_policy_json" {
  description = "The agent-access role's trust policy, as deployed."
  value       = local.agent_trust_policy
}

output "bucket_policy_json" {
  description = "The memory bucket's policy, as deployed."
  value       = local.bucket_policy
}

output "keystore_bucket_policy_json" {
  description = "The keystore bucket's policy, as deployed."
  value       = local.keystore_bucket_policy
}

output "data_key_policy_json" {
  description = "The envelope key's key policy, as deployed."
  value       = local.data_key_policy
}

output "operator_policy_arn" {
  description = "ARN of the operator policy for the CLI's bulk commands. Attach it to operator roles only, never to agents."
  value       = aws_iam_policy.operator.arn
}

output "operator_policy_json" {
  description = "The operator policy document, as deployed."
  value       = local.operator_policy
}

output "environment" {
  description = "S3MEMORY_* environment variables for an application that uses this deployment; with retention_not_accessed_days set, also S3MEMORY_TRACK_ACCESS=true (the job counts reads only where the tools record them)."
  value = merge({
    S3MEMORY_BUCKET          = aws_s3_bucket.this.id
    S3MEMORY_KEYSTORE_BUCKET = aws_s3_bucket.keystore.id
    S3MEMORY_PREFIX          = var.prefix
    S3MEMORY_KMS_KEY_ID      = aws_kms_key.data_keys.arn
    S3MEMORY_REGION          = local.region
    S3MEMORY_AGENT_ROLE_ARN  = aws_iam_role.agent_access.arn
    S3MEMORY_NAMES           = var.file_names
  }, var.retention_not_accessed_days == null ? {} : { S3MEMORY_TRACK_ACCESS = "true" })
}

output "fleet_state_machine_arn" {
  description = "ARN of the fleet jobs' state machine (S3MEMORY_FLEET_STATE_MACHINE; null while fleet_jobs is off)."
  value       = one(aws_sfn_state_machine.fleet[*].arn)
}

output "fleet_results_bucket" {
  description = "Bucket of the fleet runs' manifests and results (null while fleet_jobs is off)."
  value       = one(aws_s3_bucket.fleet_results[*].bucket)
}

output "fleet_results_prefix" {
  description = "Key prefix of the fleet runs in fleet_results_bucket: <prefix><run id>/ per run, <prefix>map-runs/ for the Map Runs' results (null while fleet_jobs is off)."
  value       = local.fleet_enabled ? local.fleet_results_prefix : null
}

output "fleet_environment" {
  description = "S3MEMORY_* variables for an operator running `s3memory fleet run --engine stepfunctions`: the state machine and the results location its roles allow (empty while fleet_jobs is off)."
  value = local.fleet_enabled ? {
    S3MEMORY_FLEET_STATE_MACHINE = aws_sfn_state_machine.fleet[0].arn
    S3MEMORY_FLEET_RESULTS       = "s3://${aws_s3_bucket.fleet_results[0].bucket}/${local.fleet_results_prefix}"
  } : {}
}

output "fleet_operator_policy_arn" {
  description = "ARN of the fleet operator policy (start, follow and redrive fleet runs; manifests and results). Attach it, with operator_policy_arn, to operator roles (null while fleet_jobs is off)."
  value       = one(aws_iam_policy.fleet_operator[*].arn)
}

output "fleet_operator_policy_json" {
  description = "The fleet operator policy document, as deployed (null while fleet_jobs is off)."
  value       = local.fleet_operator_policy
}

output "fleet_worker_function_arns" {
  description = "The fleet workers' function ARNs by role class (inspect, audit, prune, keys, erase); empty while fleet_jobs is off."
  value       = { for class, function in aws_lambda_function.fleet_worker : class => function.arn }
}

output "fleet_worker_policy_json" {
  description = "The fleet workers' permissions policies by role class, as deployed (empty while fleet_jobs is off)."
  value       = local.fleet_worker_policies
}

output "fleet_state_machine_policy_json" {
  description = "The state machine role's permissions policy, as deployed (null while fleet_jobs is off)."
  value       = local.fleet_state_machine_policy
}

output "fleet_state_machine_definition" {
  description = "The state machine's definition (Amazon States Language), as deployed (null while fleet_jobs is off)."
  value       = local.fleet_state_machine_definition
}

output "fleet_failed_executions_alarm_arn" {
  description = "ARN of the CloudWatch alarm on failed fleet executions (null while fleet_jobs is off)."
  value       = one(aws_cloudwatch_metric_alarm.fleet_failed_executions[*].arn)
}

output "retention_schedule_arn" {
  description = "ARN of the EventBridge Scheduler schedule that starts the retention job on the fleet state machine (null while the job is off)."
  value       = one(aws_scheduler_schedule.retention[*].arn)
}

output "retention_scheduler_role_arn" {
  description = "ARN of the schedule's execution role, which may only start the fleet state machine (null while the job is off)."
  value       = one(aws_iam_role.retention_scheduler[*].arn)
}

output "retention_scheduler_policy_json" {
  description = "The schedule role's permissions policy, as deployed (null while the job is off)."
  value       = local.retention_scheduler_policy
}

output "retention_input_json" {
  description = "The input of the retention job's executions: a prune job over every agent (null while the job is off)."
  value       = local.retention_enabled ? jsonencode(local.retention_input) : null
}

output "compliance_profile" {
  description = "The memory bucket's Object Lock profile (mode and default retention), or null when compliance_profile is off. The keystore bucket never has one."
  value       = var.compliance_profile
}

output "replica_region" {
  description = "The replica region (null while multi-region memory is off)."
  value       = var.replica_region
}

output "replica_bucket_name" {
  description = "Name of the replica memory bucket (S3MEMORY_BUCKET on failover; null while replica_region is off)."
  value       = one(aws_s3_bucket.replica[*].id)
}

output "replica_keystore_bucket_name" {
  description = "Name of the replica keystore bucket (S3MEMORY_KEYSTORE_BUCKET on failover; null while replica_region is off)."
  value       = one(aws_s3_bucket.replica_keystore[*].id)
}

output "replica_data_key_arn" {
  description = "ARN of the envelope key's replica in the replica region (S3MEMORY_KMS_KEY_ID on failover; null while replica_region is off)."
  value       = one(aws_kms_replica_key.data_keys[*].arn)
}

output "replica_agent_access_policy_json" {
  description = "The agent role's policy for the replica side, as deployed (null while replica_region is off)."
  value       = local.replica_agent_access_policy
}

output "replica_operator_policy_arn" {
  description = "ARN of the operator policy for the replica side. Attach it to operators only (null while replica_region is off)."
  value       = one(aws_iam_policy.operator_replica[*].arn)
}

output "replication_policy_json" {
  description = "The replication role's permissions policy, as deployed (null while replica_region is off)."
  value       = local.replication_policy
}

output "failover_environment" {
  description = "S3MEMORY_* environment variables for the replica side: what the tools and the CLI use after a failover (null while replica_region is off)."
  value = local.replicated ? merge({
    S3MEMORY_BUCKET          = aws_s3_bucket.replica[0].id
    S3MEMORY_KEYSTORE_BUCKET = aws_s3_bucket.replica_keystore[0].id
    S3MEMORY_PREFIX          = var.prefix
    S3MEMORY_KMS_KEY_ID      = aws_kms_replica_key.data_keys[0].arn
    S3MEMORY_REGION          = var.replica_region
    S3MEMORY_AGENT_ROLE_ARN  = aws_iam_role.agent_access.arn
    S3MEMORY_NAMES           = var.file_names
  }, var.retention_not_accessed_days == null ? {} : { S3MEMORY_TRACK_ACCESS = "true" }) : null
}
