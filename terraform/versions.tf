terraform {
  required_version = ">= 1.5.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.40, < 7.0"
      # The replica region's provider (replica_region); pass `aws.replica = aws` when it is off.
      configuration_aliases = [aws.replica]
    }
  }
}
