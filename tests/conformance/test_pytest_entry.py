"""The kit's pytest entry point, as a backend's own suite includes it: one test per case."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from s3memory.conformance.pytest_plugin import test_memory_conformance  # noqa: F401  (collected here)
from tests.conformance.dict_memory import DictMemory


@pytest.fixture
def memory_tool_factory() -> Callable[[], Any]:
    return DictMemory


@pytest.fixture
def memory_tool_claims() -> tuple[str, ...]:
    return ("concurrency",)


def test_a_backend_suite_fails_the_cases_its_backend_breaks(tmp_path: Any) -> None:
    """A suite including the entry point with a backend that accepts prefix siblings: those 5 cases
    fail with the rule named, the races are skipped (no claim), every other case passes."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "test_backend.py").write_text(
        "import pytest\n"
        "from s3memory.conformance.pytest_plugin import test_memory_conformance\n"
        "from tests.conformance.mutants import PrefixSiblingAccepted\n\n"
        "@pytest.fixture\n"
        "def memory_tool_factory():\n"
        "    return PrefixSiblingAccepted\n",
        encoding="utf-8",
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rN", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
         "-c", "/dev/null", str(tmp_path / "test_backend.py")],
        capture_output=True, text=True, cwd=root, timeout=120,
        env={**os.environ, "PYTHONPATH": str(root), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("5 failed, 192 passed, 5 skipped")
    assert done.stdout.count("breaks paths.prefix (every path is /memories or starts with /memories/") == 5
