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

variable "stores" {
  description = "Shared stores agents mount (S3MEMORY_MOUNTS): store id -> the agent ids that may read it (readers) and that may also write it (writers), as IAM StringLike patterns on the s3memory-agent session tag (`*` and `?` wildcards, e.g. \"support-*\"). A store lives under \"<prefix>_stores/<id>/\"; an agent matching no pattern can neither read it nor unwrap its keys. One or two managed policies per store are attached to the agent role (10 managed policies per role by default)."
  type = map(object({
    readers = optional(list(string), [])
    writers = optional(list(string), [])
  }))
  default = {}

  validation {
    condition     = alltrue([for id in keys(var.stores) : can(regex("^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$", id))])
    error_message = "store ids follow the agent-id rules: 1-128 of A-Z, a-z, 0-9, '.', '_' and '-', starting with a letter or digit."
  }

  validation {
    condition     = alltrue([for store in values(var.stores) : length(concat(store.readers, store.writers)) > 0])
    error_message = "every store needs at least one reader or writer pattern."
  }

  validation {
    condition     = alltrue([for store in values(var.stores) : alltrue([for p in concat(store.readers, store.writers) : can(regex("^[A-Za-z0-9*?][A-Za-z0-9._*?-]{0,127}$", p))])])
    error_message = "agent-id patterns use A-Z, a-z, 0-9, '.', '_', '-' and the wildcards * and ?; no '/', '$' or spaces."
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
  description = "History window: days after which noncurrent object versions (overwritten, deleted or pruned memories) are permanently removed. Until then `s3memory history`, `show` and `restore` can reach them."
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

variable "retention_not_accessed_days" {
  description = "Turns on the scheduled retention job (needs fleet_jobs = true): a fleet prune started on the fleet state machine, in which memory files neither read nor written for this many days are pruned (`s3memory prune --not-accessed-for <N>d` for every agent). Reads count only if the tools track access (S3MEMORY_TRACK_ACCESS, which the environment output then sets); an untracked file counts from its last write. Null (with retention_older_than_days null) leaves the job off. See README \"Retention\"."
  type        = number
  default     = null

  validation {
    condition     = var.retention_not_accessed_days == null ? true : (var.retention_not_accessed_days >= 1 && var.retention_not_accessed_days <= 36500 && floor(var.retention_not_accessed_days) == var.retention_not_accessed_days)
    error_message = "retention_not_accessed_days must be null or a whole number of days from 1 to 36500."
  }
}

variable "retention_older_than_days" {
  description = "Turns on the scheduled retention job by modification instead: memory files whose content has not changed for this many days are pruned (`s3memory prune --older-than <N>d`). Unlike memory_expiration_days it keeps the `.s3memory/` bookkeeping and counts from the content's own time, which a rewrap keeps. At most one of this and retention_not_accessed_days."
  type        = number
  default     = null

  validation {
    condition     = var.retention_older_than_days == null ? true : (var.retention_older_than_days >= 1 && var.retention_older_than_days <= 36500 && floor(var.retention_older_than_days) == var.retention_older_than_days)
    error_message = "retention_older_than_days must be null or a whole number of days from 1 to 36500."
  }
}

variable "retention_schedule_expression" {
  description = "When the retention job runs: an EventBridge Scheduler rate() or cron() expression."
  type        = string
  default     = "rate(1 day)"

  validation {
    condition     = can(regex("^(rate\\([1-9][0-9]* (minute|minutes|hour|hours|day|days)\\)|cron\\([^()]+\\))$", var.retention_schedule_expression))
    error_message = "retention_schedule_expression must be rate(<n> minutes|hours|days) or cron(<fields>)."
  }
}

variable "retention_schedule_timezone" {
  description = "Time zone of a cron() retention_schedule_expression (IANA name, e.g. \"Europe/Paris\")."
  type        = string
  default     = "UTC"
}

variable "retention_dry_run" {
  description = "Run the retention job with --dry-run, on the inspect worker (which cannot delete): each agent's result says how many files it would lose and nothing is deleted. Use it for the first runs."
  type        = bool
  default     = false
}

variable "retention_stores" {
  description = "Also prune the shared stores (`--stores`) in the scheduled retention job."
  type        = bool
  default     = false
}

variable "fleet_jobs" {
  description = "Provision the fleet jobs: one worker Lambda per job role class (inspect, audit, prune, keys, erase), each with its own least-privilege role, a Standard Step Functions state machine whose Distributed Map runs them over every agent of a manifest, a results bucket and an alarm on failed executions. `s3memory fleet run JOB --engine stepfunctions` starts it; the retention job needs it. See README \"Fleet jobs\"."
  type        = bool
  default     = false
}

variable "fleet_package_path" {
  description = "Path of the fleet workers' deployment package, built by terraform/functions/fleet/build.sh (handler.py plus s3memory and its dependencies). Set this or fleet_package_s3 when fleet_jobs is true."
  type        = string
  default     = null
}

variable "fleet_package_s3" {
  description = "The fleet workers' deployment package as an S3 object (e.g. the zip of functions/fleet/build.sh uploaded by CI), instead of fleet_package_path."
  type = object({
    bucket         = string
    key            = string
    object_version = optional(string)
  })
  default = null
}

variable "fleet_worker_timeout" {
  description = "Timeout of each fleet worker invocation (one batch of agents), seconds (60-900). A worker starts no agent it cannot finish before the timeout; those are reported as not reached and a redrive runs them."
  type        = number
  default     = 900

  validation {
    condition     = var.fleet_worker_timeout >= 60 && var.fleet_worker_timeout <= 900
    error_message = "fleet_worker_timeout must be between 60 and 900 seconds."
  }
}

variable "fleet_worker_memory_size" {
  description = "Memory of each fleet worker function, MB (128-10240)."
  type        = number
  default     = 1024

  validation {
    condition     = var.fleet_worker_memory_size >= 128 && var.fleet_worker_memory_size <= 10240
    error_message = "fleet_worker_memory_size must be between 128 and 10240 MB."
  }
}

variable "fleet_worker_reserved_concurrency" {
  description = "Reserved concurrency of each fleet worker function (it also caps it). Null reserves none: the Map's max_concurrency bounds the workers, within the account's Lambda concurrency."
  type        = number
  default     = null

  validation {
    condition     = var.fleet_worker_reserved_concurrency == null ? true : (var.fleet_worker_reserved_concurrency >= 1 && floor(var.fleet_worker_reserved_concurrency) == var.fleet_worker_reserved_concurrency)
    error_message = "fleet_worker_reserved_concurrency must be null or a whole number, at least 1."
  }
}

variable "fleet_batch_size" {
  description = "Agents per worker invocation in the scheduled retention job (the CLI passes its own)."
  type        = number
  default     = 50

  validation {
    condition     = var.fleet_batch_size >= 1 && var.fleet_batch_size <= 1000 && floor(var.fleet_batch_size) == var.fleet_batch_size
    error_message = "fleet_batch_size must be a whole number from 1 to 1000."
  }
}

variable "fleet_max_concurrency" {
  description = "Parallel batches of the Distributed Map in the scheduled retention job (the CLI passes its own; Distributed Map runs at most 10,000)."
  type        = number
  default     = 100

  validation {
    condition     = var.fleet_max_concurrency >= 1 && var.fleet_max_concurrency <= 10000 && floor(var.fleet_max_concurrency) == var.fleet_max_concurrency
    error_message = "fleet_max_concurrency must be a whole number from 1 to 10000."
  }
}

variable "fleet_tolerated_failure_percentage" {
  description = "Percentage of failed batches the scheduled retention job tolerates before its Map Run fails (0-100). The failed agents are in the run's results either way."
  type        = number
  default     = 5

  validation {
    condition     = var.fleet_tolerated_failure_percentage >= 0 && var.fleet_tolerated_failure_percentage <= 100
    error_message = "fleet_tolerated_failure_percentage must be between 0 and 100."
  }
}

variable "fleet_results_bucket_name" {
  description = "Name of the bucket for the fleet runs' manifests and results (agent ids, outcomes, counts; never paths or contents). Null uses \"<bucket_name>-fleet\"."
  type        = string
  default     = null

  validation {
    condition     = var.fleet_results_bucket_name == null ? true : (can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.fleet_results_bucket_name)) && !can(regex("\\.\\.|^\\d+\\.\\d+\\.\\d+\\.\\d+$", var.fleet_results_bucket_name)))
    error_message = "fleet_results_bucket_name must be null or a valid S3 bucket name: 3-63 characters of a-z, 0-9, '.' and '-', starting and ending with a letter or digit."
  }
}

