"""A multi-tenant Lambda that runs one Claude turn for one agent, with memory on s3memory.

Who chooses the agent id decides whose memory a turn reads and writes, so the handler takes it
from the caller's identity, not from what the caller sends:

* Behind an API Gateway HTTP API with an authorizer (the default): the agent id is the one the
  authorizer vouches for, ``requestContext.authorizer.lambda.agent_id`` (a Lambda authorizer's
  context) or the JWT claim named by S3MEMORY_AGENT_ID_CLAIM (default ``agent_id``) of a JWT
  authorizer. The body is ``{"prompt": "..."}``; an ``agent_id`` in it must be the same one.
  This binds the agent to the caller only if API Gateway is the only principal that may invoke
  the function: anyone else who may invoke it can send any ``requestContext`` they like.
* Invoked directly, ``{"agent_id": "agent-42", "prompt": "..."}``, only with
  S3MEMORY_TRUST_EVENT_AGENT_ID=true: every principal that may invoke the function can then act
  as any agent, so set it only when those are trusted (your own backend that has already
  authenticated the user). Without it, a request no authorizer vouches for is refused.

Answer: ``{"agent_id": ..., "stop_reason": ..., "text": ...}`` (an HTTP API receives it as a
JSON body; a refused request gets 403, a malformed one 400, each with ``{"error": ...}``).

The function's own role can do nothing with the memory bucket or keys. For every invocation
it assumes the module's agent-access role with the session tag ``s3memory-agent=<agent_id>``
(``s3memory.assume_agent_session``), so AWS itself confines the call to
``<prefix><agent_id>/`` and to data keys bound to that agent, whatever the code below does.

Configuration (environment; Terraform sets all of it):
  S3MEMORY_BUCKET, S3MEMORY_KEYSTORE_BUCKET (the agents' branch keys; unset keeps them in the
  memory bucket), S3MEMORY_PREFIX, S3MEMORY_KMS_KEY_ID, S3MEMORY_REGION,
  S3MEMORY_AGENT_ROLE_ARN, S3MEMORY_ENDPOINT_URL (optional: every AWS client here uses it),
  S3MEMORY_TRUST_EVENT_AGENT_ID (true or false, default false), S3MEMORY_AGENT_ID_CLAIM,
  S3MEMORY_TRACK_ACCESS (true or false, default false: tag each file with the day it was last
  used, for the module's retention job by access, which sets it),
  S3MEMORY_MODEL or ANTHROPIC_MODEL (default: s3memory's DEFAULT_MODEL),
  ANTHROPIC_MAX_TOKENS, ANTHROPIC_MAX_ITERATIONS,
  ANTHROPIC_API_KEY (local runs) or ANTHROPIC_API_KEY_SECRET_ARN (a Secrets Manager secret
  whose SecretString is the key; read once per container, never logged).
"""

from __future__ import annotations

import base64
import json
import logging
import os
from typing import TYPE_CHECKING, Any

import anthropic
import boto3

from s3memory import KmsKeys, S3MemoryTool, assume_agent_session
from s3memory.core.limits import DEFAULT_MODEL
from s3memory.core.mounts import parse_env
from s3memory.core.paths import validate_agent_id
from s3memory.storage.clients import botocore_config

if TYPE_CHECKING:
    from mypy_boto3_sts import STSClient

logger = logging.getLogger()
logger.setLevel(logging.INFO)

# The API adds the memory protocol prompt ("IMPORTANT: ALWAYS VIEW YOUR MEMORY DIRECTORY BEFORE
# DOING ANYTHING ELSE ...") itself whenever the memory tool is present, as for `s3memory chat`
# (docs/cli.md), so this system prompt only says what is worth remembering.
SYSTEM_PROMPT = (
    "You are a helpful assistant whose memory directory (/memories) persists across conversations. "
    "Record what will help in later conversations: facts about the user and their preferences, decisions, "
    "and progress on ongoing tasks. Do not store the conversation itself. Keep memory files short and "
    "organized, and update or delete what is outdated. Never store secrets such as passwords, API keys "
    "or card numbers; the memory refuses them."
)

MEMORY_BETA = "context-management-2025-06-27"
TRUST_EVENT_AGENT_ID = "S3MEMORY_TRUST_EVENT_AGENT_ID"
TRACK_ACCESS = "S3MEMORY_TRACK_ACCESS"
AGENT_ID_CLAIM = "S3MEMORY_AGENT_ID_CLAIM"

_api_key: str | None = None
_sts: STSClient | None = None


class Refused(Exception):
    """The request may not act as the agent it asks for; retrying the same request does not help."""


