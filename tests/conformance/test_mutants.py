"""The kit tested by mutation: each deliberately wrong backend fails it, with a message naming the rule
it breaks, and the correct one it was made from passes every case."""

from __future__ import annotations

import pytest

from s3memory.conformance import CASES, RULES, run
from tests.conformance.dict_memory import DictMemory
from tests.conformance.mutants import (
    MUTANTS,
    DirectoryWithoutSlash,
    LineNumbersFromZero,
    NonAtomicRename,
    PrefixSiblingAccepted,
    RootRenameAllowed,
    SizeWithoutDecimal,
)

# The cases each mutant fails: exactly these (a mutant caught by an unrelated case would mean the
# kit's cases overlap in ways that hide which rule broke).
FAILS = {
    SizeWithoutDecimal: {"list.dir-size", "list.doc-example", "list.size-1024", "list.size-1m"},
    PrefixSiblingAccepted: {
        "paths.insert-outside", "paths.sibling-create", "paths.sibling-delete", "paths.sibling-rename",
        "paths.sibling-view",
    },
    RootRenameAllowed: {"root.rename", "root.rename-slash"},
    NonAtomicRename: {"rename.dir-onto-dir"},
}  # fmt: skip


def test_the_dict_memory_the_mutants_come_from_passes_every_case() -> None:
    results = run(DictMemory, CASES, ["concurrency"])
    assert [r.case.id for r in results if not r.passed] == []


@pytest.mark.parametrize("mutant", list(MUTANTS), ids=lambda m: m.__name__)
def test_each_mutant_fails_the_kit_naming_its_rule(mutant: type[DictMemory]) -> None:
    rule = MUTANTS[mutant]
    results = run(mutant, CASES, ["concurrency"])
    failed = [r for r in results if r.status == "fail"]
    of_the_rule = [r for r in failed if r.case.rule == rule]
    assert of_the_rule, f"{mutant.__name__} broke {rule}, yet no case of that rule failed"
    for result in of_the_rule:
        assert result.detail.startswith(f"breaks {rule} ({RULES[rule]}): "), result.detail
    if mutant in FAILS:
        assert {r.case.id for r in failed} == FAILS[mutant]


def test_the_messages_say_what_differed() -> None:
    """One failure in full: the rule, its words, the command and both answers."""
    (result,) = [r for r in run(NonAtomicRename, CASES) if r.status == "fail"]
    assert result.detail == (
        "breaks rename.atomic (a refused rename changes nothing: no file of the source is moved): then view "
        "/memories: answered \"Here're the files and directories up to 2 levels deep in /memories, excluding "
        "hidden items and node_modules:\\n4.0K\\t/memories\\n4.0K\\t/memories/a/\\n1B\\t/memories/a/2\\n4.0K\\t"
        '/memories/b/\\n1B\\t/memories/b/1\\n1B\\t/memories/b/2", expected "Here\'re the files and directories up '
        "to 2 levels deep in /memories, excluding hidden items and node_modules:\\n4.0K\\t/memories\\n4.0K\\t"
        '/memories/a/\\n1B\\t/memories/a/1\\n1B\\t/memories/a/2\\n4.0K\\t/memories/b/\\n1B\\t/memories/b/2"'
    )


@pytest.mark.parametrize(("mutant", "count"), [(DirectoryWithoutSlash, 20), (LineNumbersFromZero, 79)])
def test_the_wide_mutants_fail_everywhere_their_rule_shows(mutant: type[DictMemory], count: int) -> None:
    """A slash or a line number shows in many answers: every case that shows one fails."""
    assert sum(r.status == "fail" for r in run(mutant, CASES, ["concurrency"])) == count
