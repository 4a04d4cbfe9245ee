variable "region" {
  description = "AWS region to deploy into."
  type        = string
  default     = "eu-west-1"
}

variable "bucket_name" {
  description = "Name of the memory bucket to create (globally unique)."
  type        = string
}

variable "name" {
  description = "Name prefix for the function, its role and the module's resources."
  type        = string
  default     = "s3memory"
}

variable "prefix" {
  description = "Key prefix of the agent prefixes in the bucket (S3MEMORY_PREFIX)."
  type        = string
  default     = "agents/"
}

variable "anthropic_api_key_secret_arn" {
  description = "ARN of a Secrets Manager secret whose SecretString is the Anthropic API key. The key itself never enters Terraform state or the function's environment."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+$", var.anthropic_api_key_secret_arn))
    error_message = "anthropic_api_key_secret_arn must be a Secrets Manager secret ARN."
  }
}

variable "anthropic_model" {
  description = "Claude model the agent runs. Null leaves ANTHROPIC_MODEL unset, so the handler uses s3memory's default model (s3memory.core.limits.DEFAULT_MODEL)."
  type        = string
  default     = null
}

variable "trust_event_agent_id" {
  description = "Take the agent id from the request when no API Gateway authorizer vouches for one (S3MEMORY_TRUST_EVENT_AGENT_ID). Every principal that may invoke the function can then act as any agent: set it only when all of them are trusted."
  type        = bool
  default     = false
}

variable "agent_id_claim" {
  description = "JWT claim holding the agent id when a JWT authorizer fronts the function (S3MEMORY_AGENT_ID_CLAIM)."
  type        = string
  default     = "agent_id"
}

variable "anthropic_max_tokens" {
  description = "max_tokens of each model request."
  type        = number
  default     = 4096
}

variable "anthropic_max_iterations" {
  description = "Upper bound on model requests (tool-use rounds) per invocation."
  type        = number
  default     = 20
}

variable "lambda_zip_path" {
  description = "Path of the deployment package built by build.sh. Null uses build/lambda.zip beside this file."
  type        = string
  default     = null
}

variable "s3memory_layer_zip_path" {
  description = "Path of an s3memory Lambda layer for python3.12 x86_64 (make lambda-layer writes dist/s3memory-layer-<version>-python3.12-x86_64.zip). Set, it is published as a layer version the function uses, and the function's package needs only handler.py (./build.sh --handler-only). Null bundles s3memory in the function's package (./build.sh)."
  type        = string
  default     = null
}

variable "lambda_timeout" {
  description = "Function timeout in seconds; one invocation runs a whole tool-use loop."
  type        = number
  default     = 300

  validation {
    condition     = var.lambda_timeout >= 30 && var.lambda_timeout <= 900
    error_message = "lambda_timeout must be between 30 and 900 seconds."
  }
}

variable "lambda_memory_size" {
  description = "Function memory in MB."
  type        = number
  default     = 512
}

variable "reserved_concurrent_executions" {
  description = "Concurrency reserved for (and capping) the function."
  type        = number
  default     = 10
}

variable "log_retention_days" {
  description = "Retention of the function's CloudWatch log group, in days."
  type        = number
  default     = 365

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "log_retention_days must be a retention period CloudWatch Logs accepts (e.g. 30, 90, 365)."
  }
}

variable "memory_expiration_days" {
  description = "Memories not written for this many days expire (the memory tool documentation recommends clearing stale memories). Null keeps them."
  type        = number
  default     = 180
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}

variable "guidelines_store" {
  description = "Shared store every agent mounts read-only at /memories/guidelines/ (S3MEMORY_MOUNTS); the module grants it to every agent. Fill it with `s3memory import --store ID`. Null: no mount."
  type        = string
  default     = "support-guidelines"

  validation {
    condition     = var.guidelines_store == null || can(regex("^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$", var.guidelines_store))
    error_message = "guidelines_store follows the agent-id rules: 1-128 of A-Z, a-z, 0-9, '.', '_' and '-', starting with a letter or digit."
  }
}
