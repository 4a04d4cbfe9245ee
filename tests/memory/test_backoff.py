"""The retry budget of a conditional write that keeps losing to other writers (`writes.Backoff`):
its parameters as configured, and the waits it makes on a fake clock (no time passes)."""

from __future__ import annotations

import pytest

from s3memory.memory import writes


def test_the_budget_as_configured() -> None:
    assert (writes.EDIT_ATTEMPTS, writes.BACKOFF_BASE, writes.BACKOFF_CAP, writes.BACKOFF_FLOOR) == (40, 0.03, 0.5, 0.1)
    assert writes.BACKOFF_DEADLINE == 4.5


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """A fake clock, and jitter that always draws the largest wait its bound allows."""
    monkeypatch.setattr(writes._jitter, "uniform", lambda low, high: high)
    return Clock()


def test_waits_double_up_to_a_cap_that_shrinks_as_the_deadline_nears(clock: Clock) -> None:
    backoff = writes.Backoff(sleep=clock.sleep, clock=clock)
    while backoff():
        clock.now += 0.05  # each attempt's own requests
    expected, spent = [], 0.0
    for n in range(len(clock.slept)):
        expected.append(min(0.5 - 0.4 * spent / 4.5, 0.03 * 2**n))  # base x 2^n, under the shrinking cap
        spent += expected[-1] + 0.05
    assert clock.slept == pytest.approx(expected)
    assert [round(w, 2) for w in clock.slept[:6]] == [0.03, 0.06, 0.12, 0.24, 0.44, 0.4]
    assert round(clock.slept[-1], 2) == 0.11  # near the deadline, waits are short: an old writer is not starved
    assert len(clock.slept) == backoff.attempt == 17
    spent = clock.now - 1000.0  # the next wait, refused, would have ended past the deadline
    assert sum(clock.slept) + 0.05 * (len(clock.slept) - 1) <= 4.5 < spent + (0.5 - 0.4 * spent / 4.5)


def test_a_wait_that_would_end_past_the_deadline_is_not_made(clock: Clock) -> None:
    backoff = writes.Backoff(sleep=clock.sleep, clock=clock)
    clock.now += 4.46
    assert backoff() is True  # 4.46 + 0.03 <= 4.5
    assert clock.slept == [0.03]
    assert backoff() is False  # 4.49 + 0.06 > 4.5: refused at once, nothing slept
    assert clock.slept == [0.03]
    assert backoff.attempt == 1
