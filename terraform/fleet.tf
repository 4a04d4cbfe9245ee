################################################################################
# Fleet jobs (opt-in, fleet_jobs = true): Step Functions Distributed Map → worker Lambdas
################################################################################

# `s3memory fleet run JOB --engine stepfunctions` (and the retention schedule below) starts an
# execution of one Standard state machine (fleet/state-machine.asl.json.tftpl): a Distributed Map
# reads the run's manifest of agent ids from S3, hands them to a worker Lambda in batches,
# retries Lambda throttling and 5xx with backoff, tolerates the input's percentage of failed
# batches and writes the Map Run's results to S3. Every worker runs the same code
# (functions/fleet/handler.py → s3memory.fleet.worker) under the role of its job's class, so a
# job can do no more than its class needs:
#
#   inspect  prune --dry-run      list, read headers and access tags; no decrypt, no delete
#   audit    verify               list, read objects, kms:Decrypt; no delete, no write
#   prune    prune                inspect + delete current memory objects; nothing under .s3memory/
#   keys     rotate/rewrap/reseal read and rewrite objects and branch keys; GenerateDataKey/Decrypt/ReEncrypt
#   erase    shred/purge          every version of an agent's objects and branch keys; no KMS
#
# Every worker may also read and write the run's results under fleet_results_prefix of the
# results bucket (the manifest, one record per finished agent), which nothing else shares.

