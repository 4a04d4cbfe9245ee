"""The fleet worker Lambda of the Terraform module (fleet.tf): one batch of a Distributed Map.

Each of the module's five worker functions (one per job role class) runs this file with its own
IAM role; the work is `s3memory.fleet.worker.lambda_handler`, the same code the `local` engine
runs. See terraform/README.md "Fleet jobs".
"""

from s3memory.fleet.worker import lambda_handler

__all__ = ["lambda_handler"]
