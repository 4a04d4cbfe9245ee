"""What a new user meets first (issue 34, items 3-7): a missing extra, missing settings, typos, an
endpoint that is down or a region not set, an interrupted import. Each says what to do."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from s3memory import ConfigurationError, S3MemoryTool
from s3memory.cli import progress as progress_module
from s3memory.cli.exits import aws_configuration, endpoint_hint
from s3memory.errors import StorageUnavailable
from tests.support import BUCKET, ok
from tests.support.cli import run

NEEDS_MOTO = (
    "s3memory: error: the embedded S3 + KMS (s3memory demo, chat --embedded) needs moto: pip install 's3memory[demo]'\n"
)


def test_demo_without_the_demo_extra_names_it(capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Old code: "unexpected ModuleNotFoundError; nothing more is shown"."""
    monkeypatch.setitem(sys.modules, "moto", None)  # `import moto` raises ImportError, as without the extra
    assert run(capsys, "demo") == (2, "", NEEDS_MOTO)


def test_chat_embedded_without_the_demo_extra_names_it(capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "moto", None)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    assert run(capsys, "chat", "--embedded", "--prompt", "hi") == (2, "", NEEDS_MOTO)


def test_from_env_without_a_bucket_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Old code: pydantic's ValidationError (`Settings / bucket / Field required`)."""
    monkeypatch.delenv("S3MEMORY_BUCKET", raising=False)
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", "AAAA")  # checked once the bucket is there
    with pytest.raises(ConfigurationError) as raised:
        S3MemoryTool.from_env("agent-42")
    assert str(raised.value) == "configuration: S3MEMORY_BUCKET is required"
    assert isinstance(raised.value, ValueError)


def test_a_mistyped_option_is_named_with_the_one_meant(capsys: Any) -> None:
    """Old code: "one of the arguments --agent --store is required"."""
    assert run(capsys, "ls", "--agnet", "x") == (
        2,
        "",
        "s3memory: error: unrecognized arguments: --agnet; did you mean --agent?\n",
    )


def test_a_mistyped_command_gets_a_did_you_mean(capsys: Any) -> None:
    code, _, error = run(capsys, "lst")
    assert code == 2
    assert error.startswith("s3memory: error: argument COMMAND: invalid choice: 'lst' (choose from ")
    assert error.endswith("); did you mean ls?\n")


def test_a_mistyped_agent_id_gets_the_closest_stored_one(capsys: Any, env: Any, make_tool: Any) -> None:
    ok(make_tool("support-agent-1"), command="create", path="/memories/a.md", file_text="a\n")
    code, _, error = run(capsys, "ls", "--agent", "support-agnet-1")
    assert (code, error) == (
        1,
        f"s3memory: error: agent support-agnet-1 has no objects under s3://{BUCKET}/agents/support-agnet-1/ "
        "(prefix 'agents/'); check --agent and --prefix; did you mean --agent support-agent-1?\n",
    )


def test_an_unreachable_endpoint_is_named() -> None:
    down = StorageUnavailable("EndpointConnectionError", "ListObjectsV2")
    assert endpoint_hint(down, "http://127.0.0.1:4566") == (
        " (endpoint http://127.0.0.1:4566: check that it is up, or S3MEMORY_ENDPOINT_URL / --endpoint-url)"
    )
    assert endpoint_hint(down, None) == (
        " (AWS's endpoint for S3MEMORY_REGION / --region: check the network and the region)"
    )
    assert endpoint_hint(StorageUnavailable("SlowDown", "PutObject"), "http://127.0.0.1:4566") == ""


def test_no_region_names_the_variable_and_flag() -> None:
    """Old code: botocore's "You must specify a region." alone."""
    from botocore.exceptions import NoRegionError

    assert str(aws_configuration(NoRegionError())) == (
        "AWS configuration: no AWS region is set; set S3MEMORY_REGION (--region) or AWS_REGION"
    )


def test_an_interrupted_import_says_how_far_it_got_and_that_a_rerun_resumes(
    capsys: Any, env: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Old code: "interrupted" and nothing else, though files were written."""
    for i in range(5):
        (tmp_path / f"f{i}.md").write_text(f"{i}\n")
    advance = progress_module.Progress.advance

    def ctrl_c_at_the_third(self: Any, nbytes: int = 0) -> None:
        advance(self, nbytes)
        if self.done == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(progress_module.Progress, "advance", ctrl_c_at_the_third)
    code, _, error = run(capsys, "import", "--agent", "ann", str(tmp_path), "-q")
    assert (code, error) == (
        130,
        "s3memory: error: interrupted after 3 of 5 files (written, or skipped as already there; a write under "
        "way may still have landed); run the same import again to finish: files already imported are skipped\n",
    )


def test_cat_json_gives_the_view(capsys: Any, env: Any, make_tool: Any) -> None:
    """Old code: `--json` was refused by cat alone (issue 34, item 17)."""
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="one\ntwo\n")
    code, out, _ = run(capsys, "cat", "--agent", "ann", "/memories/a.md", "--json")
    assert code == 0
    assert json.loads(out) == {
        "type": "file",
        "path": "/memories/a.md",
        "view": "Here's the content of /memories/a.md with line numbers:\n     1\tone\n     2\ttwo",
    }


def test_log_level_debug_shows_each_request_and_info_does_not(capsys: Any, env: Any, make_tool: Any) -> None:
    """Old code: DEBUG printed what INFO printed (issue 34, item 17)."""
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a\n")
    _, _, info = run(capsys, "--log-level", "INFO", "ls", "--agent", "ann")
    _, _, debug = run(capsys, "--log-level", "DEBUG", "ls", "--agent", "ann")
    assert [line for line in info.splitlines() if ": debug: " in line] == []
    requests = [line for line in debug.splitlines() if line.startswith("s3memory: debug: request ")]
    assert "s3memory: debug: request s3 ListObjectsV2" in requests
    assert all("ann" not in line and "a.md" not in line for line in requests)  # no key or name
