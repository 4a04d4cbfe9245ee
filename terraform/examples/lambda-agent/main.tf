provider "aws" {
  region = var.region
}

locals {
  function_name   = "${var.name}-agent"
  lambda_zip_path = coalesce(var.lambda_zip_path, "${path.module}/build/lambda.zip")
  # The guidelines store at /memories/guidelines/, read-only (the module grants it to every agent).
  mounts = var.guidelines_store == null ? {} : { S3MEMORY_MOUNTS = "guidelines=${var.guidelines_store}:ro" }
}

# The function's own role: logs, its API key, and assuming the agent-access role with a
# session tag. It has no S3 or KMS permission of its own, so every memory call runs as a
# tagged agent session that IAM confines to that agent.
resource "aws_iam_role" "lambda" {
  name               = "${var.name}-agent-lambda"
  assume_role_policy = templatefile("${path.module}/policies/lambda-trust.json.tftpl", {})
  tags               = var.tags
}

module "s3memory" {
  source = "../.."
  # The module's replica-region provider; this example runs in one region (replica_region unset).
  providers = {
    aws         = aws
    aws.replica = aws
  }

  bucket_name                       = var.bucket_name
  name                              = var.name
  prefix                            = var.prefix
  agent_role_trusted_principal_arns = [aws_iam_role.lambda.arn]
  memory_expiration_days            = var.memory_expiration_days
  # Every agent reads the curated guidelines store; operators fill it (s3memory import --store).
  stores = var.guidelines_store == null ? {} : { (var.guidelines_store) = { readers = ["*"] } }
  tags   = var.tags
}

resource "aws_cloudwatch_log_group" "lambda" {
  # checkov:skip=CKV_AWS_158:The handler logs agent ids, stop reasons and token counts only, never prompts, answers or memory contents; CloudWatch Logs encrypts log data at rest by default. Set kms_key_id where policy requires a customer managed key.
  name              = "/aws/lambda/${local.function_name}"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

resource "aws_iam_role_policy" "lambda" {
  name = "s3memory-agent-lambda"
  role = aws_iam_role.lambda.id
  policy = templatefile("${path.module}/policies/lambda-execution.json.tftpl", {
    log_group_arn  = aws_cloudwatch_log_group.lambda.arn
    agent_role_arn = module.s3memory.agent_role_arn
    secret_arn     = var.anthropic_api_key_secret_arn
  })
}

# s3memory and its dependencies as a layer (`make lambda-layer` at the repository's root), when
# s3memory_layer_zip_path is set; the function's own package is then handler.py alone
# (`./build.sh --handler-only`). Without it, build.sh bundles everything in the function.
resource "aws_lambda_layer_version" "s3memory" {
  count                    = var.s3memory_layer_zip_path == null ? 0 : 1
  layer_name               = "${var.name}-s3memory"
  description              = "s3memory and its dependencies, built by make lambda-layer"
  filename                 = var.s3memory_layer_zip_path
  source_code_hash         = filebase64sha256(var.s3memory_layer_zip_path)
  compatible_runtimes      = ["python3.12"]
  compatible_architectures = ["x86_64"]
}

resource "aws_lambda_function" "agent" {
  # checkov:skip=CKV_AWS_116:Invoked synchronously (RequestResponse): failures return to the caller, so there are no asynchronous events to dead-letter. Add a DLQ or on-failure destination if you invoke it asynchronously.
  # checkov:skip=CKV_AWS_117:The function talks only to public endpoints (STS, S3, KMS, Secrets Manager, the Anthropic API); a VPC would need NAT for the Anthropic API and adds no isolation beyond the per-agent IAM session.
  # checkov:skip=CKV_AWS_272:Code signing needs an AWS Signer profile owned by the deploying account; attach an aws_lambda_code_signing_config in a production pipeline.
  # checkov:skip=CKV_AWS_173:The environment holds only names and ARNs (bucket, keys, roles, the secret's ARN, the model), no secrets; the API key is fetched from Secrets Manager at run time.
  function_name                  = local.function_name
  description                    = "Runs one Claude turn with s3memory for the agent its caller is"
  role                           = aws_iam_role.lambda.arn
  runtime                        = "python3.12"
  architectures                  = ["x86_64"]
  handler                        = "handler.lambda_handler"
  layers                         = aws_lambda_layer_version.s3memory[*].arn
  filename                       = local.lambda_zip_path
  source_code_hash               = filebase64sha256(local.lambda_zip_path)
  timeout                        = var.lambda_timeout
  memory_size                    = var.lambda_memory_size
  reserved_concurrent_executions = var.reserved_concurrent_executions

  environment {
    # module.s3memory.environment carries S3MEMORY_BUCKET, S3MEMORY_KEYSTORE_BUCKET (the branch
    # keys' own bucket, which the handler passes to S3MemoryTool) and the other S3MEMORY_* settings.
    # ANTHROPIC_MODEL only when anthropic_model is set: otherwise the handler uses s3memory's default.
    variables = merge(module.s3memory.environment, {
      ANTHROPIC_MAX_TOKENS          = tostring(var.anthropic_max_tokens)
      ANTHROPIC_MAX_ITERATIONS      = tostring(var.anthropic_max_iterations)
      ANTHROPIC_API_KEY_SECRET_ARN  = var.anthropic_api_key_secret_arn
      S3MEMORY_TRUST_EVENT_AGENT_ID = tostring(var.trust_event_agent_id)
      S3MEMORY_AGENT_ID_CLAIM       = var.agent_id_claim
    }, { for name, value in { ANTHROPIC_MODEL = var.anthropic_model } : name => value if value != null }, local.mounts)
  }

  tracing_config {
    mode = "Active"
  }

  tags = var.tags

  depends_on = [aws_iam_role_policy.lambda, aws_cloudwatch_log_group.lambda]
}
