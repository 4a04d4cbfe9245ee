"""`s3memory chat` against a stub Messages API on 127.0.0.1 (scripted tool_use turns), never the live API."""

from __future__ import annotations

import io
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.support import BUCKET, ok
from tests.support.cli import run

CONTEXT_MANAGEMENT = {
    "edits": [
        {
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": 100000},
            "keep": {"type": "tool_uses", "value": 3},
            "exclude_tools": ["memory"],
        }
    ]
}


def tool_use(n: int, **command: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{n}", "name": "memory", "input": command}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


class StubAPI:
    """Answers POST /v1/messages with the next scripted reply and records every request."""

    def __init__(self) -> None:
        self.replies: list[tuple[int, dict[str, Any]]] = []
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                stub.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                status, reply = stub.replies.pop(0)
                if status == 200:
                    reply = {
                        "id": f"msg_{len(stub.requests)}", "type": "message", "role": "assistant",
                        "model": body["model"], "stop_sequence": None,
                        "usage": {"input_tokens": 12, "output_tokens": 7}, **reply,
                    }  # fmt: skip
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def turn(self, *content: dict[str, Any]) -> None:
        stop = "tool_use" if any(block["type"] == "tool_use" for block in content) else "end_turn"
        self.replies.append((200, {"content": list(content), "stop_reason": stop}))


@pytest.fixture
def api(monkeypatch) -> Iterator[StubAPI]:
    stub = StubAPI()
    thread = threading.Thread(target=stub.server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    for name in ("ANTHROPIC_MODEL", "S3MEMORY_MODEL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    yield stub
    stub.server.shutdown()
    stub.server.server_close()


def test_chat_without_an_api_key_is_a_config_error(capsys, monkeypatch, env):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    code, out, err = run(capsys, "chat", "--agent", "ann", "--prompt", "hi")
    assert (code, out) == (2, "")
    assert err == "s3memory: error: ANTHROPIC_API_KEY is not set; chat talks to Claude through the Anthropic API\n"


def test_one_shot_prompt_runs_the_memory_tool_on_s3(capsys, api, env, make_tool):
    api.turn(text("Let me check my memory."), tool_use(1, command="view", path="/memories"))
    api.turn(tool_use(2, command="create", path="/memories/user.md", file_text="name: Ann\n"))
    api.turn(text("Nice to meet you, Ann. I'll remember your name."))
    code, out, err = run(capsys, "chat", "--agent", "ann", "--prompt", "Hi, I'm Ann")
    assert code == 0
    assert out == "Let me check my memory.\nNice to meet you, Ann. I'll remember your name.\n"
    assert err == "[memory] view /memories\n[memory] create /memories/user.md\n"

    assert len(api.requests) == 3
    headers, first = api.requests[0]
    assert "context-management-2025-06-27" in headers["anthropic-beta"].split(",")
    key = "sk-ant-test-not-a-real-key"  # sent as x-api-key or as a bearer token, by SDK version
    assert headers.get("x-api-key") == key or headers.get("authorization") == f"Bearer {key}"
    assert first["model"] == "claude-sonnet-5-5"
    assert first["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    assert first["context_management"] == CONTEXT_MANAGEMENT
    assert first["system"].startswith("You are a helpful assistant whose memory directory (/memories) persists")
    assert first["messages"] == [{"role": "user", "content": "Hi, I'm Ann"}]
    results = [block for _, body in api.requests[1:] for m in body["messages"] for block in m["content"]
               if isinstance(block, dict) and block.get("type") == "tool_result"]  # fmt: skip
    assert [r["tool_use_id"] for r in results] == ["toolu_1", "toolu_2"]
    assert results[0]["content"] == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories"
    )
    assert results[1]["content"] == "File created successfully at: /memories/user.md"
    # The file is in S3, encrypted, and reads back through the tool.
    assert ok(make_tool("ann"), command="view", path="/memories/user.md") == (
        "Here's the content of /memories/user.md with line numbers:\n     1\tname: Ann"
    )


def test_tool_errors_reach_the_model_as_error_results(capsys, api, env):
    api.turn(tool_use(1, command="view", path="/memories/../secrets"))
    api.turn(text("That path is not allowed."))
    code, out, err = run(capsys, "chat", "--agent", "ann", "--prompt", "look around", "--model", "claude-opus-5-5")
    assert (code, out) == (0, "That path is not allowed.\n")
    assert err == (  # the call, then why it failed: what the model was told
        "[memory] view /memories/../secrets\n[memory] failed: Invalid path /memories/../secrets: it contains '..'\n"
    )
    assert api.requests[0][1]["model"] == "claude-opus-5-5"
    results = [b for m in api.requests[1][1]["messages"] for b in m["content"] if isinstance(b, dict)]
    error = next(b for b in results if b.get("type") == "tool_result")
    assert error["is_error"] is True
    assert error["content"] == "Error: Invalid path /memories/../secrets: it contains '..'"


def test_interactive_session_keeps_the_conversation(capsys, api, env, monkeypatch):
    monkeypatch.setenv("S3MEMORY_MODEL", "claude-haiku-4-5")
    api.turn(tool_use(1, command="create", path="/memories/likes.md", file_text="tea\n"))
    api.turn(text("Noted: you like tea."))
    api.turn(tool_use(2, command="view", path="/memories/likes.md"))
    api.turn(text("You like tea."))
    monkeypatch.setattr(sys, "stdin", io.StringIO("I like tea\n\nWhat do I like?\n"))
    code, out, err = run(capsys, "chat", "--agent", "ann")
    assert code == 0
    assert out == "Noted: you like tea.\nYou like tea.\n"
    assert err.startswith(f"chat with claude-haiku-4-5, agent 'ann', memory in s3://{BUCKET}/agents/ann/.")
    assert err.count("you> ") == 4  # two messages, one empty line, then end of input
    assert len(api.requests) == 4
    second_turn = api.requests[2][1]
    assert second_turn["model"] == "claude-haiku-4-5"
    roles = [m["role"] for m in second_turn["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]  # the first turn, then the new question
    assert second_turn["messages"][-1] == {"role": "user", "content": "What do I like?"}
    view = next(b for b in api.requests[3][1]["messages"][-1]["content"] if b.get("type") == "tool_result")
    assert view["content"] == "Here's the content of /memories/likes.md with line numbers:\n     1\ttea"


def test_embedded_chat_needs_no_configuration(capsys, api):
    api.turn(tool_use(1, command="view", path="/memories"))
    api.turn(text("Empty so far."))
    code, out, err = run(capsys, "chat", "--embedded", "--prompt", "what do you know?")
    assert (code, out) == (0, "Empty so far.\n")
    assert err == "[memory] view /memories\n"


def test_an_api_error_is_one_line_exit_1(capsys, api, env):
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    api.replies.append((400, error))
    code, out, err = run(capsys, "chat", "--agent", "ann", "--prompt", "hi")
    assert (code, out) == (1, "")
    assert err == "s3memory: error: the Anthropic API answered 400\n"


def test_a_model_that_never_stops_calling_the_tool_is_capped(capsys, api, env):
    """Old code: no cap; a stub that always answered tool_use drew 10,160 requests (issue 34, item 13)."""
    for n in range(1, 6):
        api.turn(tool_use(n, command="view", path="/memories"))
    code, out, err = run(capsys, "chat", "--agent", "ann", "--prompt", "hi", "--max-iterations", "3")
    assert (code, out) == (0, "")
    assert len(api.requests) == 3
    assert err.splitlines()[-1] == (
        "[memory] stopped after 3 requests to the model in one turn (--max-iterations 3); "
        "send another message to let it continue"
    )
