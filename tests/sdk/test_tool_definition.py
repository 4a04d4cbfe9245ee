"""The memory tool definition's optional fields: accepted by both tool classes, sent exactly as given."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import pytest

from s3memory import AsyncS3MemoryTool, LocalKeys
from tests.support import LOCAL_KEY
from tests.support.api import SCRIPT, ScriptedApi, httpx

EXAMPLE = {"command": "view", "path": "/memories"}


def test_to_dict_carries_exactly_the_fields_given(make_tool: Callable[..., Any]) -> None:
    assert make_tool().to_dict() == {"type": "memory_20250818", "name": "memory"}
    tool = make_tool(
        allowed_callers=["direct", "code_execution_20250825"],
        defer_loading=True,
        strict=False,
        input_examples=[EXAMPLE],
        cache_control={"type": "ephemeral"},
    )
    assert tool.to_dict() == {
        "type": "memory_20250818",
        "name": "memory",
        "allowed_callers": ["direct", "code_execution_20250825"],
        "defer_loading": True,
        "strict": False,
        "input_examples": [EXAMPLE],
        "cache_control": {"type": "ephemeral"},
    }
    assert make_tool(strict=True).to_dict() == {"type": "memory_20250818", "name": "memory", "strict": True}


def test_the_async_tool_takes_the_same_fields(s3: Any) -> None:
    with AsyncS3MemoryTool(
        bucket="b-unused", agent_id="a", keys=LocalKeys(LOCAL_KEY), s3_client=s3, defer_loading=False, strict=True
    ) as tool:
        assert tool.to_dict() == {"type": "memory_20250818", "name": "memory", "defer_loading": False, "strict": True}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("allowed_callers", "direct", "allowed_callers must be a list of strings, e.g. ['direct']"),
        ("strict", "yes", "strict must be True or False"),
        ("input_examples", ["view /memories"], "input_examples must be a list of dicts (memory tool inputs)"),
    ],
)
def test_malformed_fields_are_refused(make_tool: Callable[..., Any], field: str, value: Any, message: str) -> None:
    with pytest.raises(TypeError) as refused:
        make_tool(**{field: value})
    assert str(refused.value) == message


@pytest.mark.parametrize("thread", [True, False], ids=["thread", "no-thread"])
def test_the_tool_runner_sends_the_fields(make_tool: Callable[..., Any], thread: bool) -> None:
    api = ScriptedApi(SCRIPT)
    client = anthropic.Anthropic(
        api_key="test", base_url="http://127.0.0.1:9", http_client=httpx.Client(transport=httpx.MockTransport(api))
    )
    tool = make_tool(allowed_callers=["direct"], input_examples=[EXAMPLE])
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-5-5",
        max_tokens=1024,
        messages=[{"role": "user", "content": "Remember my shopping list."}],
        tools=[tool],
        **({} if thread else {"thread": False}),
    )
    list(runner)
    expected = {"type": "memory_20250818", "name": "memory", "allowed_callers": ["direct"], "input_examples": [EXAMPLE]}
    bodies = api.bodies()
    assert len(bodies) == len(SCRIPT)
    # In a thread the definition goes with the first request only; without one, with every request.
    sent = [body.get("tools") for body in bodies]
    assert sent == ([[expected]] + [None] * (len(SCRIPT) - 1) if thread else [[expected]] * len(SCRIPT))
