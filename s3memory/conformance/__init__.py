"""A conformance kit for every `memory_20250818` backend: the cases as data, and a runner.

The kit drives any object with a `call(input)` method (sync or async), exactly as the SDK's tool
runner does, and reads the memory back through `view`. It imports nothing from the rest of
s3memory and never `anthropic`: the expected strings are the kit's own literal data.

    from s3memory.conformance import CASES, run
    results = run(lambda: MyMemoryTool(), CASES)
"""

from __future__ import annotations

from .cases import CASES, COMMANDS, CONCERNS
from .model import DECISION, DOCS, Case, Look, Race, Result
from .report import summary, table, to_json
from .rules import RULES
from .runner import check, run

__all__ = [
    "CASES", "COMMANDS", "CONCERNS", "DECISION", "DOCS", "RULES", "Case", "Look", "Race", "Result", "check", "run",
    "summary", "table", "to_json",
]  # fmt: skip
