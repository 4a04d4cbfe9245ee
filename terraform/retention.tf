################################################################################
# Retention job (opt-in): EventBridge Scheduler → a Lambda function running `s3memory prune`
################################################################################

# With retention_not_accessed_days (or retention_older_than_days) set, a schedule invokes a
# function that runs `s3memory prune --agent <id> --not-accessed-for <N>d` (or --older-than)
# for every agent under the prefix (functions/retention/handler.py). Beside the lifecycle rule
# of memory_expiration_days, which counts from the last write, this counts from the last
# access. See README "Retention".
#
# The function's role may list the prefix, read object headers and access tags, and delete
# current objects under the prefix: no version deletes (pruned files stay restorable until the
# noncurrent-version rule removes them), no writes, no KMS, nothing in the keystore bucket, and
# an explicit deny on deleting anything under `.s3memory/`. The schedule's role may only invoke
# this function.

locals {
  retention_enabled         = var.retention_not_accessed_days != null || var.retention_older_than_days != null
  retention_name            = "${var.name}-retention"
  retention_log_group_name  = "/aws/lambda/${local.retention_name}"
  retention_package_from_s3 = var.retention_package_s3 != null
  # The prune criterion, as the CLI flag (for descriptions).
  retention_criterion = var.retention_not_accessed_days != null ? "--not-accessed-for ${var.retention_not_accessed_days}d" : (
    var.retention_older_than_days != null ? "--older-than ${var.retention_older_than_days}d" : null
  )

  retention_trust_policy = local.retention_enabled ? templatefile("${path.module}/policies/retention-trust.json.tftpl", {}) : null
  retention_function_policy = local.retention_enabled ? templatefile("${path.module}/policies/retention-function.json.tftpl", {
    bucket_arn    = aws_s3_bucket.this.arn
    agent_prefix  = var.prefix
    log_group_arn = aws_cloudwatch_log_group.retention[0].arn
  }) : null
  retention_scheduler_trust_policy = local.retention_enabled ? templatefile("${path.module}/policies/retention-scheduler-trust.json.tftpl", {
    account_id         = data.aws_caller_identity.current.account_id
    schedule_group_arn = aws_scheduler_schedule_group.retention[0].arn
  }) : null
  retention_scheduler_policy = local.retention_enabled ? templatefile("${path.module}/policies/retention-scheduler.json.tftpl", {
    function_arn = aws_lambda_function.retention[0].arn
  }) : null
}

resource "aws_cloudwatch_log_group" "retention" {
  # checkov:skip=CKV_AWS_158:The function logs agent ids, counts and failure reasons only, never file paths, memory contents or keys; CloudWatch Logs encrypts log data at rest by default.
  count = local.retention_enabled ? 1 : 0

  name              = local.retention_log_group_name
  retention_in_days = var.retention_log_retention_days
  tags              = var.tags
}

resource "aws_iam_role" "retention" {
  count = local.retention_enabled ? 1 : 0

  name               = local.retention_name
  description        = "s3memory retention job: prunes memory files under ${var.prefix} in ${var.bucket_name}; no version deletes, no writes, no KMS"
  assume_role_policy = local.retention_trust_policy
  tags               = var.tags
}

resource "aws_iam_role_policy" "retention" {
  count = local.retention_enabled ? 1 : 0

  name   = "s3memory-retention"
  role   = aws_iam_role.retention[0].id
  policy = local.retention_function_policy
}

