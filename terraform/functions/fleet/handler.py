"""The fleet worker Lambda of the Terraform module (fleet.tf).

Each of the module's five worker functions (one per job role class) runs this file with its own
IAM role; the work is `s3memory.fleet.worker.lambda_handler`, the same code the `local` engine
runs. Two events:

* a Distributed Map item batch, `{"BatchInput": {...}, "Items": [...]}`;
* `{"ListAgents": {"run_id", "stores", "results": {"bucket", "prefix"}}}`, which the state machine
  sends (to the inspect worker) when an execution brings no manifest, as the retention schedule's
  do: the run's manifest is listed and written (`s3memory.fleet.worker.list_agents`).

See terraform/README.md "Fleet jobs".
"""

from __future__ import annotations

from typing import Any

from s3memory.fleet import worker


def lambda_handler(event: Any, context: Any) -> dict[str, Any]:
    return worker.lambda_handler(event, context)
