"""Start-up time to the first answer of `s3memory ls`, with the import breakdown.

python bench/ls_startup.py             # median of 5 runs
python bench/ls_startup.py --runs 9

A fresh `s3memory ls --agent ...` process per run lists a one-file agent on moto's server
(127.0.0.1); the clock runs from the spawn to the process's exit with its answer. Then one run
under `python -X importtime` gives the top-level imports by cumulative time. The goal (issue 26):
at most 0.8 s on an idle 2-core machine. `bench/mcp_startup.py` measures `s3memory mcp`.
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from s3memory import LocalKeys, S3MemoryTool  # noqa: E402
from tests.support import LOCAL_KEY  # noqa: E402
from tests.support.moto_server import CREDENTIALS, running_moto_server, s3_client  # noqa: E402

BUCKET = "ls-startup"
GOAL_MS = 800


def _environment(url: str) -> dict[str, str]:
    return dict(
        os.environ, S3MEMORY_BUCKET=BUCKET, S3MEMORY_PREFIX="agents/", S3MEMORY_ENDPOINT_URL=url,
        S3MEMORY_LOCAL_KEY=base64.b64encode(LOCAL_KEY).decode(), AWS_DEFAULT_REGION="us-east-1",
        AWS_ACCESS_KEY_ID=CREDENTIALS["aws_access_key_id"], AWS_SECRET_ACCESS_KEY=CREDENTIALS["aws_secret_access_key"],
    )  # fmt: skip


def imports(command: list[str], env: dict[str, str], top: int = 8) -> list[tuple[str, float]]:
    """The top-level modules `command` imports, by cumulative import time (ms), largest first."""
    done = subprocess.run([sys.executable, "-X", "importtime", *command], env=env, capture_output=True, text=True)
    rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")]
    found = [(r[2].strip(), int(r[1]) / 1000) for r in rows[1:] if "." not in r[2].strip()]
    return sorted(found, key=lambda row: -row[1])[:top]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs (default 5)")
    args = parser.parse_args(argv)
    ls = [str(Path(sys.executable).with_name("s3memory")), "ls", "--agent", "startup"]
    with running_moto_server() as url:
        s3 = s3_client(url)
        s3.create_bucket(Bucket=BUCKET)
        with S3MemoryTool(
            bucket=BUCKET, agent_id="startup", keys=LocalKeys(LOCAL_KEY), s3_client=s3, prefix="agents/"
        ) as tool:
            tool.call({"command": "create", "path": "/memories/notes.md", "file_text": "hello\n"})
        env = _environment(url)
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            done = subprocess.run(ls, env=env, capture_output=True, text=True)
            times.append(1000 * (time.perf_counter() - started))
            if done.returncode != 0:
                raise SystemExit(f"s3memory ls failed: {done.stderr.strip()}")
        breakdown = imports(["-m", "s3memory", *ls[1:]], env)
    median = statistics.median(times)
    print(f"s3memory ls   spawn -> answer: median {median:.0f} ms over {args.runs} runs "
          f"({', '.join(f'{t:.0f}' for t in times)} ms); goal <= {GOAL_MS} ms")  # fmt: skip
    print("top-level imports (cumulative ms): " + ", ".join(f"{name} {ms:.0f}" for name, ms in breakdown))
    return 0 if median <= GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