locals {
  fleet_enabled = var.fleet_jobs
  fleet_name    = "${var.name}-fleet"
  # The role classes of the job table (s3memory.fleet.jobs.JOBS); one worker function each.
  fleet_classes           = toset(["inspect", "audit", "prune", "keys", "erase"])
  fleet_package_from_s3   = var.fleet_package_s3 != null
  fleet_results_bucket    = coalesce(var.fleet_results_bucket_name, "${var.bucket_name}-fleet")
  fleet_results_prefix    = "runs/"
  fleet_results_arn       = "arn:${data.aws_partition.current.partition}:s3:::${local.fleet_results_bucket}"
  fleet_partition         = data.aws_partition.current.partition
  fleet_account           = data.aws_caller_identity.current.account_id
  fleet_worker_arn_prefix = "arn:${local.fleet_partition}:lambda:${local.region}:${local.fleet_account}:function:${local.fleet_name}-"
  fleet_log_group_arns    = { for class in local.fleet_classes : class => "arn:${local.fleet_partition}:logs:${local.region}:${local.fleet_account}:log-group:/aws/lambda/${local.fleet_name}-${class}" }
  # Known before the state machine exists, so its role can name it without a cycle.
  fleet_state_machine_arn = "arn:${local.fleet_partition}:states:${local.region}:${local.fleet_account}:stateMachine:${local.fleet_name}"
  fleet_execution_arn     = "arn:${local.fleet_partition}:states:${local.region}:${local.fleet_account}:execution:${local.fleet_name}"
  # Retry of Lambda throttling and 5xx: 2, 4, 8, 16, 32 s (at most 60 s), full jitter.
  fleet_retry = {
    retry_interval_seconds  = "2"
    retry_backoff_rate      = "2"
    retry_max_attempts      = "6"
    retry_max_delay_seconds = "60"
  }

  fleet_state_machine_definition = local.fleet_enabled ? templatefile("${path.module}/fleet/state-machine.asl.json.tftpl", merge(local.fleet_retry, {
    list_function_arn          = "${local.fleet_worker_arn_prefix}inspect"
    worker_function_arn_prefix = local.fleet_worker_arn_prefix
    results_bucket             = local.fleet_results_bucket
    results_prefix             = local.fleet_results_prefix
  })) : null

  fleet_worker_trust_policy = local.fleet_enabled ? templatefile("${path.module}/policies/fleet-worker-trust.json.tftpl", {}) : null
  fleet_worker_policies = local.fleet_enabled ? {
    inspect = templatefile("${path.module}/policies/fleet-inspect.json.tftpl", {
      bucket_arn          = aws_s3_bucket.this.arn
      keystore_bucket_arn = aws_s3_bucket.keystore.arn
      agent_prefix        = var.prefix
      results_bucket_arn  = local.fleet_results_arn
      results_prefix      = local.fleet_results_prefix
      log_group_arn       = local.fleet_log_group_arns["inspect"]
    })
    audit = templatefile("${path.module}/policies/fleet-audit.json.tftpl", {
      bucket_arn          = aws_s3_bucket.this.arn
      keystore_bucket_arn = aws_s3_bucket.keystore.arn
      agent_prefix        = var.prefix
      data_key_arn        = aws_kms_key.data_keys.arn
      sse_key_arn         = aws_kms_key.sse.arn
      region              = local.region
      results_bucket_arn  = local.fleet_results_arn
      results_prefix      = local.fleet_results_prefix
      log_group_arn       = local.fleet_log_group_arns["audit"]
    })
    prune = templatefile("${path.module}/policies/fleet-prune.json.tftpl", {
      bucket_arn          = aws_s3_bucket.this.arn
      keystore_bucket_arn = aws_s3_bucket.keystore.arn
      agent_prefix        = var.prefix
      results_bucket_arn  = local.fleet_results_arn
      results_prefix      = local.fleet_results_prefix
      log_group_arn       = local.fleet_log_group_arns["prune"]
    })
    keys = templatefile("${path.module}/policies/fleet-keys.json.tftpl", {
      bucket_arn          = aws_s3_bucket.this.arn
      keystore_bucket_arn = aws_s3_bucket.keystore.arn
      agent_prefix        = var.prefix
      data_key_arn        = aws_kms_key.data_keys.arn
      rewrap_to_key_arns  = jsonencode(concat([aws_kms_key.data_keys.arn], var.fleet_rewrap_to_key_arns))
      sse_key_arn         = aws_kms_key.sse.arn
      region              = local.region
      results_bucket_arn  = local.fleet_results_arn
      results_prefix      = local.fleet_results_prefix
      log_group_arn       = local.fleet_log_group_arns["keys"]
    })
    erase = templatefile("${path.module}/policies/fleet-erase.json.tftpl", {
      bucket_arn          = aws_s3_bucket.this.arn
      keystore_bucket_arn = aws_s3_bucket.keystore.arn
      agent_prefix        = var.prefix
      results_bucket_arn  = local.fleet_results_arn
      results_prefix      = local.fleet_results_prefix
      log_group_arn       = local.fleet_log_group_arns["erase"]
    })
  } : {}

  fleet_state_machine_trust_policy = local.fleet_enabled ? templatefile("${path.module}/policies/fleet-state-machine-trust.json.tftpl", {
    account_id        = data.aws_caller_identity.current.account_id
    state_machine_arn = local.fleet_state_machine_arn
  }) : null
  fleet_state_machine_policy = local.fleet_enabled ? templatefile("${path.module}/policies/fleet-state-machine.json.tftpl", {
    worker_function_arns = jsonencode([for class in sort(tolist(local.fleet_classes)) : "${local.fleet_worker_arn_prefix}${class}"])
    results_bucket_arn   = local.fleet_results_arn
    results_prefix       = local.fleet_results_prefix
    state_machine_arn    = local.fleet_state_machine_arn
    # The Map's child workflows run as executions "<state machine>/<the Map's label>:<id>".
    map_run_execution_arn_prefix = "${local.fleet_execution_arn}/agents:"
  }) : null
  fleet_operator_policy = local.fleet_enabled ? templatefile("${path.module}/policies/fleet-operator.json.tftpl", {
    state_machine_arn    = local.fleet_state_machine_arn
    execution_arn_prefix = "${local.fleet_execution_arn}:"
    map_run_arn_prefix   = "${replace(local.fleet_state_machine_arn, ":stateMachine:", ":mapRun:")}/agents:"
    results_bucket_arn   = local.fleet_results_arn
    results_prefix       = local.fleet_results_prefix
  }) : null
  fleet_results_bucket_policy = local.fleet_enabled ? templatefile("${path.module}/policies/fleet-results-bucket.json.tftpl", {
    results_bucket_arn = local.fleet_results_arn
  }) : null
}

# -- the results bucket: manifests, per-agent results, Map Run results -----------------------------

resource "aws_s3_bucket" "fleet_results" {
  # checkov:skip=CKV_AWS_144:Run results (agent ids, outcomes, counts) are re-created by the next run; replication would copy agent ids to another region for nothing.
  # checkov:skip=CKV2_AWS_62:Nothing consumes notifications of run results.
  # checkov:skip=CKV_AWS_145:Results hold agent ids, outcomes and counts only (never paths, contents or keys); SSE-S3 keeps every worker and the state machine free of KMS permissions they would otherwise need only for this bucket.
  count = local.fleet_enabled ? 1 : 0

  bucket        = local.fleet_results_bucket
  force_destroy = var.force_destroy
  tags          = var.tags

  lifecycle {
    precondition {
      condition     = length(local.fleet_results_bucket) <= 63 && !contains([var.bucket_name, local.keystore_bucket_name], local.fleet_results_bucket)
      error_message = "The fleet results bucket name (fleet_results_bucket_name, or \"<bucket_name>-fleet\" when it is null) must be at most 63 characters and differ from the memory and keystore buckets; set fleet_results_bucket_name."
    }
  }
}

