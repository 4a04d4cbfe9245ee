"""docs/conformance.md's example backend, run as written, and the report the page shows for it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


def _block(after: str, language: str) -> str:
    text = DOC.read_text(encoding="utf-8").split(after, 1)[1]
    return text.split(f"```{language}\n", 1)[1].split("\n```", 1)[0] + "\n"


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "example_memory.py").write_text(_block("## An example backend", "python"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # `--tool example_memory:DictMemory` is found in the working directory
    yield tmp_path
    sys.modules.pop("example_memory", None)
    if str(tmp_path) in sys.path:
        sys.path.remove(str(tmp_path))


def test_the_example_is_short() -> None:
    assert len(_block("## An example backend", "python").splitlines()) <= 60


def test_the_example_runs_and_its_report_is_the_one_the_page_shows(capsys: Any, example: Path) -> None:
    code, out, err = run(capsys, "conformance", "--tool", "example_memory:DictMemory")
    assert (code, err) == (1, "")  # some cases fail: exit 1
    shown = _block("`s3memory conformance --tool example_memory:DictMemory` ends with:", "")
    assert out.endswith(shown)
    assert out.splitlines()[-1] == "202 cases: 79 passed, 118 failed, 5 skipped"


def test_a_tool_that_cannot_be_loaded_is_a_usage_error(capsys: Any, example: Path) -> None:
    assert run(capsys, "conformance", "--tool", "example_memory") == (
        2, "", "s3memory: error: --tool 'example_memory': expected MODULE:FACTORY, e.g. --tool mybackend:make_tool\n"
    )  # fmt: skip
    assert run(capsys, "conformance", "--tool", "example_memory:Nope") == (
        2, "", "s3memory: error: --tool 'example_memory:Nope': example_memory has no Nope\n"
    )  # fmt: skip


def test_json_and_a_selection(capsys: Any, example: Path) -> None:
    import json

    code, out, err = run(capsys, "conformance", "--tool", "example_memory:DictMemory", "--concern", "root", "--json")
    report = json.loads(out)
    assert (code, err) == (1, "")
    assert (report["passed"], report["failed"], report["skipped"]) == (2, 9, 0)
    assert report["failed_rules"] == [
        "paths.trailing-slash",
        "root.delete",
        "root.rename",
        "root.not-a-file",
        "rename.exists",
    ]
    code, out, err = run(capsys, "conformance", "--tool", "example_memory:DictMemory", "--case", "root.empty")
    assert (code, out.splitlines()[-1], err) == (0, "1 cases: 1 passed, 0 failed, 0 skipped", "")


def test_the_list_names_every_case_once(capsys: Any) -> None:
    from s3memory.conformance import CASES

    code, out, err = run(capsys, "conformance", "--list")
    lines = out.splitlines()
    assert (code, err, len(lines)) == (0, "", len(CASES))
    assert lines[0].split() == ["paths.sibling-create", "paths", "create", "paths.prefix", "decision"]
    assert len({line.split()[0] for line in lines}) == len(CASES) == 202
