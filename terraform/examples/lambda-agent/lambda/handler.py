"""A multi-tenant Lambda that runs one Claude turn for one agent, with memory on s3memory.

Event: ``{"agent_id": "agent-42", "prompt": "..."}``.
Answer: ``{"agent_id": ..., "stop_reason": ..., "text": ...}``.

The function's own role can do nothing with the memory bucket or keys. For every invocation
it assumes the module's agent-access role with the session tag ``s3memory-agent=<agent_id>``
(``s3memory.sts.assume_agent_session``), so AWS itself confines the call to
``<prefix><agent_id>/`` and to data keys bound to that agent, whatever the code below does.

Configuration (environment; Terraform sets all of it):
  S3MEMORY_BUCKET, S3MEMORY_PREFIX, S3MEMORY_KMS_KEY_ID, S3MEMORY_REGION,
  S3MEMORY_AGENT_ROLE_ARN, S3MEMORY_ENDPOINT_URL (optional),
  ANTHROPIC_MODEL, ANTHROPIC_MAX_TOKENS, ANTHROPIC_MAX_ITERATIONS,
  ANTHROPIC_API_KEY (local runs) or ANTHROPIC_API_KEY_SECRET_ARN (a Secrets Manager secret
  whose SecretString is the key; read once per container, never logged).
"""

from __future__ import annotations

import logging
import os
from typing import Any

import anthropic
import boto3

from s3memory import KmsKeys, S3MemoryTool
from s3memory.storage.sts import assume_agent_session

logger = logging.getLogger()
logger.setLevel(logging.INFO)

# The memory protocol the API documents for the memory tool.
MEMORY_SYSTEM_PROMPT = """\
IMPORTANT: ALWAYS VIEW YOUR MEMORY DIRECTORY BEFORE DOING ANYTHING ELSE.
MEMORY PROTOCOL:
1. Use the `view` command of your `memory` tool to check for earlier progress.
2. ... (work on the task) ...
     - As you make progress, record status / progress / thoughts etc in your memory.
ASSUME INTERRUPTION: Your context window might be reset at any moment, so you risk losing any \
progress that is not recorded in your memory directory."""

MEMORY_BETA = "context-management-2025-06-27"

_api_key: str | None = None


def _setting(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if not value:
        raise RuntimeError(f"environment variable {name} is not set")
    return value


def _anthropic_api_key() -> str:
    """The API key: ANTHROPIC_API_KEY if set, else the Secrets Manager secret (cached)."""
    global _api_key  # one fetch per warm container
    if _api_key is None:
        direct = os.environ.get("ANTHROPIC_API_KEY")
        if direct:
            _api_key = direct
        else:
            secret_arn = _setting("ANTHROPIC_API_KEY_SECRET_ARN")
            secrets = boto3.client("secretsmanager", region_name=os.environ.get("AWS_REGION"))
            _api_key = secrets.get_secret_value(SecretId=secret_arn)["SecretString"].strip()
    return _api_key


def _memory_tool(agent_id: str) -> S3MemoryTool:
    """S3MemoryTool whose S3 and KMS clients run as the agent's own tagged role session."""
    region = _setting("S3MEMORY_REGION", os.environ.get("AWS_REGION"))
    session = assume_agent_session(_setting("S3MEMORY_AGENT_ROLE_ARN"), agent_id, region_name=region)
    endpoint_url = os.environ.get("S3MEMORY_ENDPOINT_URL") or None
    s3 = session.client("s3", region_name=region, endpoint_url=endpoint_url)
    kms = session.client("kms", region_name=region)
    return S3MemoryTool(
        bucket=_setting("S3MEMORY_BUCKET"),
        agent_id=agent_id,
        keys=KmsKeys(_setting("S3MEMORY_KMS_KEY_ID"), kms_client=kms),
        s3_client=s3,
        prefix=os.environ.get("S3MEMORY_PREFIX", "agents/"),
    )


def _parse_event(event: Any) -> tuple[str, str]:
    if not isinstance(event, dict):
        raise ValueError("event must be an object with 'agent_id' and 'prompt'")
    agent_id, prompt = event.get("agent_id"), event.get("prompt")
    if not isinstance(agent_id, str) or not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("event needs a string 'agent_id' and a non-empty string 'prompt'")
    return agent_id, prompt


def lambda_handler(event: Any, context: Any) -> dict[str, Any]:
    agent_id, prompt = _parse_event(event)
    # ValueError for an invalid agent id, before any AWS call. The tool owns a worker pool:
    # close it at the end of every invocation, or warm containers accumulate threads.
    with _memory_tool(agent_id) as tool:
        client = anthropic.Anthropic(api_key=_anthropic_api_key())
        runner = client.beta.messages.tool_runner(
            model=_setting("ANTHROPIC_MODEL"),
            max_tokens=int(_setting("ANTHROPIC_MAX_TOKENS", "4096")),
            max_iterations=int(_setting("ANTHROPIC_MAX_ITERATIONS", "20")),
            system=MEMORY_SYSTEM_PROMPT,
            messages=[{"role": "user", "content": prompt}],
            tools=[tool],
            betas=[MEMORY_BETA],
        )
        final = runner.until_done()
    text = "".join(block.text for block in final.content if block.type == "text")
    # Log the agent and usage only: prompts, answers and memory contents stay out of the logs.
    logger.info(
        "agent=%s stop_reason=%s input_tokens=%s output_tokens=%s",
        agent_id,
        final.stop_reason,
        final.usage.input_tokens,
        final.usage.output_tokens,
    )
    return {"agent_id": agent_id, "stop_reason": final.stop_reason, "text": text}
