"""`s3memory chat`: Claude with its memory on S3, through the SDK's tool runner.

The request carries the memory tool, the `context-management-2025-06-27` beta and context
editing that clears old tool results past 100,000 input tokens while keeping every memory
call (`exclude_tools: ["memory"]`). The memory protocol prompt ("ALWAYS VIEW YOUR MEMORY
DIRECTORY BEFORE DOING ANYTHING ELSE ...") is added by the API itself whenever the memory
tool is present, so the system prompt here only says what is worth remembering.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO, cast

from s3memory.core.limits import DEFAULT_MODEL

from .exits import EXIT_OK, Failed, UsageError

if TYPE_CHECKING:
    from anthropic import Anthropic
    from anthropic.types.beta import BetaContextManagementConfigParam, BetaMessageParam

    from s3memory.tool import S3MemoryTool

MAX_TOKENS = 4096
# Requests to the model in one turn (a tool-use loop that never ends costs without bound), as the
# Lambda example's `anthropic_max_iterations`.
MAX_ITERATIONS = 25
BETAS = ["context-management-2025-06-27"]
CONTEXT_MANAGEMENT: BetaContextManagementConfigParam = {
    "edits": [
        {
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": 100_000},
            "keep": {"type": "tool_uses", "value": 3},
            "exclude_tools": ["memory"],
        }
    ]
}
SYSTEM_PROMPT = (
    "You are a helpful assistant whose memory directory (/memories) persists across conversations. "
    "Record what will help in later conversations: facts about the user and their preferences, decisions, "
    "and progress on ongoing tasks. Do not store the conversation itself. Keep memory files short and "
    "organized, and update or delete what is outdated. Never store secrets such as passwords, API keys "
    "or card numbers; the memory refuses them. Do not mention the memory tool unless asked."
)
EXIT_WORDS = ("/exit", "/quit")


def resolve_model(flag: str | None) -> str:
    """`--model`, else S3MEMORY_MODEL, else ANTHROPIC_MODEL, else the default."""
    return flag or os.environ.get("S3MEMORY_MODEL") or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL


def has_api_key() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"))


def _assistant_param(block: Any) -> dict[str, Any]:
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    param: dict[str, Any] = block.to_dict()
    return param


class Chat:
    """One conversation: its history, and one tool-runner loop per user turn."""

    def __init__(
        self, client: Anthropic, tool: S3MemoryTool, model: str, out: TextIO, log: TextIO, max_tokens: int = MAX_TOKENS,
        max_iterations: int = MAX_ITERATIONS,
    ) -> None:  # fmt: skip
        self.client = client
        self.tool = tool
        self.model = model
        self.out = out
        self.log = log
        self.max_tokens = max_tokens
        self.max_iterations = max_iterations
        self.messages: list[BetaMessageParam] = []

    def turn(self, text: str) -> None:
        """Send one user message and run the memory tool until Claude answers; print its text."""
        self.messages.append({"role": "user", "content": text})
        runner = self.client.beta.messages.tool_runner(
            model=self.model,
            max_tokens=self.max_tokens,
            system=SYSTEM_PROMPT,
            messages=list(self.messages),
            tools=[self.tool],
            betas=list(BETAS),
            context_management=CONTEXT_MANAGEMENT,
            max_iterations=self.max_iterations,
        )
        requests, stop = 0, None
        for message in runner:
            requests, stop = requests + 1, message.stop_reason
            content = [_assistant_param(block) for block in message.content]
            for block in message.content:
                if block.type == "text" and block.text:
                    self.out.write(block.text.rstrip("\n") + "\n")
                elif block.type == "tool_use":
                    args = block.input if isinstance(block.input, dict) else {}
                    target = args.get("path") or args.get("old_path") or ""
                    self.log.write(f"[memory] {args.get('command', '?')} {target}".rstrip() + "\n")
            self.out.flush()
            if content:
                self.messages.append(cast("BetaMessageParam", {"role": "assistant", "content": content}))
            response = runner.generate_tool_call_response()
            if response is not None:
                self._failures(response)
                self.messages.append(response)
        if stop == "tool_use" and requests >= self.max_iterations:  # the cap, not Claude, ended the turn
            self.log.write(f"[memory] stopped after {requests} requests to the model in one turn (--max-iterations "
                           f"{self.max_iterations}); send another message to let it continue\n")  # fmt: skip

    def _failures(self, response: BetaMessageParam) -> None:
        """`[memory] failed: REASON` on stderr for each memory call that failed (the model gets the same error)."""
        blocks: Any = response.get("content")
        for block in blocks if isinstance(blocks, list) else ():
            if not (isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error")):
                continue
            result: Any = block.get("content")
            parts = [result] if isinstance(result, str) else [b for b in result or () if isinstance(b, dict)]
            texts = [p if isinstance(p, str) else str(p.get("text", "")) for p in parts]
            reason = " ".join(" ".join(texts).split()).removeprefix("Error: ")
            self.log.write(f"[memory] failed: {reason}\n")

    def interactive(self, stdin: TextIO, banner: str) -> None:
        """Read one message per line until end of input or /exit."""
        self.log.write(banner + "\n")
        while True:
            self.log.write("you> ")
            self.log.flush()
            line = stdin.readline()
            if not line:
                self.log.write("\n")
                return
            text = line.strip()
            if text in EXIT_WORDS:
                return
            if text:
                self.turn(text)


def talk(args: argparse.Namespace, tool: S3MemoryTool, agent: str, model: str, where: str) -> int:
    """`s3memory chat` once the tool is built: one turn with --prompt, else interactive."""
    import anthropic

    chat = Chat(anthropic.Anthropic(), tool, model, sys.stdout, sys.stderr, max_tokens=args.max_tokens,
                max_iterations=args.max_iterations)  # fmt: skip
    try:
        if args.prompt is not None:
            chat.turn(args.prompt)
        else:
            banner = f"chat with {model}, agent {agent!r}, memory in {where}. Type /exit or press Ctrl-D to leave."
            chat.interactive(sys.stdin, banner)
    except anthropic.AuthenticationError:
        raise UsageError("the Anthropic API rejected ANTHROPIC_API_KEY (401)") from None
    except anthropic.APIStatusError as err:
        raise Failed(f"the Anthropic API answered {err.status_code}") from None
    except anthropic.APIConnectionError:
        raise Failed("could not reach the Anthropic API") from None
    return EXIT_OK
