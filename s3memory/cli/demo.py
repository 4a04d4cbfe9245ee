"""`s3memory demo`: a scripted customer-service session on an in-process moto S3 + KMS.

Nothing to configure and nothing leaves the process: moto answers every S3 and KMS call.
It shows every command and its result, then the raw stored object, to prove the bytes at
rest are ciphertext and the metadata carries no plaintext or path.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

DEMO_BUCKET = "s3memory-demo"
DEMO_AGENT = "support-agent-1"
DEMO_PREFIX = "agents/"
DEMO_KEY_ALIAS = "alias/s3memory-demo"

GUIDELINES = """<guidelines>
  <greeting>Greet the customer by name when it is known.</greeting>
  <tone>Friendly, concise, no jargon.</tone>
  <escalation>Escalate billing disputes over $500 to a human.</escalation>
</guidelines>
"""

REFUNDS = """<refund_policy>
  <window days="30">Full refund within 30 days of purchase.</window>
  <condition>Items must be unused.</condition>
</refund_policy>
"""

SCRIPT: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/customer_service_guidelines.xml", "file_text": GUIDELINES},
    {"command": "create", "path": "/memories/refund_policies.xml", "file_text": REFUNDS},
    {"command": "create", "path": "/memories/customers/acme/notes.md", "file_text": "# ACME\n- prefers email\n"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/refund_policies.xml"},
    {
        "command": "str_replace",
        "path": "/memories/refund_policies.xml",
        "old_str": "Full refund within 30 days of purchase.",
        "new_str": "Full refund within 30 days; store credit up to 60 days.",
    },
    {"command": "insert", "path": "/memories/customers/acme/notes.md", "insert_line": 2,
     "insert_text": "- renewal due in March"},
    {"command": "rename", "old_path": "/memories/customers/acme", "new_path": "/memories/customers/acme-corp"},
    {"command": "view", "path": "/memories/customers/acme-corp/notes.md", "view_range": [1, -1]},
    {"command": "create", "path": "/memories/refund_policies.xml", "file_text": "again"},
    {"command": "view", "path": "/memories/../../etc/passwd"},
    {"command": "delete", "path": "/memories/customers"},
    {"command": "view", "path": "/memories"},
]  # fmt: skip


@contextmanager
def embedded() -> Iterator[tuple[Any, Any]]:
    """An in-process moto S3 + KMS with the demo bucket and the key alias/s3memory-demo: (s3, kms) clients."""
    import boto3
    from moto import mock_aws

    os.environ.setdefault("AWS_ACCESS_KEY_ID", "demo")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "demo")
    from botocore.config import Config

    from s3memory.core.limits import DEFAULT_MAX_WORKERS
    from s3memory.storage.clients import SPARE_CONNECTIONS

    # Hermetic: an AWS_ENDPOINT_URL in the environment must not send the demo's calls elsewhere
    # (botocore >= 1.31; its stubs lag). A pool as large as the tool's workers: no churn warning.
    pool = DEFAULT_MAX_WORKERS + SPARE_CONNECTIONS
    config = Config(ignore_configured_endpoint_urls=True, max_pool_connections=pool)  # type: ignore[call-arg]
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1", config=config)
        kms = boto3.client("kms", region_name="us-east-1", config=config)
        s3.create_bucket(Bucket=DEMO_BUCKET)
        key_id = kms.create_key(Description="s3memory demo")["KeyMetadata"]["KeyId"]
        kms.create_alias(AliasName=DEMO_KEY_ALIAS, TargetKeyId=key_id)
        yield s3, kms


def run(out: TextIO, *, raw_object: bool = True) -> int:
    """Run the scripted session; returns the number of commands that raised ToolError."""
    from s3memory.storage.kms import KmsKeys
    from s3memory.tool import S3MemoryTool, ToolError

    errors = 0
    with embedded() as (s3, kms):
        counts = {"s3": 0, "kms": 0}
        _count_calls(s3, kms, counts)
        write: Callable[[str], Any] = out.write
        write(f"Embedded moto S3 bucket {DEMO_BUCKET!r}, KMS key alias/s3memory-demo, agent {DEMO_AGENT!r}\n\n")
        with S3MemoryTool(
            bucket=DEMO_BUCKET,
            agent_id=DEMO_AGENT,
            keys=KmsKeys(DEMO_KEY_ALIAS, kms_client=kms),
            s3_client=s3,
            prefix=DEMO_PREFIX,
        ) as tool:
            for command in SCRIPT:
                write(f">>> {json.dumps(command, ensure_ascii=False)}\n")
                try:
                    write(tool.call(command) + "\n\n")
                except ToolError as exc:
                    errors += 1
                    write(f"[tool_result is_error=true] {exc.content}\n\n")
        write(f"Calls made: {counts['s3']} to S3, {counts['kms']} to KMS\n")
        if raw_object:
            _show_raw(s3, write)
    return errors


def _count_calls(s3: Any, kms: Any, counts: dict[str, int]) -> None:
    def bump(service: str) -> Callable[..., None]:
        def handler(**_: Any) -> None:
            counts[service] += 1

        return handler

    s3.meta.events.register("before-call.s3.*", bump("s3"))
    kms.meta.events.register("before-call.kms.*", bump("kms"))


def _show_raw(s3: Any, write: Callable[[str], Any]) -> None:
    key = f"{DEMO_PREFIX}{DEMO_AGENT}/refund_policies.xml"
    obj = s3.get_object(Bucket=DEMO_BUCKET, Key=key)
    body = obj["Body"].read()
    write(f"\nRaw stored object s3://{DEMO_BUCKET}/{key}\n")
    write(f"  ContentLength: {len(body)} bytes (plaintext {len(body) - 16} + 16-byte GCM tag)\n")
    write("  User metadata (the envelope header; no path, no plaintext):\n")
    for name, value in sorted(obj["Metadata"].items()):
        shown = value if len(value) <= 60 else value[:57] + "..."
        write(f"    x-amz-meta-{name}: {shown}\n")
    write(f"  First 48 bytes of the body: {body[:48].hex()}\n")
    write(f"  Does the body contain the text 'refund'? {b'refund' in body}\n")
