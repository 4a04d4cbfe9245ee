"""`s3memory demo`: a scripted customer-service session on an in-process moto S3 + KMS.

Nothing to configure and nothing leaves the process: moto answers every S3 and KMS call.
A curator (another agent, with its own actor) fills the shared store `support-guidelines`; the
support agent mounts it read-only at `/memories/guidelines/`, reads it, keeps its own notes beside
it, and is refused when it tries to edit a guideline. Every command and its result is shown, then
the raw stored object, to prove the bytes at rest are ciphertext and the metadata carries no
plaintext or path, and who wrote it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from .exits import UsageError

# The demo's extra, as `s3memory mcp` names its own.
NEEDS_MOTO = "the embedded S3 + KMS (s3memory demo, chat --embedded) needs moto: pip install 's3memory[demo]'"

DEMO_BUCKET = "s3memory-demo"
DEMO_AGENT = "support-agent-1"
DEMO_CURATOR, DEMO_ACTOR = "guidelines-curator", "support-team-lead"
DEMO_STORE = "support-guidelines"
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

# The curator's tool mounts the store read-write as /memories/guidelines too.
CURATOR_SCRIPT: list[dict[str, Any]] = [
    {"command": "create", "path": "/memories/guidelines/customer_service_guidelines.xml", "file_text": GUIDELINES},
    {"command": "create", "path": "/memories/guidelines/refund_policies.xml", "file_text": REFUNDS},
    {
        "command": "str_replace",
        "path": "/memories/guidelines/refund_policies.xml",
        "old_str": "Full refund within 30 days of purchase.",
        "new_str": "Full refund within 30 days; store credit up to 60 days.",
    },
]

SCRIPT: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/guidelines/refund_policies.xml"},
    {"command": "create", "path": "/memories/customers/acme/notes.md", "file_text": "# ACME\n- prefers email\n"},
    {"command": "view", "path": "/memories"},
    {
        "command": "str_replace",
        "path": "/memories/guidelines/refund_policies.xml",
        "old_str": "store credit up to 60 days",
        "new_str": "store credit up to 365 days",
    },
    {"command": "insert", "path": "/memories/customers/acme/notes.md", "insert_line": 2,
     "insert_text": "- renewal due in March"},
    {"command": "rename", "old_path": "/memories/customers/acme", "new_path": "/memories/customers/acme-corp"},
    {"command": "view", "path": "/memories/customers/acme-corp/notes.md", "view_range": [1, -1]},
    {"command": "rename", "old_path": "/memories/customers/acme-corp/notes.md",
     "new_path": "/memories/guidelines/acme.md"},
    {"command": "delete", "path": "/memories/guidelines"},
    {"command": "view", "path": "/memories/../../etc/passwd"},
    {"command": "delete", "path": "/memories/customers"},
    {"command": "view", "path": "/memories"},
]  # fmt: skip


@contextmanager
def embedded() -> Iterator[tuple[Any, Any]]:
    """An in-process moto S3 + KMS with the demo bucket and the key alias/s3memory-demo: (s3, kms) clients.
    Raises `UsageError` naming the extra to install when moto is missing (`demo`, `chat --embedded`)."""
    import boto3

    try:
        from moto import mock_aws
    except ImportError:
        raise UsageError(NEEDS_MOTO) from None

    os.environ.setdefault("AWS_ACCESS_KEY_ID", "demo")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "demo")
    from botocore.config import Config

    from s3memory.storage.clients import botocore_config

    # Hermetic: an AWS_ENDPOINT_URL in the environment must not send the demo's calls elsewhere. A pool
    # sized for the tool's workers, as every client the project builds (no connection-pool warning).
    hermetic = Config(ignore_configured_endpoint_urls=True)  # type: ignore[call-arg]  # botocore >= 1.31; stubs lag
    config = botocore_config().merge(hermetic)
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1", config=config)
        kms = boto3.client("kms", region_name="us-east-1", config=config)
        s3.create_bucket(Bucket=DEMO_BUCKET)
        key_id = kms.create_key(Description="s3memory demo")["KeyMetadata"]["KeyId"]
        kms.create_alias(AliasName=DEMO_KEY_ALIAS, TargetKeyId=key_id)
        yield s3, kms


def run(out: TextIO, *, raw_object: bool = True) -> int:
    """Run the scripted session; returns the number of the support agent's commands that raised ToolError."""
    from s3memory.core.mounts import Mount
    from s3memory.storage.kms import KmsKeys
    from s3memory.tool import S3MemoryTool

    with embedded() as (s3, kms):
        counts = {"s3": 0, "kms": 0}
        _count_calls(s3, kms, counts)
        write: Callable[[str], Any] = out.write
        write(f"Embedded moto S3 bucket {DEMO_BUCKET!r}, KMS key alias/s3memory-demo, agent {DEMO_AGENT!r}\n\n")
        common: dict[str, Any] = {"bucket": DEMO_BUCKET, "keys": KmsKeys(DEMO_KEY_ALIAS, kms_client=kms),
                                  "s3_client": s3, "prefix": DEMO_PREFIX}  # fmt: skip
        write(
            f"== {DEMO_CURATOR} (actor {DEMO_ACTOR!r}) curates the shared store {DEMO_STORE!r}, mounted read-write\n\n"
        )
        with S3MemoryTool(agent_id=DEMO_CURATOR, actor=DEMO_ACTOR,
                          mounts={"guidelines": Mount(DEMO_STORE, read_only=False)}, **common) as curator:  # fmt: skip
            _session(curator, CURATOR_SCRIPT, write)
        write(f"== {DEMO_AGENT} mounts {DEMO_STORE!r} read-only at /memories/guidelines\n\n")
        with S3MemoryTool(agent_id=DEMO_AGENT, mounts={"guidelines": Mount(DEMO_STORE)}, **common) as tool:
            errors = _session(tool, SCRIPT, write)
            write(f"Calls made: {counts['s3']} to S3, {counts['kms']} to KMS\n")
            if raw_object:
                _show_raw(s3, tool, write)
    return errors


def _session(tool: Any, script: list[dict[str, Any]], write: Callable[[str], Any]) -> int:
    from s3memory.tool import ToolError

    errors = 0
    for command in script:
        write(f">>> {json.dumps(command, ensure_ascii=False)}\n")
        try:
            write(tool.call(command) + "\n\n")
        except ToolError as exc:
            errors += 1
            write(f"[tool_result is_error=true] {exc.content}\n\n")
    return errors


def _count_calls(s3: Any, kms: Any, counts: dict[str, int]) -> None:
    def bump(service: str) -> Callable[..., None]:
        def handler(**_: Any) -> None:
            counts[service] += 1

        return handler

    s3.meta.events.register("before-call.s3.*", bump("s3"))
    kms.meta.events.register("before-call.kms.*", bump("kms"))


def _show_raw(s3: Any, tool: Any, write: Callable[[str], Any]) -> None:
    from s3memory.core.envelope import Header

    key = f"{DEMO_PREFIX}_stores/{DEMO_STORE}/refund_policies.xml"
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
    store = tool.commands.stores["guidelines"][1].vault
    path = store.parse("/memories/refund_policies.xml")
    record = store.attribution_of(path, Header.from_metadata(obj["Metadata"]))
    write(f"  Written by (sealed in the header): actor {record.actor!r}, agent {record.agent!r}, {record.command}\n")
