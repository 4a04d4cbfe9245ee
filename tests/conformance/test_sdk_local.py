"""The kit against the anthropic SDK's own local tool (sync and async), in a temp dir.

The SDK's `BetaLocalFilesystemMemoryTool` differs from the documentation in many places
(docs/conformance.md lists them): the kit must report each as a failure naming its rule. The exact
set of cases it passes is pinned, so this test fails when the SDK (or the kit) changes either way.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools._beta_builtin_memory_tool import (
    BetaAsyncLocalFilesystemMemoryTool,
    BetaLocalFilesystemMemoryTool,
)

from s3memory.conformance import CASES, RULES, run

# The 27 cases the SDK's local tool (anthropic 2.14) answers as the documentation does.
PASSING = {
    "create.parents", "delete.hidden", "delete.subdir", "file.missing", "file.no-final-newline", "file.range-last",
    "file.range-middle", "file.range-one", "file.width-10", "insert.success-text", "list.below-a-file",
    "list.missing", "list.prefix-not-dir", "long.1000000", "long.tail", "names.accented", "names.spaces",
    "rename.dir-deep", "rename.dir-extended-name", "replace.multi-line-twice", "replace.no-final-newline",
    "replace.not-found-case", "replace.same-line", "text.crlf-range", "text.line-separator", "text.lone-cr",
    "text.tabs-spaces",
}  # fmt: skip
RACES = {case.id for case in CASES if case.needs}  # the SDK's tool claims no concurrency


@pytest.mark.parametrize("tool_class", [BetaLocalFilesystemMemoryTool, BetaAsyncLocalFilesystemMemoryTool])
def test_the_sdk_local_tool_fails_exactly_where_it_differs_from_the_docs(tmp_path: Path, tool_class: Any) -> None:
    dirs = itertools.count()
    factory: Callable[[], Any] = lambda: tool_class(str(tmp_path / str(next(dirs))))  # noqa: E731
    results = run(factory, CASES)
    assert {r.case.id for r in results if r.status == "pass"} == PASSING
    assert {r.case.id for r in results if r.status == "skip"} == RACES
    failed = [r for r in results if r.status == "fail"]
    assert len(failed) == len(CASES) - len(PASSING) - len(RACES) == 170
    for result in failed:  # each failure names its rule and says it in words
        assert result.detail.startswith(f"breaks {result.case.rule} ({RULES[result.case.rule]}): "), result.detail
    by_id = {r.case.id: r.detail for r in failed}
    assert by_id["paths.sibling-create"].endswith(
        "is_error False, expected True; answered 'File created successfully at: /memories_backup/x.md', "
        "expected 'Error: Invalid path /memories_backup/x.md: it must start with /memories'"
    )
    assert by_id["root.delete"].endswith(
        "answered 'Cannot delete the /memories directory itself', "
        "expected 'Error: Cannot delete the /memories directory itself'"
    )
    assert "(not a ToolError) NotADirectoryError(20, 'Not a directory')" in by_id["rename.below-file"]
