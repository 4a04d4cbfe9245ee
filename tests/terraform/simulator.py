"""Drive @cloud-copilot/iam-simulate (a real IAM policy evaluator, Node) from pytest.

One long-lived `node sim/simulate.mjs` process answers one JSON line per request. Each
request names the principal, action, resource and request context; identity policies and
an optional resource policy are the rendered Terraform documents.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SIM_DIR = Path(__file__).resolve().parent / "sim"
SETUP_HINT = "run `bash scripts/tf-check.sh` (or `npm ci --prefix tests/terraform/sim`) to install it"


class SimulatorUnavailable(RuntimeError):
    pass


@dataclass
class Decision:
    result: str
    ignored_context_keys: list[str] = field(default_factory=list)


class Simulator:
    def __init__(self) -> None:
        node = shutil.which("node")
        if node is None:
            raise SimulatorUnavailable(f"node is not on PATH; the policy tests need Node.js >= 20 and {SETUP_HINT}")
        if not (SIM_DIR / "node_modules" / "@cloud-copilot" / "iam-simulate" / "package.json").is_file():
            raise SimulatorUnavailable(f"@cloud-copilot/iam-simulate is not installed in {SIM_DIR}: {SETUP_HINT}")
        self._process = subprocess.Popen(
            [node, str(SIM_DIR / "simulate.mjs")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=SIM_DIR,
        )

    def evaluate(
        self,
        *,
        principal: str,
        action: str,
        resource: str,
        account: str,
        context: dict[str, str | list[str]],
        identity_policies: list[Any],
        resource_policy: Any | None = None,
    ) -> Decision:
        simulation: dict[str, Any] = {
            "request": {
                "principal": principal,
                "action": action,
                "resource": {"resource": resource, "accountId": account},
                "contextVariables": context,
            },
            "identityPolicies": [{"name": f"policy{i}", "policy": p} for i, p in enumerate(identity_policies)],
            "serviceControlPolicies": [],
            "resourceControlPolicies": [],
        }
        if resource_policy is not None:
            simulation["resourcePolicy"] = resource_policy
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        self._process.stdin.write(json.dumps({"simulation": simulation}) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the simulator exited (code {self._process.poll()})")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"the simulator refused the request: {answer['error']}")
        return Decision(answer["result"], answer["ignoredContextKeys"])

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
