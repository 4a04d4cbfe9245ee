"""Ambiguous outcomes: a request storage applied whose answer never arrived.

`Outage` hooks a boto3 S3 client: on in-process moto (`mock_aws`) its `before-send` handler is
moto's, which applies the request; against an endpoint (`S3MEMORY_TEST_ENDPOINT`) the hook sends
the signed request itself, then drops its answer, so the same tests run on MiniStack:

- `lose(operation, number)`: the `number`-th call of `operation` (counted from the hook) reaches
  storage on its first attempt, then its connection drops; with `then="fail"` every retry of that
  call drops before it reaches storage, so botocore's retries run out (a final
  `ConnectionClosedError`); with `then="retry"` the retries reach storage (a conditional one meets
  the object the first attempt wrote). `applied=False`: the first attempt never reaches storage.
- `down(*operations)`: once a lost answer happened, every attempt of these operations drops before
  reaching storage (a read-back that cannot be made); `heal()` ends every fault.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import urllib3
from botocore.exceptions import ConnectionClosedError
from botocore.retries.standard import ExponentialBackoff

from tests.support.endpoint import ON_MOTO


class Outage:
    def __init__(self, client: Any) -> None:
        self.calls: Counter[str] = Counter()
        self.sent: Counter[str] = Counter()  # attempts that reached storage
        self.dropped: Counter[str] = Counter()  # attempts dropped before storage
        self.lost = 0
        self._target: tuple[str, int] | None = None
        self._then = "fail"
        self._applied = True
        self._down: set[str] = set()
        client.meta.events.register("before-call.s3.*", self._call)
        client.meta.events.register_first("before-send.s3.*", self._before)  # runs before moto's handler
        client.meta.events.register("before-send", self._after)  # moto's event: runs after it applied the request

    def lose(self, operation: str, number: int = 1, *, then: str = "fail", applied: bool = True) -> Outage:
        self._target, self._then, self._applied = (operation, number), then, applied
        return self

    def down(self, *operations: str) -> Outage:
        self._down.update(operations)
        return self

    def heal(self) -> None:
        """Storage answers again: nothing more is lost or dropped."""
        self._target, self._down = None, set()

    def _call(self, model: Any, **_: Any) -> None:
        self.calls[model.name] += 1

    def _is_target(self, operation: str) -> bool:
        return self._target == (operation, self.calls[operation])

    def _before(self, request: Any, event_name: str, **_: Any) -> None:
        operation = event_name.rsplit(".", 1)[-1]
        target = self._is_target(operation)
        if (target and (self.lost or not self._applied) and self._then == "fail") or (
            self.lost and operation in self._down
        ):
            if target and not self._applied:
                self.lost += 1
            self.dropped[operation] += 1
            raise ConnectionClosedError(endpoint_url=request.url)
        self.sent[operation] += 1

    def _after(self, request: Any, event_name: str, **_: Any) -> None:
        operation = event_name.rsplit(".", 1)[-1]
        if self._is_target(operation) and self._applied and not self.lost:
            if not ON_MOTO:  # nothing has sent it yet: it reaches storage, its answer is dropped
                _deliver(request)
            self.lost += 1
            raise ConnectionClosedError(endpoint_url=request.url)


def _deliver(request: Any) -> None:
    """Send botocore's signed request as it stands, and read (then drop) the answer."""
    body = request.body
    if hasattr(body, "read"):
        position = body.tell()
        body, _ = body.read(), body.seek(position)
    with urllib3.PoolManager() as pool:
        pool.request(request.method, request.url, body=body, headers=dict(request.headers.items()), retries=False)


def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record botocore's backoffs; each sleeps a thousandth of its length (call it from a fixture)."""
    delays: list[float] = []
    real = ExponentialBackoff.delay_amount

    def scaled(self: ExponentialBackoff, context: Any) -> float:
        delay = float(real(self, context))
        delays.append(delay)
        return delay / 1000

    monkeypatch.setattr(ExponentialBackoff, "delay_amount", scaled)
    return delays
