"""How the command line starts and speaks: `python -m s3memory`, a bare `s3memory`, `--version`,
the global `--log-level`, and errors that stay one line whatever the engine logs."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from typing import Any

import pytest

from s3memory.cli import build_parser, logs
from s3memory.core.version import __version__
from tests.support import ok
from tests.support.cli import LOCAL, ROOT, run, subprocess_env


def _cli(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "s3memory", *argv], capture_output=True, text=True,
                          env=env or subprocess_env(), cwd=ROOT, timeout=60)  # fmt: skip


def test_python_dash_m_s3memory_runs_the_cli() -> None:
    proc = _cli("--version")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"s3memory {__version__}\n", "")
    proc = _cli()  # a bare command: the help on stderr, a usage error
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("usage: s3memory [-h] [--version] [--log-level LEVEL] COMMAND ...\n")
    assert "\nexit codes: 0 ok, 1 operation failed, 2 usage or configuration error\n" in proc.stderr


@pytest.mark.parametrize(
    ("argv", "level"),
    [
        (["ls", "--agent", "ann"], "WARNING"),
        (["--log-level", "info", "ls", "--agent", "ann"], "INFO"),
        (["ls", "--agent", "ann", "--log-level", "DEBUG"], "DEBUG"),
        (["--log-level", "INFO", "ls", "--log-level", "error", "--agent", "ann"], "ERROR"),  # the later one wins
        (["--log-level", "ERROR", "mcp", "--agent", "ann"], "ERROR"),
    ],
)
def test_log_level_goes_before_or_after_the_command(argv: list[str], level: str) -> None:
    assert build_parser().parse_args(argv).log_level == level


def test_an_unknown_log_level_is_one_usage_line(capsys: Any) -> None:
    assert run(capsys, "ls", "--agent", "ann", "--log-level", "loud") == (
        2, "", "s3memory: error: argument --log-level: choose from ERROR, WARNING, INFO, DEBUG\n"
    )  # fmt: skip


def test_each_record_is_one_line_and_the_handler_goes_when_the_command_ends(capsys: Any) -> None:
    log = logging.getLogger("s3memory")
    before = (list(log.handlers), log.level)
    with logs.to_stderr("WARNING", failures=False):
        log.warning("s3memory: the store does not implement %s;\nfalling back", "X")
        log.info("s3memory command view ok")  # below the level
        log.warning("s3memory: GetObject denied (AccessDenied)", extra={"s3memory_failure": True})  # the error line's
    with logs.to_stderr("INFO", failures=True):  # `mcp`: no error line follows, so its records stay
        log.info("s3memory command view outcome=ok")
        log.warning("s3memory: GetObject denied (AccessDenied)", extra={"s3memory_failure": True})
    assert (list(log.handlers), log.level) == before
    log.warning("s3memory: after the command")  # no handler of ours any more
    assert capsys.readouterr().err == (
        "s3memory: warning: the store does not implement X; falling back\n"
        "s3memory: info: command view outcome=ok\n"
        "s3memory: warning: GetObject denied (AccessDenied)\n"
    )


def test_info_shows_one_record_per_memory_command(capsys: Any, env: Any, make_tool: Any) -> None:
    tool = make_tool("ann")  # an agent with nothing stored is refused (a typo creates no agent)
    ok(tool, command="create", path="/memories/a.md", file_text="a\n")
    view = ok(tool, command="view", path="/memories")
    assert run(capsys, "ls", "--agent", "ann")[2] == ""
    code, out, err = run(capsys, "--log-level", "INFO", "ls", "--agent", "ann")
    assert (code, out) == (0, view + "\n")
    record = r"command command=view outcome=ok duration_ms=\S+ s3_requests=\d+ kms_requests=0 retries=0 agent_id=ann"
    assert re.fullmatch(rf"s3memory: info: {record}\n", err), err


def test_an_error_the_engine_logs_is_still_one_line_as_a_subprocess() -> None:
    """Without a handler of the CLI's, Python printed the engine's warning and then the error line."""
    env = subprocess_env() | {
        "S3MEMORY_BUCKET": "s3memory-nowhere", "S3MEMORY_LOCAL_KEY": LOCAL, "S3MEMORY_MAX_ATTEMPTS": "1",
        "S3MEMORY_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x",
        "AWS_DEFAULT_REGION": "us-east-1",
    }  # fmt: skip
    proc = _cli("ls", "--agent", "ann", env=env)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        "s3memory: error: Memory storage is unavailable right now (EndpointConnectionError); "
        "nothing was changed. Try again. (endpoint http://127.0.0.1:1: check that it is up, or "
        "S3MEMORY_ENDPOINT_URL / --endpoint-url)\n"
    )