resource "aws_lambda_function" "retention" {
  # checkov:skip=CKV_AWS_116:Invoked asynchronously by EventBridge Scheduler once per period; a failed run is retried by Lambda and then by the next scheduled run (prune is idempotent), and shows in the function's Errors metric and logs. Add an on-failure destination to be notified.
  # checkov:skip=CKV_AWS_117:The function talks only to the public S3 endpoint; a VPC would need an S3 gateway endpoint and adds no isolation beyond the function's IAM role, which is scoped to the prefix.
  # checkov:skip=CKV_AWS_272:Code signing needs an AWS Signer profile owned by the deploying account; attach an aws_lambda_code_signing_config in a production pipeline.
  # checkov:skip=CKV_AWS_173:The environment holds only the bucket name, the prefix, the region and the retention period, no secrets.
  count = local.retention_enabled ? 1 : 0

  function_name = local.retention_name
  description   = "s3memory retention: prune ${local.retention_criterion} for every agent under ${var.prefix}"
  role          = aws_iam_role.retention[0].arn
  runtime       = "python3.12"
  architectures = ["x86_64"]
  handler       = "handler.lambda_handler"

  # The deployment package: a local zip (functions/retention/build.sh) or an object in S3.
  filename          = var.retention_package_path
  source_code_hash  = var.retention_package_path == null ? null : filebase64sha256(var.retention_package_path)
  s3_bucket         = local.retention_package_from_s3 ? var.retention_package_s3.bucket : null
  s3_key            = local.retention_package_from_s3 ? var.retention_package_s3.key : null
  s3_object_version = local.retention_package_from_s3 ? var.retention_package_s3.object_version : null

  timeout     = var.retention_timeout
  memory_size = var.retention_memory_size
  # One run at a time: a run still going when the next is due makes the next one wait.
  reserved_concurrent_executions = 1

  environment {
    # No key source: prune decrypts nothing (see handler.py).
    variables = merge(
      {
        S3MEMORY_BUCKET   = aws_s3_bucket.this.id
        S3MEMORY_PREFIX   = var.prefix
        S3MEMORY_REGION   = local.region
        RETENTION_DRY_RUN = tostring(var.retention_dry_run)
      },
      { for name, days in {
        RETENTION_NOT_ACCESSED_DAYS = var.retention_not_accessed_days
        RETENTION_OLDER_THAN_DAYS   = var.retention_older_than_days
      } : name => tostring(days) if days != null },
    )
  }

  tracing_config {
    mode = "Active"
  }

  tags = var.tags

  lifecycle {
    precondition {
      condition     = var.retention_not_accessed_days == null || var.retention_older_than_days == null
      error_message = "Set at most one of retention_not_accessed_days and retention_older_than_days: the retention job prunes by access or by modification, not both."
    }
    precondition {
      condition     = (var.retention_package_path == null) != (var.retention_package_s3 == null)
      error_message = "The retention job needs its deployment package: set exactly one of retention_package_path (build it with terraform/functions/retention/build.sh) and retention_package_s3."
    }
  }

  depends_on = [aws_iam_role_policy.retention, aws_cloudwatch_log_group.retention]
}

resource "aws_scheduler_schedule_group" "retention" {
  count = local.retention_enabled ? 1 : 0

  name = local.retention_name
  tags = var.tags
}

resource "aws_iam_role" "retention_scheduler" {
  count = local.retention_enabled ? 1 : 0

  name               = "${local.retention_name}-scheduler"
  description        = "EventBridge Scheduler for the s3memory retention job: may only invoke ${local.retention_name}"
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
  # checkov:skip=CKV_AWS_297:The schedule's input is the constant {} (no data to protect); a customer managed key would add a key policy for EventBridge Scheduler and nothing else.
  count = local.retention_enabled ? 1 : 0

  name                         = local.retention_name
  group_name                   = aws_scheduler_schedule_group.retention[0].name
  description                  = "Runs the s3memory retention job (${local.retention_name})"
  schedule_expression          = var.retention_schedule_expression
  schedule_expression_timezone = var.retention_schedule_timezone
  state                        = "ENABLED"

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = aws_lambda_function.retention[0].arn
    role_arn = aws_iam_role.retention_scheduler[0].arn
    input    = jsonencode({})
  }

  depends_on = [aws_iam_role_policy.retention_scheduler]
}
