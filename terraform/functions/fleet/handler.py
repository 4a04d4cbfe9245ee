"""The fleet worker Lambda of the Terraform module (fleet.tf).

Each of the module's five worker functions (one per job role class) runs this file with its own
IAM role. Two events:

* a Distributed Map item batch, `{"BatchInput": {...}, "Items": [...]}`: the work is
  `s3memory.fleet.worker.lambda_handler`, the same code the `local` engine runs;
* `{"ListAgents": {"run_id", "stores", "results": {"bucket", "prefix"}}}`, which the state machine
  sends (to the inspect worker) when an execution brings no manifest, as the retention schedule's
  do: the agents (and with `stores`, the shared stores) listed with one LIST per 1,000, written
  as the run's manifest, a JSON array of `{"id", "kind"}` (the state machine's ItemReader reads
  `InputType: JSON`) at `<results prefix><run id>/manifest.json`. Returns its bucket, key and count.

See terraform/README.md "Fleet jobs".
"""

from __future__ import annotations

import json
from typing import Any

from s3memory.fleet import worker
from s3memory.fleet.manifest import listed
from s3memory.fleet.results import Location


def list_agents(request: Any) -> dict[str, Any]:
    try:
        run_id = str(request["run_id"])
        where = Location.parse(request["results"])
        stores = request.get("stores", False)
    except (KeyError, TypeError, ValueError) as err:
        raise worker.FleetInputError(f"not a ListAgents request: {err}") from None
    if not run_id or "/" in run_id or not isinstance(stores, bool):
        raise worker.FleetInputError("not a ListAgents request: run_id is a name without '/', stores true or false")
    rt = worker.runtime()
    items = listed(rt.store, rt.prefix, stores=stores)
    key = f"{where.run(run_id)}manifest.json"
    body = json.dumps([item.to_json() for item in items], separators=(",", ":")).encode()
    rt.s3.put_object(Bucket=where.bucket, Key=key, Body=body, ContentType="application/json")
    print(json.dumps({"fleet_manifest": len(items)}), flush=True)
    return {"bucket": where.bucket, "key": key, "count": len(items)}


def lambda_handler(event: Any, context: Any) -> dict[str, Any]:
    if isinstance(event, dict) and "ListAgents" in event:
        return list_agents(event["ListAgents"])
    return worker.lambda_handler(event, context)