variable "fleet_results_expiration_days" {
  description = "Days after which a fleet run's manifest and results expire from the results bucket."
  type        = number
  default     = 30

  validation {
    condition     = var.fleet_results_expiration_days >= 1 && floor(var.fleet_results_expiration_days) == var.fleet_results_expiration_days
    error_message = "fleet_results_expiration_days must be a whole number of days, at least 1."
  }
}

variable "fleet_rewrap_to_key_arns" {
  description = "KMS key ARNs a fleet `rewrap --to-key` may re-wrap branch keys to, besides the module's envelope key. Empty: rewrap can only target the envelope key."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for arn in var.fleet_rewrap_to_key_arns : can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", arn))])
    error_message = "fleet_rewrap_to_key_arns must list KMS key ARNs (arn:aws:kms:<region>:<account>:key/<id>); aliases and wildcards are refused."
  }
}

variable "fleet_log_retention_days" {
  description = "Retention of the fleet workers' and the state machine's CloudWatch log groups, in days."
  type        = number
  default     = 365

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.fleet_log_retention_days)
    error_message = "fleet_log_retention_days must be a retention period CloudWatch Logs accepts (e.g. 30, 90, 365)."
  }
}

variable "fleet_alarm_actions" {
  description = "ARNs (e.g. an SNS topic) notified when a fleet execution fails, and again when the alarm clears."
  type        = list(string)
  default     = []
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

variable "file_names" {
  description = "How the agents' tools store file and directory names: \"plain\", or \"encrypted\" (AES-SIV under each agent's name key, so CloudTrail data events, inventory and access logs see no name). Passed to the tools as S3MEMORY_NAMES in the environment output; convert existing agents with `s3memory migrate`."
  type        = string
  default     = "plain"

  validation {
    condition     = contains(["plain", "encrypted"], var.file_names)
    error_message = "file_names must be \"plain\" or \"encrypted\"."
  }
}

variable "compliance_profile" {
  description = "Turns on the compliance profile: S3 Object Lock on the memory bucket (and its replica) in GOVERNANCE or COMPLIANCE mode, with a default retention of retention_days or retention_years applied to every new version, so no version can be deleted or overwritten before then (in COMPLIANCE mode not even by the account root). Never on the keystore bucket: `s3memory shred` still erases an agent by destroying its branch keys, leaving the locked ciphertext unreadable. Object Lock can only be enabled when the bucket is created. See SECURITY.md \"The compliance profile\"."
  type = object({
    mode            = string
    retention_days  = optional(number)
    retention_years = optional(number)
  })
  default = null

  validation {
    condition     = var.compliance_profile == null ? true : contains(["GOVERNANCE", "COMPLIANCE"], var.compliance_profile.mode)
    error_message = "compliance_profile.mode must be \"GOVERNANCE\" or \"COMPLIANCE\"."
  }

  validation {
    condition     = var.compliance_profile == null ? true : ((var.compliance_profile.retention_days == null) != (var.compliance_profile.retention_years == null))
    error_message = "compliance_profile needs exactly one of retention_days and retention_years."
  }

  validation {
    condition     = var.compliance_profile == null ? true : alltrue([for n in [var.compliance_profile.retention_days, var.compliance_profile.retention_years] : coalesce(n, 1) >= 1 && floor(coalesce(n, 1)) == coalesce(n, 1)])
    error_message = "compliance_profile.retention_days or retention_years must be a whole number, at least 1."
  }
}

variable "replica_region" {
  description = "Turns on multi-region memory: a region (e.g. \"eu-central-1\") that gets a replica of the memory bucket and of the keystore bucket, a replica of the envelope key (the key becomes a KMS multi-region key), and S3 replication of both buckets (delete markers included). The caller passes the `aws.replica` provider configured for this region. Only at first apply: turning it on for an existing deployment would replace the envelope key (see docs/disaster-recovery.md)."
  type        = string
  default     = null

  validation {
    condition     = var.replica_region == null ? true : can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]$", var.replica_region))
    error_message = "replica_region must be null or an AWS region name such as \"eu-central-1\"."
  }
}

