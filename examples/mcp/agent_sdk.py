"""A Claude Agent SDK agent whose memory is s3memory, through `s3memory mcp` (stdio).

    make dist   # until a release is on PyPI: install the wheel built here, not an index's `s3memory`
    pip install claude-agent-sdk 'dist/s3memory-0.1.0-py3-none-any.whl[mcp]'
    export S3MEMORY_BUCKET=my-memory-bucket S3MEMORY_PREFIX=agents/ S3MEMORY_KMS_KEY_ID=alias/s3memory
    python examples/mcp/agent_sdk.py support-agent-1 "What do you remember about me?"

The agent SDK starts the server as a subprocess with the S3MEMORY_* and AWS_* variables of this
process. `allowed_tools` pre-approves the memory tool, `mcp__s3memory__memory` (it runs without a
permission prompt); it does not take Claude Code's built-in tools away (docs/mcp.md says how).
"""

from __future__ import annotations

import os
import shutil
import sys

import anyio
from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, TextBlock, query


def options(agent_id: str) -> ClaudeAgentOptions:
    passed = {k: v for k, v in os.environ.items() if k.startswith(("S3MEMORY_", "AWS_"))}
    return ClaudeAgentOptions(
        mcp_servers={
            "s3memory": {
                "type": "stdio",
                "command": shutil.which("s3memory") or "s3memory",
                "args": ["mcp", "--agent", agent_id],
                "env": passed,
            }
        },
        allowed_tools=["mcp__s3memory__memory"],
    )


async def main(agent_id: str, prompt: str) -> None:
    async for message in query(prompt=prompt, options=options(agent_id)):
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextBlock):
                    print(block.text)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: agent_sdk.py AGENT_ID PROMPT")
    anyio.run(main, sys.argv[1], sys.argv[2])
