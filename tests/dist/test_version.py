"""One version: the package's `__version__`, `s3memory --version` and CHANGELOG's newest release.

(The artifacts' names and metadata are checked against it in test_wheel.py.)
"""

from __future__ import annotations

import re

import pytest

import s3memory
from s3memory.cli import main
from tests.dist.conftest import REPO, lower_bounds, tomllib


def test_the_version_is_defined_once_in_the_package() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "s3memory.core.version.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", s3memory.__version__)


def test_the_cli_prints_the_packages_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"s3memory {s3memory.__version__}\n"


def test_changelogs_newest_release_is_the_packages_version() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", changelog, re.M)
    assert releases, "CHANGELOG.md has no release heading `## [X.Y.Z] - YYYY-MM-DD`"
    assert releases[0] == s3memory.__version__


def test_every_dependency_declares_a_lower_bound() -> None:
    bounds = lower_bounds()
    expected = {"anthropic", "boto3", "cryptography", "pydantic", "pydantic-settings", "mcp", "opentelemetry-api"}
    assert expected | {"moto"} == set(bounds)
    assert bounds["anthropic"] == "0.84"  # ToolError first appears in anthropic.lib.tools in 0.84