resource "aws_s3_bucket_public_access_block" "fleet_results" {
  count = local.fleet_enabled ? 1 : 0

  bucket                  = aws_s3_bucket.fleet_results[0].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "fleet_results" {
  count = local.fleet_enabled ? 1 : 0

  bucket = aws_s3_bucket.fleet_results[0].id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_versioning" "fleet_results" {
  count = local.fleet_enabled ? 1 : 0

  bucket = aws_s3_bucket.fleet_results[0].id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "fleet_results" {
  count = local.fleet_enabled ? 1 : 0

  bucket = aws_s3_bucket.fleet_results[0].id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

resource "aws_s3_bucket_lifecycle_configuration" "fleet_results" {
  count = local.fleet_enabled ? 1 : 0

  bucket = aws_s3_bucket.fleet_results[0].id

  rule {
    id     = "expire-run-results"
    status = "Enabled"

    filter {}

    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
    expiration {
      days = var.fleet_results_expiration_days
    }
    noncurrent_version_expiration {
      noncurrent_days = 1
    }
  }

  depends_on = [aws_s3_bucket_versioning.fleet_results]
}

resource "aws_s3_bucket_policy" "fleet_results" {
  count = local.fleet_enabled ? 1 : 0

  bucket     = aws_s3_bucket.fleet_results[0].id
  policy     = local.fleet_results_bucket_policy
  depends_on = [aws_s3_bucket_public_access_block.fleet_results]
}

resource "aws_s3_bucket_logging" "fleet_results" {
  count = local.fleet_enabled && var.access_log_bucket != null ? 1 : 0

  bucket        = aws_s3_bucket.fleet_results[0].id
  target_bucket = var.access_log_bucket
  target_prefix = coalesce(var.access_log_prefix, "${local.fleet_results_bucket}/")
}

# -- the workers: one function per role class ------------------------------------------------------

resource "aws_cloudwatch_log_group" "fleet_worker" {
  # checkov:skip=CKV_AWS_158:The workers log agent ids, outcomes, counts and reason codes only, never file paths, memory contents or keys; CloudWatch Logs encrypts log data at rest by default.
  for_each = local.fleet_enabled ? local.fleet_classes : toset([])

  name              = "/aws/lambda/${local.fleet_name}-${each.key}"
  retention_in_days = var.fleet_log_retention_days
  tags              = var.tags
}

resource "aws_iam_role" "fleet_worker" {
  for_each = local.fleet_enabled ? local.fleet_classes : toset([])

  name               = "${local.fleet_name}-${each.key}"
  description        = "s3memory fleet worker for the ${each.key} jobs on ${var.prefix} in ${var.bucket_name}"
  assume_role_policy = local.fleet_worker_trust_policy
  tags               = var.tags
}

resource "aws_iam_role_policy" "fleet_worker" {
  for_each = local.fleet_enabled ? local.fleet_classes : toset([])

  name   = "s3memory-fleet-${each.key}"
  role   = aws_iam_role.fleet_worker[each.key].id
  policy = local.fleet_worker_policies[each.key]
}

resource "aws_lambda_function" "fleet_worker" {
  # checkov:skip=CKV_AWS_116:Invoked synchronously by the state machine, which retries throttling and 5xx and records every failed batch in the Map Run's results; a dead-letter queue applies to asynchronous invocations only.
  # checkov:skip=CKV_AWS_117:The workers talk only to the public S3 and KMS endpoints; a VPC would need gateway and interface endpoints and adds no isolation beyond each worker's IAM role.
  # checkov:skip=CKV_AWS_272:Code signing needs an AWS Signer profile owned by the deploying account; attach an aws_lambda_code_signing_config in a production pipeline.
  # checkov:skip=CKV_AWS_173:The environment holds bucket names, the prefix, the region and the key ARN, no secrets.
  # checkov:skip=CKV_AWS_115:Concurrency is bounded by the Map's MaxConcurrency; fleet_worker_reserved_concurrency reserves (and caps) it per function when set.
  for_each = local.fleet_enabled ? local.fleet_classes : toset([])

  function_name = "${local.fleet_name}-${each.key}"
  description   = "s3memory fleet worker (${each.key} jobs) for ${var.prefix} in ${var.bucket_name}"
  role          = aws_iam_role.fleet_worker[each.key].arn
  runtime       = "python3.12"
  architectures = ["x86_64"]
  handler       = "handler.lambda_handler"

  # The deployment package: a local zip (functions/fleet/build.sh) or an object in S3.
  filename          = var.fleet_package_path
  source_code_hash  = var.fleet_package_path == null ? null : filebase64sha256(var.fleet_package_path)
  s3_bucket         = local.fleet_package_from_s3 ? var.fleet_package_s3.bucket : null
  s3_key            = local.fleet_package_from_s3 ? var.fleet_package_s3.key : null
  s3_object_version = local.fleet_package_from_s3 ? var.fleet_package_s3.object_version : null

  timeout                        = var.fleet_worker_timeout
  memory_size                    = var.fleet_worker_memory_size
  reserved_concurrent_executions = var.fleet_worker_reserved_concurrency

  environment {
    # Classes that decrypt nothing get no key source.
    variables = merge(
      {
        S3MEMORY_BUCKET            = aws_s3_bucket.this.id
        S3MEMORY_KEYSTORE_BUCKET   = aws_s3_bucket.keystore.id
        S3MEMORY_PREFIX            = var.prefix
        S3MEMORY_REGION            = local.region
        S3MEMORY_NAMES             = var.file_names
        S3MEMORY_FLEET_ROLE_CLASS  = each.key
        S3MEMORY_FLEET_RESULTS_URI = "s3://${local.fleet_results_bucket}/${local.fleet_results_prefix}"
        # An agent of a few dozen files reads them in one wave (bench/fleet.py measures with 32).
        S3MEMORY_MAX_WORKERS = "32"
      },
      contains(["audit", "keys"], each.key) ? { S3MEMORY_KMS_KEY_ID = aws_kms_key.data_keys.arn } : {},
    )
  }

  tracing_config {
    mode = "Active"
  }

  tags = var.tags

  lifecycle {
    precondition {
      condition     = (var.fleet_package_path == null) != (var.fleet_package_s3 == null)
      error_message = "fleet_jobs = true needs the workers' deployment package: set exactly one of fleet_package_path (build it with terraform/functions/fleet/build.sh) and fleet_package_s3."
    }
  }

  depends_on = [aws_iam_role_policy.fleet_worker, aws_cloudwatch_log_group.fleet_worker]
}

# -- the state machine ------------------------------------------------------------------------------

resource "aws_cloudwatch_log_group" "fleet_state_machine" {
  # checkov:skip=CKV_AWS_158:The state machine logs errors without execution data (include_execution_data = false); CloudWatch Logs encrypts log data at rest by default.
  count = local.fleet_enabled ? 1 : 0

  name              = "/aws/vendedlogs/states/${local.fleet_name}"
  retention_in_days = var.fleet_log_retention_days
  tags              = var.tags
}

resource "aws_iam_role" "fleet_state_machine" {
  count = local.fleet_enabled ? 1 : 0

  name               = "${local.fleet_name}-sfn"
  description        = "s3memory fleet state machine: invokes the ${local.fleet_name}-* workers, reads manifests and writes results in ${local.fleet_results_bucket}"
  assume_role_policy = local.fleet_state_machine_trust_policy
  tags               = var.tags
}

resource "aws_iam_role_policy" "fleet_state_machine" {
  count = local.fleet_enabled ? 1 : 0

  name   = "s3memory-fleet-state-machine"
  role   = aws_iam_role.fleet_state_machine[0].id
  policy = local.fleet_state_machine_policy
}

resource "aws_sfn_state_machine" "fleet" {
  # checkov:skip=CKV_AWS_284:X-Ray tracing is enabled below.
  count = local.fleet_enabled ? 1 : 0

  name       = local.fleet_name
  type       = "STANDARD"
  role_arn   = aws_iam_role.fleet_state_machine[0].arn
  definition = local.fleet_state_machine_definition

  logging_configuration {
    log_destination        = "${aws_cloudwatch_log_group.fleet_state_machine[0].arn}:*"
    include_execution_data = false
    level                  = "ERROR"
  }

  tracing_configuration {
    enabled = true
  }

  tags       = var.tags
  depends_on = [aws_iam_role_policy.fleet_state_machine]
}

# What an operator needs besides the operator policy to run `s3memory fleet run --engine
# stepfunctions`: start and follow (and redrive) the state machine's executions, write the run's
# manifest and read its results. Created, never attached: attach it to operator roles.
resource "aws_iam_policy" "fleet_operator" {
  count = local.fleet_enabled ? 1 : 0

  name        = "${local.fleet_name}-operator"
  description = "s3memory fleet jobs: start, follow and redrive ${local.fleet_name}, write manifests and read results in ${local.fleet_results_bucket}; attach to operators only"
  policy      = local.fleet_operator_policy
  tags        = var.tags
}

resource "aws_cloudwatch_metric_alarm" "fleet_failed_executions" {
  count = local.fleet_enabled ? 1 : 0

  alarm_name          = "${local.fleet_name}-failed-executions"
  alarm_description   = "A fleet job run (${local.fleet_name}) failed, timed out or was aborted: `s3memory fleet report EXECUTION` names the failed agents and reasons; a redrive reruns only what did not finish."
  namespace           = "AWS/States"
  metric_name         = "ExecutionsFailed"
  dimensions          = { StateMachineArn = aws_sfn_state_machine.fleet[0].arn }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.fleet_alarm_actions
  ok_actions          = var.fleet_alarm_actions
  tags                = var.tags
}

# -- the scheduled retention: a prune job started by EventBridge Scheduler -------------------------

locals {
  retention_enabled = var.retention_not_accessed_days != null || var.retention_older_than_days != null
  retention_name    = "${var.name}-retention"
  # The scheduled execution's input; the state machine names the run and lists the agents.
  retention_input = {
    job = "prune"
    options = merge(
      { dry_run = var.retention_dry_run },
      var.retention_not_accessed_days != null ? { not_accessed_for = "${var.retention_not_accessed_days}d" } : {},
      var.retention_older_than_days != null ? { older_than = "${var.retention_older_than_days}d" } : {},
    )
    stores                       = var.retention_stores
    results                      = { bucket = local.fleet_results_bucket, prefix = local.fleet_results_prefix }
    batch_size                   = var.fleet_batch_size
    max_concurrency              = var.fleet_max_concurrency
    tolerated_failure_percentage = var.fleet_tolerated_failure_percentage
  }

  retention_scheduler_trust_policy = local.retention_enabled ? templatefile("${path.module}/policies/retention-scheduler-trust.json.tftpl", {
    account_id         = data.aws_caller_identity.current.account_id
    schedule_group_arn = aws_scheduler_schedule_group.retention[0].arn
  }) : null
  retention_scheduler_policy = local.retention_enabled ? templatefile("${path.module}/policies/retention-scheduler.json.tftpl", {
    state_machine_arn = local.fleet_state_machine_arn
  }) : null
}

resource "aws_scheduler_schedule_group" "retention" {
  count = local.retention_enabled ? 1 : 0

  name = local.retention_name
  tags = var.tags
}

resource "aws_iam_role" "retention_scheduler" {
  count = local.retention_enabled ? 1 : 0

  name               = "${local.retention_name}-scheduler"
  description        = "EventBridge Scheduler for the s3memory retention job: may only start ${local.fleet_name}"
  assume_role_policy = local.retention_scheduler_trust_policy
  tags               = var.tags
}

resource "aws_iam_role_policy" "retention_scheduler" {
  count = local.retention_enabled ? 1 : 0

  name   = "s3memory-retention-scheduler"
  role   = aws_iam_role.retention_scheduler[0].id
  policy = local.retention_scheduler_policy
}

resource "aws_scheduler_schedule" "retention" {
  # checkov:skip=CKV_AWS_297:The schedule's input is the prune job's constant options (no data to protect); a customer managed key would add a key policy for EventBridge Scheduler and nothing else.
  count = local.retention_enabled ? 1 : 0

  name                         = local.retention_name
  group_name                   = aws_scheduler_schedule_group.retention[0].name
  description                  = "Starts the s3memory retention job: a prune of every agent on ${local.fleet_name}"
  schedule_expression          = var.retention_schedule_expression
  schedule_expression_timezone = var.retention_schedule_timezone
  state                        = "ENABLED"

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = one(aws_sfn_state_machine.fleet[*].arn)
    role_arn = aws_iam_role.retention_scheduler[0].arn
    input    = jsonencode(local.retention_input)
  }

  lifecycle {
    precondition {
      condition     = var.fleet_jobs
      error_message = "The retention job runs as a fleet prune on the fleet state machine: set fleet_jobs = true (and fleet_package_path or fleet_package_s3) with retention_not_accessed_days or retention_older_than_days."
    }
    precondition {
      condition     = var.retention_not_accessed_days == null || var.retention_older_than_days == null
      error_message = "Set at most one of retention_not_accessed_days and retention_older_than_days: the retention job prunes by access or by modification, not both."
    }
  }

  depends_on = [aws_iam_role_policy.retention_scheduler]
}
