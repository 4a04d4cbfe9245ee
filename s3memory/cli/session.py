"""`s3memory demo` and `s3memory chat`: try the tool without configuring anything, or talk to Claude.

Only `chat` (through `cli/chat.py` and the tool classes) loads `anthropic`.
"""

from __future__ import annotations

import argparse
import sys

from s3memory.config import Settings

from .context import load_settings
from .exits import EXIT_OK, UsageError, aws_configuration


def run_demo(args: argparse.Namespace) -> int:
    from .demo import run

    run(sys.stdout)
    return EXIT_OK


def run_chat(args: argparse.Namespace) -> int:
    from .chat import has_api_key, resolve_model, talk

    if not has_api_key():
        raise UsageError("ANTHROPIC_API_KEY is not set; chat talks to Claude through the Anthropic API")
    model = resolve_model(args.model)
    if args.embedded:
        from s3memory.storage.kms import KmsKeys
        from s3memory.tool import S3MemoryTool

        from .demo import DEMO_AGENT, DEMO_BUCKET, DEMO_KEY_ALIAS, DEMO_PREFIX, embedded

        agent = args.agent or DEMO_AGENT
        with embedded() as (s3, kms):
            keys = KmsKeys(DEMO_KEY_ALIAS, kms_client=kms)
            with S3MemoryTool(bucket=DEMO_BUCKET, agent_id=agent, keys=keys, s3_client=s3, prefix=DEMO_PREFIX) as tool:
                return talk(args, tool, agent, model, "embedded moto S3 (forgotten at exit)")
    if args.agent is None:
        raise UsageError("chat needs --agent ID (or --embedded)")
    settings = load_settings(args)
    assert isinstance(settings, Settings)
    from botocore.exceptions import BotoCoreError

    from s3memory.tool import S3MemoryTool, settings_kwargs

    try:
        kwargs = settings_kwargs(settings, args.agent)
    except BotoCoreError as err:  # unknown profile, no region, ...: the message names no secret
        raise aws_configuration(err) from None
    with S3MemoryTool(agent_id=args.agent, **kwargs) as tool:
        return talk(args, tool, args.agent, model, f"s3://{settings.bucket}/{settings.prefix}{args.agent}/")
