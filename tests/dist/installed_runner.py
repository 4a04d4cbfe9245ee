"""Run by an installed wheel's interpreter (tests/dist/test_wheel.py), never imported by the suite.

The SDK's tool runner drives `S3MemoryTool` against a stub Messages API on 127.0.0.1 (a real
HTTP server, so any SDK version's HTTP client is used as it is) and moto's in-process S3 (the
`demo` extra). Reads {"script": [assistant messages]} on stdin; prints {"bodies": [every
request body], "final": the last text, "module": where s3memory was imported from}.
Only the standard library and the installed distributions are imported.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import boto3
from moto import mock_aws

import s3memory
from s3memory import LocalKeys, S3MemoryTool

BUCKET = "s3memory-dist-test"
BETA = "context-management-2025-06-27"


def serve(script: list[dict[str, Any]], bodies: list[dict[str, Any]]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            bodies.append(body)
            ok = self.path.split("?")[0] == "/v1/messages" and bool(script)
            answer = json.dumps(script.pop(0) if ok else {"type": "error", "error": {"type": "x", "message": "?"}})
            self.send_response(200 if ok else 400)
            self.send_header("Content-Type", "application/json")
            self.send_header("request-id", f"req_{len(bodies)}")
            self.end_headers()
            self.wfile.write(answer.encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    script = json.load(sys.stdin)["script"]
    bodies: list[dict[str, Any]] = []
    server = serve(script, bodies)
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        tool = S3MemoryTool(bucket=BUCKET, agent_id="agent-42", keys=LocalKeys(bytes(range(32))), s3_client=s3,
                            prefix="agents/")  # fmt: skip
        client = anthropic.Anthropic(api_key="test", base_url=f"http://127.0.0.1:{server.server_port}", max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-sonnet-4-5",
            max_tokens=1024,
            messages=[{"role": "user", "content": "Remember my shopping list."}],
            tools=[tool],
            betas=[BETA],
        )
        final = runner.until_done()
        tool.close()
    server.shutdown()
    text = "".join(block.text for block in final.content if block.type == "text")
    json.dump({"bodies": bodies, "final": text, "module": s3memory.__file__}, sys.stdout)


if __name__ == "__main__":
    main()
