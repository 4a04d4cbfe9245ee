"""Start-up time to the first memory answer: `s3memory mcp` (stdio) against the SDK's tool runner.

python bench/mcp_startup.py            # median of 5 runs of each, interleaved
python bench/mcp_startup.py --runs 9

Both paths start a fresh interpreter (a subprocess) and answer the same first command, `view
/memories`, for a new agent on one moto S3 server on 127.0.0.1; the clock runs from the spawn to
the answer:

* MCP: `python -m s3memory.cli mcp --agent ...`, driven by raw JSON-RPC lines on its stdin
  (initialize, initialized, tools/call): stops when the tools/call response line arrives.
* tool runner: `anthropic` + `S3MemoryTool.from_env` + `client.beta.messages.tool_runner`, against
  a scripted Messages API (an in-process mock transport, no network) whose first reply asks for
  the view: stops when the subprocess reports that the runner sent the tool result back.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# As in bench/run.py: as a script, bench/requests.py would shadow the `requests` package moto imports.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import argparse  # noqa: E402
import base64  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

REPO = _HERE.parent
BUCKET = "s3memory-bench-startup"
_agents = itertools.count()

_RUNNER = r"""
import json, sys
import anthropic
try:
    import httpx2 as httpx
except ImportError:
    import httpx
from s3memory import S3MemoryTool
from s3memory.core.limits import DEFAULT_MODEL

def message(content, stop):
    return {"id": "msg", "type": "message", "role": "assistant", "model": DEFAULT_MODEL, "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}

ASK = message([{"type": "tool_use", "id": "tu_1", "name": "memory",
                "input": {"command": "view", "path": "/memories"}}], "tool_use")
DONE = message([{"type": "text", "text": "ok"}], "end_turn")

def api(request):
    last = json.loads(request.content)["messages"][-1]
    if isinstance(last["content"], list) and any(b.get("type") == "tool_result" for b in last["content"]):
        sys.stdout.write("answered\n")
        sys.stdout.flush()
        return httpx.Response(200, json=DONE)
    return httpx.Response(200, json=ASK)

client = anthropic.Anthropic(api_key="bench", base_url="http://127.0.0.1:9",
                             http_client=httpx.Client(transport=httpx.MockTransport(api)))
with S3MemoryTool.from_env(sys.argv[1]) as tool:
    client.beta.messages.tool_runner(model=DEFAULT_MODEL, max_tokens=64, tools=[tool],
                                     messages=[{"role": "user", "content": "hi"}]).until_done()
"""


def _env(endpoint: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "S3MEMORY_"))}
    env.update({
        "S3MEMORY_BUCKET": BUCKET, "S3MEMORY_ENDPOINT_URL": endpoint,
        "S3MEMORY_LOCAL_KEY": base64.b64encode(bytes(range(32))).decode(),
        "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true", "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1",
    })  # fmt: skip
    return env


def mcp_once(env: dict[str, str]) -> float:
    """Seconds from spawning `s3memory mcp` to the tools/call answer."""
    agent = f"bench-mcp-{next(_agents)}"
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "memory", "arguments": {"command": "view", "path": "/memories"}}},
    ]  # fmt: skip
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "s3memory.cli", "mcp", "--agent", agent],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
    process.stdin.flush()
    for raw in process.stdout:
        answer = json.loads(raw)
        if answer.get("id") == 2:
            elapsed = time.perf_counter() - started
            assert answer["result"]["isError"] is False, answer
            break
    else:
        raise RuntimeError(f"s3memory mcp exited ({process.wait()}) without answering")
    process.stdin.close()
    process.wait(timeout=30)
    return elapsed


def runner_once(env: dict[str, str]) -> float:
    """Seconds from spawning the tool-runner script to the tool result it sends back."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", _RUNNER, f"bench-runner-{next(_agents)}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    assert process.stdout is not None
    line = process.stdout.readline()
    elapsed = time.perf_counter() - started
    _, err = process.communicate(timeout=60)
    if line != "answered\n" or process.returncode != 0:
        raise RuntimeError(f"tool-runner script failed ({process.returncode}): {err[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each path (default 5)")
    args = parser.parse_args()
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto's server logs every request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        import boto3

        env = _env(endpoint)
        credentials = {
            "aws_access_key_id": env["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": env["AWS_SECRET_ACCESS_KEY"],
        }
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", **credentials).create_bucket(Bucket=BUCKET)
        timings: dict[str, list[float]] = {"mcp": [], "runner": []}
        for _ in range(args.runs):  # interleaved: a burst of load on a shared machine hits both alike
            timings["mcp"].append(mcp_once(env))
            timings["runner"].append(runner_once(env))
    finally:
        server.stop()
    for label, key in (("s3memory mcp (stdio)", "mcp"), ("SDK tool runner", "runner")):
        runs = ", ".join(f"{1000 * t:.0f}" for t in timings[key])
        median = 1000 * statistics.median(timings[key])
        print(f"{label:<22} spawn -> first answer: median {median:.0f} ms over {args.runs} runs ({runs} ms)")


if __name__ == "__main__":
    main()
