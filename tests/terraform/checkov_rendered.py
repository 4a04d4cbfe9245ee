"""Write the rendered policy documents into a Terraform file that checkov can read.

checkov does not evaluate `templatefile()`, so on terraform/ itself its policy-content checks
(wildcards, privilege escalation, data exfiltration, write without constraints, ...) see
nothing. scripts/tf-check.sh runs checkov a second time on the file written here, where every
document is a literal heredoc, rendered with the test deployment's values (deploy.py).

    python3 -m tests.terraform.checkov_rendered OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.terraform.deploy import (
    EXAMPLE_POLICIES,
    POLICIES,
    example_template_values,
    module_template_values,
)
from tests.terraform.render import render_file

# template → (resource type, the attribute holding the document, other required attributes)
RESOURCES: dict[str, tuple[str, str, str]] = {
    "agent-access.json.tftpl": ("aws_iam_role_policy", "policy", 'name = "s3memory-agent-access"\n  role = "r"'),
    "operator.json.tftpl": ("aws_iam_policy", "policy", 'name = "s3memory-operator"'),
    "store-read.json.tftpl": ("aws_iam_policy", "policy", 'name = "s3memory-store-support-guidelines-read"'),
    "store-write.json.tftpl": ("aws_iam_policy", "policy", 'name = "s3memory-store-support-guidelines-write"'),
    "agent-trust.json.tftpl": ("aws_iam_role", "assume_role_policy", 'name = "s3memory-agent-access"'),
    "bucket.json.tftpl": ("aws_s3_bucket_policy", "policy", 'bucket = "acme-s3memory"'),
    "keystore-bucket.json.tftpl": ("aws_s3_bucket_policy", "policy", 'bucket = "acme-s3memory-keys"'),
    "data-key.json.tftpl": ("aws_kms_key", "policy", "enable_key_rotation = true"),
    "sse-key.json.tftpl": ("aws_kms_key", "policy", "enable_key_rotation = true"),
    "fleet-worker-trust.json.tftpl": ("aws_iam_role", "assume_role_policy", 'name = "s3memory-fleet-worker"'),
    **{
        f"fleet-{c}.json.tftpl": ("aws_iam_role_policy", "policy", f'name = "s3memory-fleet-{c}"\n  role = "r"')
        for c in ("inspect", "audit", "prune", "keys", "erase")
    },
    "fleet-state-machine.json.tftpl": (
        "aws_iam_role_policy",
        "policy",
        'name = "s3memory-fleet-state-machine"\n  role = "r"',
    ),
    "fleet-state-machine-trust.json.tftpl": ("aws_iam_role", "assume_role_policy", 'name = "s3memory-fleet-sfn"'),
    "fleet-operator.json.tftpl": ("aws_iam_policy", "policy", 'name = "s3memory-fleet-operator"'),
    "fleet-results-bucket.json.tftpl": ("aws_s3_bucket_policy", "policy", 'bucket = "acme-s3memory-fleet"'),
    "replication.json.tftpl": ("aws_iam_role_policy", "policy", 'name = "s3memory-replication"\n  role = "r"'),
    "replication-trust.json.tftpl": ("aws_iam_role", "assume_role_policy", 'name = "s3memory-replication"'),
    "retention-scheduler.json.tftpl": (
        "aws_iam_role_policy",
        "policy",
        'name = "s3memory-retention-scheduler"\n  role = "r"',
    ),
    "retention-scheduler-trust.json.tftpl": (
        "aws_iam_role",
        "assume_role_policy",
        'name = "s3memory-retention-scheduler"',
    ),
    "lambda-execution.json.tftpl": ("aws_iam_role_policy", "policy", 'name = "s3memory-agent-lambda"\n  role = "r"'),
    "lambda-trust.json.tftpl": ("aws_iam_role", "assume_role_policy", 'name = "s3memory-agent-lambda"'),
}


def rendered_terraform() -> str:
    blocks = []
    sources = [(POLICIES, module_template_values()), (EXAMPLE_POLICIES, example_template_values())]
    for folder, values in sources:
        for path in sorted(folder.glob("*.tftpl")):
            kind, attribute, extra = RESOURCES[path.name]
            document = json.dumps(json.loads(render_file(path, values[path.name])), indent=2)
            document = document.replace("${", "$${")  # IAM policy variables stay literal in HCL
            label = path.name.removesuffix(".json.tftpl").replace("-", "_")
            blocks.append(
                f'resource "{kind}" "{label}" {{\n  {extra}\n  {attribute} = <<-POLICY\n{document}\n  POLICY\n}}\n'
            )
    return "\n".join(blocks)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    (out / "rendered_policies.tf").write_text(rendered_terraform(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