variable "replica_bucket_name" {
  description = "Name of the replica memory bucket in replica_region (globally unique). Null uses \"<bucket_name>-replica\"."
  type        = string
  default     = null

  validation {
    condition     = var.replica_bucket_name == null ? true : (can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.replica_bucket_name)) && !can(regex("\\.\\.|^\\d+\\.\\d+\\.\\d+\\.\\d+$", var.replica_bucket_name)))
    error_message = "replica_bucket_name must be null or a valid S3 bucket name."
  }
}

variable "replica_keystore_bucket_name" {
  description = "Name of the replica keystore bucket in replica_region (globally unique). Null uses \"<replica bucket name>-keys\"."
  type        = string
  default     = null

  validation {
    condition     = var.replica_keystore_bucket_name == null ? true : (can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.replica_keystore_bucket_name)) && !can(regex("\\.\\.|^\\d+\\.\\d+\\.\\d+\\.\\d+$", var.replica_keystore_bucket_name)))
    error_message = "replica_keystore_bucket_name must be null or a valid S3 bucket name."
  }
}

variable "replication_time_control" {
  description = "S3 Replication Time Control on both replication rules: 99.99 % of objects replicated within 15 minutes (extra cost), with replication metrics and events. Off: S3 replicates most objects within seconds, with no time promise."
  type        = bool
  default     = false
}
