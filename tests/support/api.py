"""A scripted Messages API for the SDK's tool runner: answers each request with the next scripted
assistant message and records what the SDK sent. No network: the SDK's HTTP client runs over a
MockTransport."""

from __future__ import annotations

import json
from typing import Any

try:  # the SDK's HTTP library: httpx2 in anthropic 2.x, httpx before
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

from tests.support import BUCKET

__all__ = ["BETA", "SCRIPT", "ScriptedApi", "check_bucket", "check_conversation", "httpx"]


BETA = "context-management-2025-06-27"
MEMORY_TOOL_PARAM = {"type": "memory_20250818", "name": "memory"}
ROOT_VIEW = (
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
    "4.0K\t/memories"
)


def message(n: int, content: list[dict[str, Any]], stop_reason: str) -> dict[str, Any]:
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def tool_use(id_: str, **command: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": "memory", "input": command}


SCRIPT = [
    message(
        1,
        [{"type": "text", "text": "Checking memory."}, tool_use("tu_1", command="view", path="/memories")],
        "tool_use",
    ),
    message(
        2,
        [
            tool_use("tu_2", command="create", path="/memories/notes.md", file_text="Buy milk\nCall Ann\n"),
            tool_use("tu_3", command="create", path="/memories/notes.md", file_text="again"),
            tool_use("tu_4", command="view", path="/etc/passwd"),
        ],
        "tool_use",
    ),
    message(
        3,
        [tool_use("tu_5", command="str_replace", path="/memories/notes.md", old_str="milk", new_str="oat milk")],
        "tool_use",
    ),
    message(4, [tool_use("tu_6", command="view", path="/memories/notes.md")], "tool_use"),
    message(5, [{"type": "text", "text": "Saved your notes."}], "end_turn"),
]

EXPECTED_RESULTS = [
    [{"type": "tool_result", "tool_use_id": "tu_1", "content": ROOT_VIEW}],
    [
        {"type": "tool_result", "tool_use_id": "tu_2", "content": "File created successfully at: /memories/notes.md"},
        {
            "type": "tool_result",
            "tool_use_id": "tu_3",
            "content": "Error: File /memories/notes.md already exists",
            "is_error": True,
        },
        {
            "type": "tool_result",
            "tool_use_id": "tu_4",
            "content": "Error: Invalid path /etc/passwd: it must start with /memories",
            "is_error": True,
        },
    ],
    [
        {
            "type": "tool_result",
            "tool_use_id": "tu_5",
            "content": "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            "     1\tBuy oat milk\n"
            "     2\tCall Ann",
        }
    ],
    [
        {
            "type": "tool_result",
            "tool_use_id": "tu_6",
            "content": "Here's the content of /memories/notes.md with line numbers:\n"
            "     1\tBuy oat milk\n"
            "     2\tCall Ann",
        }
    ],
]


class ScriptedApi:
    """Answers each POST /v1/messages with the next scripted message; keeps every request."""

    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = list(script)
        self.requests: list[Any] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        if request.method != "POST" or request.url.path != "/v1/messages" or not self.script:
            return httpx.Response(
                400, json={"type": "error", "error": {"type": "invalid_request_error", "message": "?"}}
            )
        return httpx.Response(200, json=self.script.pop(0), headers={"request-id": f"req_{len(self.requests)}"})

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def results_sent(body: dict[str, Any]) -> list[dict[str, Any]]:
    last = body["messages"][-1]
    assert last["role"] == "user"
    return list(last["content"])


def check_conversation(api: ScriptedApi, messages: list[Any]) -> None:
    assert [m.id for m in messages] == ["msg_1", "msg_2", "msg_3", "msg_4", "msg_5"]
    assert messages[-1].content[0].text == "Saved your notes."
    bodies = api.bodies()
    assert len(bodies) == 5
    assert [r.url.path for r in api.requests] == ["/v1/messages"] * 5
    assert bodies[0]["tools"] == [MEMORY_TOOL_PARAM]
    assert bodies[0]["messages"][0] == {"role": "user", "content": "Remember my shopping list."}
    assert [results_sent(b) for b in bodies[1:]] == EXPECTED_RESULTS
    for block in [b for results in EXPECTED_RESULTS for b in results]:
        assert block.get("is_error", False) is (block["tool_use_id"] in ("tu_3", "tu_4"))
    for request in api.requests:
        assert BETA in request.headers["anthropic-beta"].split(",")


def check_bucket(s3: Any) -> None:
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]]
    assert keys == ["agents/agent-42/notes.md"]
    body = s3.get_object(Bucket=BUCKET, Key="agents/agent-42/notes.md")["Body"].read()
    assert len(body) == len("Buy oat milk\nCall Ann\n") + 16
    assert b"milk" not in body
