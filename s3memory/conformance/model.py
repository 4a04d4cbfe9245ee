"""What a conformance case is: inputs, the exact answer expected, and the state read back afterwards.

Every expected string is literal data in the case modules (`s3memory.conformance.cases`), written
from the memory tool's documentation and, where the documentation is silent, from the decisions in
docs/contract.md; nothing here is computed by s3memory's own code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Input = dict[str, Any]

# How a case's answer is compared: the whole string, or a literal beginning (where the documentation
# fixes the form of a message but leaves its last words to the backend, e.g. the reason a path is refused).
EXACT = "exact"
PREFIX = "prefix"

# Where an expected string comes from.
DOCS = "docs"  # the public documentation of the memory tool: its command table and examples
DECISION = "decision"  # where the documentation is silent: docs/contract.md's decision

NOT_FOUND_VIEW = "The path {path} does not exist. Please provide a valid path."


@dataclass(frozen=True)
class Look:
    """A `view` of `path` after the case ran, and its exact answer (`is_error` for a missing path)."""

    path: str
    answer: str
    is_error: bool = False
    view_range: tuple[int, int] | None = None

    def input(self) -> Input:
        command: Input = {"command": "view", "path": self.path}
        if self.view_range is not None:
            command["view_range"] = list(self.view_range)
        return command


def seen(path: str, answer: str, view_range: tuple[int, int] | None = None) -> Look:
    return Look(path, answer, False, view_range)


def gone(path: str) -> Look:
    """`path` must not exist any more (or never have existed)."""
    return Look(path, NOT_FOUND_VIEW.format(path=path), True)


@dataclass(frozen=True)
class Case:
    """One command on a fresh, empty memory (after `given`), its exact answer, and the state after it.

    `rule` names the rule of `RULES` the case checks; a failure message names it. `sdk` says how the
    Python SDK's `BetaLocalFilesystemMemoryTool` answers instead, when it differs (blank: it agrees).
    """

    id: str
    command: str  # the command under test: view, create, str_replace, insert, delete, rename
    concern: str  # one of CONCERNS
    rule: str
    reason: str
    call: Input
    answer: str
    is_error: bool = False
    given: tuple[Input, ...] = ()
    after: tuple[Look, ...] = ()
    match: str = EXACT
    source: str = DOCS
    sdk: str = ""
    needs: str = ""  # a claim the backend must make for the case to run ("concurrency"), else skipped


@dataclass(frozen=True)
class Race:
    """Several calls started together (a barrier in front of each) on one memory.

    `outcomes` are the multisets of (answer, is_error) the calls may give, in any order (one of them:
    which call wins is not fixed); each `after` entry is a path and the answers its `view` may give.
    """

    id: str
    command: str
    concern: str
    rule: str
    reason: str
    calls: tuple[Input, ...]
    outcomes: tuple[tuple[tuple[str, bool], ...], ...]
    given: tuple[Input, ...] = ()
    after: tuple[tuple[str, tuple[str, ...]], ...] = ()
    source: str = DOCS
    sdk: str = ""
    needs: str = "concurrency"


AnyCase = Case | Race


@dataclass
class Result:
    """What one case did: passed, failed (with the rule and what differed) or skipped."""

    case: AnyCase
    status: str  # "pass", "fail", "skip"
    detail: str = ""
    calls: int = 0
    answers: list[tuple[str, bool]] = field(default_factory=list)
    got: str = ""  # the whole answer that differed (the detail shows it cut at 300 characters)

    @property
    def passed(self) -> bool:
        return self.status == "pass"
