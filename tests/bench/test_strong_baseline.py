"""The strong baseline (`bench/strong.py`) answers exactly as s3memory on the session trace, and
its request counts are pinned (counts, never timings: `bench/versus.py` measures the time)."""

from __future__ import annotations

import pytest

from bench import versus

pytestmark = [pytest.mark.slow, pytest.mark.moto_only]


def test_strong_and_competent_answer_as_s3memory_with_pinned_counts() -> None:
    result = versus.run(reps=1, commands=60)
    rows = result["backends"]
    assert {name: row["identical"] for name, row in rows.items()} == {"s3memory": 60, "strong": 60, "competent": 60}
    assert {name: (row["s3"], row["kms"]) for name, row in rows.items()} == {
        "s3memory": ([108], [1]),  # 11 edits and 2 deletes find the file held (memory.recent); a rename reads first
        "strong": ([132], [2]),
        "competent": ([137], [2]),
    }