def _setting(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if not value:
        raise RuntimeError(f"environment variable {name} is not set")
    return value


def _region() -> str:
    return _setting("S3MEMORY_REGION", os.environ.get("AWS_REGION"))


def _endpoint_url() -> str | None:
    """S3MEMORY_ENDPOINT_URL (LocalStack, a moto server, ...): every AWS client here talks to it."""
    return os.environ.get("S3MEMORY_ENDPOINT_URL") or None


def _model() -> str:
    return os.environ.get("S3MEMORY_MODEL") or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL


def _flag(name: str) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if value not in ("", "true", "false"):
        raise RuntimeError(f"environment variable {name} must be true or false")
    return value == "true"


def _trusts_event_agent_id() -> bool:
    return _flag(TRUST_EVENT_AGENT_ID)


def _anthropic_api_key() -> str:
    """The API key: ANTHROPIC_API_KEY if set, else the Secrets Manager secret (cached)."""
    global _api_key  # one fetch per warm container
    if _api_key is None:
        direct = os.environ.get("ANTHROPIC_API_KEY")
        if direct:
            _api_key = direct
        else:
            secret_arn = _setting("ANTHROPIC_API_KEY_SECRET_ARN")
            secrets = boto3.client(
                "secretsmanager", region_name=os.environ.get("AWS_REGION"), endpoint_url=_endpoint_url()
            )
            _api_key = secrets.get_secret_value(SecretId=secret_arn)["SecretString"].strip()
    return _api_key


def _sts_client() -> STSClient:
    """The function role's STS client, built once per container (it refreshes every agent's session)."""
    global _sts
    if _sts is None:
        _sts = boto3.client("sts", region_name=_region(), endpoint_url=_endpoint_url())
    return _sts


def _memory_tool(agent_id: str) -> S3MemoryTool:
    """S3MemoryTool whose S3 and KMS clients run as the agent's own tagged role session."""
    region = _region()
    session = assume_agent_session(
        _setting("S3MEMORY_AGENT_ROLE_ARN"), agent_id, sts_client=_sts_client(), region_name=region
    )
    # A connection pool sized for the tool's 16 workers (boto3's default of 10 is smaller, and the tool says so).
    s3 = session.client("s3", region_name=region, endpoint_url=_endpoint_url(), config=botocore_config())
    kms = session.client("kms", region_name=region, endpoint_url=_endpoint_url())
    return S3MemoryTool(
        bucket=_setting("S3MEMORY_BUCKET"),
        agent_id=agent_id,
        keys=KmsKeys(_setting("S3MEMORY_KMS_KEY_ID"), kms_client=kms),
        s3_client=s3,
        prefix=os.environ.get("S3MEMORY_PREFIX", "agents/"),
        keystore_bucket=os.environ.get("S3MEMORY_KEYSTORE_BUCKET") or None,
        track_access=_flag(TRACK_ACCESS),
        names="encrypted" if os.environ.get("S3MEMORY_NAMES") == "encrypted" else "plain",
        mounts=parse_env(os.environ.get("S3MEMORY_MOUNTS", "")),  # shared stores, e.g. read-only guidelines
    )


def _request(event: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(what the caller sent, API Gateway's authorizer context or None)."""
    if not isinstance(event, dict):
        raise ValueError("event must be an object: an API Gateway HTTP API request, or {'agent_id', 'prompt'}")
    context = event.get("requestContext")
    if not isinstance(context, dict):  # invoked directly: the event is the request
        return event, None
    try:
        body = event.get("body") or "{}"
        sent = json.loads(base64.b64decode(body).decode("utf-8") if event.get("isBase64Encoded") else body)
    except ValueError:  # not base64, not UTF-8 or not JSON
        sent = None
    if not isinstance(sent, dict):
        raise ValueError("the request body must be a JSON object with a 'prompt'")
    authorizer = context.get("authorizer")
    return sent, authorizer if isinstance(authorizer, dict) else None


def _authorized_agent_id(authorizer: dict[str, Any] | None) -> Any:
    """The agent id an API Gateway authorizer vouches for, or None."""
    if authorizer is None:
        return None
    context = authorizer.get("lambda")
    if isinstance(context, dict) and context.get("agent_id") is not None:
        return context["agent_id"]
    jwt = authorizer.get("jwt")
    claims = jwt.get("claims") if isinstance(jwt, dict) else None
    if isinstance(claims, dict):
        return claims.get(os.environ.get(AGENT_ID_CLAIM) or "agent_id")
    return None


def _agent_and_prompt(event: Any) -> tuple[str, str]:
    """The agent id (the caller's, or the request's where that is trusted) and the prompt; checked."""
    sent, authorizer = _request(event)
    prompt, named = sent.get("prompt"), sent.get("agent_id")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("the request needs a non-empty string 'prompt'")
    agent_id = _authorized_agent_id(authorizer)
    if agent_id is not None:
        if named is not None and named != agent_id:
            raise Refused("refused: the request names another agent than the caller's; leave 'agent_id' out")
    elif _trusts_event_agent_id():
        agent_id = named
    else:
        raise Refused(
            "refused: no API Gateway authorizer vouches for an agent_id, and the one in the request is used "
            f"only with {TRUST_EVENT_AGENT_ID}=true; retrying does not help"
        )
    if not isinstance(agent_id, str):
        raise ValueError("the request needs a string 'agent_id'")
    return validate_agent_id(agent_id), prompt  # ValueError for an invalid id, before any AWS call


def _turn(agent_id: str, prompt: str) -> dict[str, Any]:
    # The tool owns a worker pool: close it at the end of every invocation, or warm containers
    # accumulate threads.
    with _memory_tool(agent_id) as tool:
        client = anthropic.Anthropic(api_key=_anthropic_api_key())
        runner = client.beta.messages.tool_runner(
            model=_model(),
            max_tokens=int(_setting("ANTHROPIC_MAX_TOKENS", "4096")),
            max_iterations=int(_setting("ANTHROPIC_MAX_ITERATIONS", "20")),
            system=SYSTEM_PROMPT,
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


def _http(status: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"statusCode": status, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}


def lambda_handler(event: Any, context: Any) -> dict[str, Any]:
    if not (isinstance(event, dict) and isinstance(event.get("requestContext"), dict)):
        return _turn(*_agent_and_prompt(event))  # invoked directly: errors are raised to the invoker
    try:
        agent_id, prompt = _agent_and_prompt(event)
    except Refused as err:
        logger.warning("%s", err)
        return _http(403, {"error": str(err)})
    except ValueError as err:
        return _http(400, {"error": str(err)})
    return _http(200, _turn(agent_id, prompt))
