"""The SDK's own tool runner drives S3MemoryTool end to end over a scripted Messages API.

The HTTP layer is the SDK's HTTP client with a MockTransport that answers each request with
the next scripted assistant message and records what the SDK sent, so the assertions are on
the exact `tool_result` blocks the runner built from our return values and ToolErrors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import pytest

from tests.support import assert_one_branch_key, listed_keys
from tests.support.api import (
    BETA,
    EXPECTED_RESULTS,
    SCRIPT,
    ScriptedApi,
    check_bucket,
    check_conversation,
    httpx,
)

# The model the issue names; the SDK warns that it is deprecated, which is not what is tested here.
pytestmark = pytest.mark.filterwarnings("ignore:The model 'claude-sonnet-4-5' is deprecated:DeprecationWarning")


@pytest.mark.parametrize("runner_options", [{}, {"thread": False}], ids=["default", "thread-off"])
def test_sync_tool_runner_end_to_end(
    make_tool: Callable[..., Any], s3: Any, keystore_bucket: str, runner_options: dict[str, Any]
) -> None:
    api = ScriptedApi(SCRIPT)
    client = anthropic.Anthropic(
        api_key="test", base_url="http://127.0.0.1:9", http_client=httpx.Client(transport=httpx.MockTransport(api))
    )
    # The agent's keystore (made by its first write) in a bucket of its own: the memory bucket then
    # holds exactly the files the model wrote, which check_bucket lists.
    tool = make_tool(keystore_bucket=keystore_bucket)
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-4-5",
        max_tokens=1024,
        messages=[{"role": "user", "content": "Remember my shopping list."}],
        tools=[tool],
        betas=[BETA],
        **runner_options,
    )
    messages = list(runner)
    check_conversation(api, messages)
    check_bucket(s3)
    assert_one_branch_key(listed_keys(s3, keystore_bucket), "agents/agent-42/")
    assert tool.call({"command": "view", "path": "/memories/notes.md"}) == EXPECTED_RESULTS[3][0]["content"]


def test_full_history_is_sent_back_without_threads(make_tool: Callable[..., Any]) -> None:
    """With threads off, the last request replays the whole conversation: every tool_use and its result."""
    api = ScriptedApi(SCRIPT)
    client = anthropic.Anthropic(
        api_key="test", base_url="http://127.0.0.1:9", http_client=httpx.Client(transport=httpx.MockTransport(api))
    )
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-4-5",
        max_tokens=1024,
        messages=[{"role": "user", "content": "Remember my shopping list."}],
        tools=[make_tool()],
        thread=False,
    )
    runner.until_done()
    history = api.bodies()[-1]["messages"]
    assert [m["role"] for m in history] == ["user"] + ["assistant", "user"] * 4
    assert [[b for b in m["content"] if b["type"] == "tool_use"] for m in history[1::2]] == [
        [b for b in s["content"] if b["type"] == "tool_use"] for s in SCRIPT[:4]
    ]
    assert [m["content"] for m in history[2::2]] == EXPECTED_RESULTS
