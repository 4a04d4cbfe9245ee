variable "region" {
  description = "The primary region (where agents run normally)."
  type        = string
  default     = "eu-west-1"
}

variable "replica_region" {
  description = "The replica region (where agents run after a failover)."
  type        = string
  default     = "eu-central-1"
}

variable "bucket_name" {
  description = "Name of the primary memory bucket; the replica is \"<bucket_name>-replica\"."
  type        = string
}

variable "agent_role_trusted_principal_arns" {
  description = "The roles (e.g. the agents' Lambda execution roles in both regions) that may assume the agent role."
  type        = list(string)
}

variable "lock_mode" {
  description = "Object Lock mode of the memory buckets: GOVERNANCE (an operator with s3:BypassGovernanceRetention can still delete) or COMPLIANCE (nobody can)."
  type        = string
  default     = "GOVERNANCE"
}

variable "retention_days" {
  description = "Default retention of every memory object version, in days."
  type        = number
  default     = 30
}
