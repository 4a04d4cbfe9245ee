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
