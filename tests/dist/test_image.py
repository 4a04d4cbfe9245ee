"""The Dockerfile, and the filesystem its image holds, where no container runtime is present.

The Dockerfile is read for what the image must be (distroless final stage: no RUN, a non-root
user, exec-form entry point and health check). Then the build stage's step is done here: the
wheel with the `mcp` extra installed into a target folder (the image's /app), the health check
copied beside it. The image's ENTRYPOINT runs from that folder with a plain interpreter
(`python -S`, so only /app is importable), on a free port instead of 8000, and the image's
HEALTHCHECK command is run against it.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.dist.conftest import REPO, Artifacts, uv
from tests.support import LOCAL_KEY
from tests.support.moto_server import new_bucket

DOCKERFILE = (REPO / "Dockerfile").read_text(encoding="utf-8")
TOKEN = "s3memory-image-test-token-0123456789"
PYTHON = "/usr/bin/python3"


def _stages() -> list[list[str]]:
    """Each stage's instructions (continuation lines joined, comments dropped)."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE)
    stages: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("FROM "):
            stages.append([])
        if stages:
            stages[-1].append(line)
    return stages


def _exec_form(instruction: str, keyword: str) -> list[str]:
    rest = instruction.removeprefix(keyword).strip()
    assert rest.startswith("["), f"{keyword} must be in exec form (no shell in the image): {instruction}"
    form = json.loads(rest)
    assert isinstance(form, list)
    return [str(part) for part in form]


def _final() -> dict[str, str]:
    final = _stages()[-1]
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in final}


def test_the_final_stage_needs_no_shell_and_runs_as_non_root() -> None:
    build, final = _stages()
    assert build[0] == "FROM ${BUILD_IMAGE} AS build"
    assert "ARG RUNTIME_IMAGE=gcr.io/distroless/python3-debian12:nonroot" in DOCKERFILE
    assert final[0] == "FROM ${RUNTIME_IMAGE}"
    assert not [line for line in final if line.startswith(("RUN", "CMD ", "SHELL"))]
    instructions = _final()
    assert instructions["USER"] == "nonroot"
    assert instructions["ENV"].startswith("PYTHONPATH=/app ")
    entry = _exec_form(instructions["ENTRYPOINT"], "")
    assert entry[:3] == [PYTHON, "-m", "s3memory.cli"]
    assert entry[3:] == ["mcp", "--transport", "streamable-http", "--host", "0.0.0.0", "--port", "8000",
                         "--allow-remote"]  # fmt: skip
    health = instructions["HEALTHCHECK"]
    assert _exec_form(health[health.index("CMD ") + 4 :], "") == [PYTHON, "/app/s3memory_healthcheck.py"]


def test_the_build_stage_installs_the_wheel_with_the_mcp_extra() -> None:
    run = next(line for line in _stages()[0] if line.startswith("RUN "))
    assert 'pip install --no-cache-dir --disable-pip-version-check --target /app "$1[mcp]"' in run
    assert "COPY docker/healthcheck.py /app/s3memory_healthcheck.py" in _stages()[0]


@pytest.fixture(scope="session")
def image_root(artifacts: Artifacts, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the build stage leaves in /app: the wheel with `mcp`, no bin/, the health check."""
    app = tmp_path_factory.mktemp("image") / "app"
    command = [uv(), "pip", "install", "--quiet", "--python", sys.executable, "--target", str(app)]
    done = subprocess.run([*command, f"{artifacts.wheel}[mcp]"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    shutil.rmtree(app / "bin", ignore_errors=True)
    shutil.copy(REPO / "docker" / "healthcheck.py", app / "s3memory_healthcheck.py")
    return app


def _in_image(app: Path, command: list[str]) -> list[str]:
    """The image's command on this machine: its interpreter with -S, /app → the built folder."""
    assert command[0] == PYTHON
    return [sys.executable, "-S", *(str(app) + part[4:] if part.startswith("/app") else part for part in command[1:])]


def test_the_entry_point_serves_with_a_token_and_the_health_check_passes(
    image_root: Path, moto_url: str, tmp_path: Path
) -> None:
    instructions = _final()
    entry = _exec_form(instructions["ENTRYPOINT"], "")
    entry[entry.index("--port") + 1] = "0"  # a free port
    health = instructions["HEALTHCHECK"]
    health_command = _in_image(image_root, _exec_form(health[health.index("CMD ") + 4 :], ""))
    env = {"PYTHONPATH": str(image_root), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "S3MEMORY_BUCKET": new_bucket(moto_url), "S3MEMORY_ENDPOINT_URL": moto_url,
           "S3MEMORY_LOCAL_KEY": base64.b64encode(LOCAL_KEY).decode(), "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}  # fmt: skip

    refused = subprocess.run(_in_image(image_root, [*entry, "--agent", "support-agent-1"]), env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        "s3memory: error: --allow-remote needs S3MEMORY_MCP_TOKEN: every request must carry it as a bearer token\n"
    )

    env["S3MEMORY_MCP_TOKEN"] = TOKEN
    process = subprocess.Popen(_in_image(image_root, [*entry, "--agent", "support-agent-1"]), env=env, cwd=tmp_path,
                               stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.fullmatch(
            r"s3memory mcp: serving agent support-agent-1 at http://0\.0\.0\.0:(\d+)/mcp \(bearer token required\)\n",
            line,
        )
        assert found, line
        url = f"http://127.0.0.1:{found.group(1)}/mcp"
        checked = subprocess.run(health_command, env={**env, "S3MEMORY_HEALTHCHECK_URL": url}, cwd=tmp_path,
                                 capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert checked.returncode == 0, checked.stderr
        wrong_env = {**env, "S3MEMORY_HEALTHCHECK_URL": url, "S3MEMORY_MCP_TOKEN": "x" * 32}
        wrong = subprocess.run(health_command, env=wrong_env, cwd=tmp_path,
                               capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert (wrong.returncode, wrong.stderr) == (1, "healthcheck: HTTP 401\n")
        with pytest.raises(urllib.error.HTTPError) as unauthorized:
            urllib.request.urlopen(url, timeout=10)
        assert unauthorized.value.code == 401
    finally:
        process.terminate()
        _, rest = process.communicate(timeout=30)
    # SIGTERM (what a container runtime sends) is a normal stop: a `stopped` line and exit 0
    assert (process.returncode, rest.splitlines()[-1:]) == (0, ["s3memory mcp: stopped"])
