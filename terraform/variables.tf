variable "bucket_name" {
  description = "Name of the S3 bucket that holds the memory objects (globally unique)."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.bucket_name)) && !can(regex("\\.\\.|^\\d+\\.\\d+\\.\\d+\\.\\d+$", var.bucket_name))
    error_message = "bucket_name must be a valid S3 bucket name: 3-63 characters of a-z, 0-9, '.' and '-', starting and ending with a letter or digit."
  }
}

variable "keystore_bucket_name" {
  description = "Name of the separate S3 bucket that holds the agents' branch keys (S3MEMORY_KEYSTORE_BUCKET; globally unique). Null uses \"<bucket_name>-keys\", which must then fit in 63 characters. Never replicated, no lifecycle rules: see README \"The keystore bucket\"."
  type        = string
  default     = null

  validation {
    condition     = var.keystore_bucket_name == null ? true : (can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.keystore_bucket_name)) && !can(regex("\\.\\.|^\\d+\\.\\d+\\.\\d+\\.\\d+$", var.keystore_bucket_name)))
    error_message = "keystore_bucket_name must be null or a valid S3 bucket name: 3-63 characters of a-z, 0-9, '.' and '-', starting and ending with a letter or digit."
  }
}

variable "name" {
  description = "Name used for the IAM role, the operator policy and the KMS aliases (e.g. \"s3memory\" gives role \"s3memory-agent-access\" and alias \"alias/s3memory-data-keys\")."
  type        = string
  default     = "s3memory"

  validation {
    condition     = can(regex("^[A-Za-z0-9_+=,.@-]{1,40}$", var.name))
    error_message = "name must be 1-40 characters of A-Z, a-z, 0-9 and _+=,.@- (it is part of IAM role and policy names)."
  }
}

variable "prefix" {
  description = "Key prefix under which each agent gets \"<prefix><agent_id>/\". Must equal the library's S3MEMORY_PREFIX: \"\" or segments that each end in \"/\"."
  type        = string
  default     = "agents/"

  validation {
    condition     = can(regex("^([A-Za-z0-9_-][A-Za-z0-9._-]*/)*$", var.prefix))
    error_message = "prefix must be \"\" or end with \"/\"; segments use A-Z, a-z, 0-9, '.', '_' and '-' and do not start with '.'. IAM wildcards (* ?) and '$' are refused because they would widen the per-agent grant."
  }
}

variable "agent_role_trusted_principal_arns" {
  description = "ARNs of the IAM roles or users (e.g. the Lambda execution role) that may assume the agent-access role with an s3memory-agent session tag."
  type        = list(string)

  validation {
    condition     = length(var.agent_role_trusted_principal_arns) > 0 && alltrue([for arn in var.agent_role_trusted_principal_arns : can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:(role|user)/[A-Za-z0-9_+=,.@/-]+$", arn))])
    error_message = "agent_role_trusted_principal_arns must list at least one IAM role or user ARN; account roots and wildcards are refused."
  }
}

variable "agent_role_max_session_duration" {
  description = "Maximum session duration, in seconds, of the agent-access role (s3memory asks for 900 s by default and refreshes before expiry)."
  type        = number
  default     = 3600

  validation {
    condition     = var.agent_role_max_session_duration >= 3600 && var.agent_role_max_session_duration <= 43200
    error_message = "agent_role_max_session_duration must be between 3600 and 43200 seconds."
  }
}

variable "noncurrent_version_expiration_days" {
  description = "Days after which noncurrent object versions (overwritten or deleted memories) are permanently removed."
  type        = number
  default     = 30

  validation {
    condition     = var.noncurrent_version_expiration_days >= 1 && floor(var.noncurrent_version_expiration_days) == var.noncurrent_version_expiration_days
    error_message = "noncurrent_version_expiration_days must be a whole number of days, at least 1."
  }
}

variable "memory_expiration_days" {
  description = "If set, memories not written for this many days expire (S3 lifecycle counts from the last write; reads do not renew). Null keeps memories until deleted. The rule acts on the memory bucket only: branch keys live in the keystore bucket, which has no lifecycle rule, out of its reach."
  type        = number
  default     = null

  validation {
    condition     = var.memory_expiration_days == null ? true : (var.memory_expiration_days >= 1 && floor(var.memory_expiration_days) == var.memory_expiration_days)
    error_message = "memory_expiration_days must be null or a whole number of days, at least 1."
  }
}

variable "abort_incomplete_multipart_upload_days" {
  description = "Days after which incomplete multipart uploads are aborted and their parts deleted."
  type        = number
  default     = 7

  validation {
    condition     = var.abort_incomplete_multipart_upload_days >= 1 && floor(var.abort_incomplete_multipart_upload_days) == var.abort_incomplete_multipart_upload_days
    error_message = "abort_incomplete_multipart_upload_days must be a whole number of days, at least 1."
  }
}

variable "access_log_bucket" {
  description = "Name of an existing bucket that receives S3 server access logs for the memory bucket and the keystore bucket. Null disables access logging."
  type        = string
  default     = null
}

variable "access_log_prefix" {
  description = "Key prefix for the access logs in access_log_bucket (both buckets; S3 names the source bucket in every record). Null uses \"<bucket_name>/\" for the memory bucket and \"<keystore bucket name>/\" for the keystore bucket."
  type        = string
  default     = null
}

variable "kms_deletion_window_in_days" {
  description = "Waiting period, in days, before the module's KMS keys are deleted after destroy."
  type        = number
  default     = 30

  validation {
    condition     = var.kms_deletion_window_in_days >= 7 && var.kms_deletion_window_in_days <= 30
    error_message = "kms_deletion_window_in_days must be between 7 and 30."
  }
}

variable "force_destroy" {
  description = "Allow terraform destroy to delete the memory and keystore buckets even when they still hold memories or branch keys. Keep false in production."
  type        = bool
  default     = false
}

variable "tags" {
  description = "Tags added to every resource that supports them."
  type        = map(string)
  default     = {}
}
