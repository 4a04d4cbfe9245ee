"""Deterministic round-trip latency and call counting for botocore clients on in-process moto.

`Meter.attach(client)` registers two handlers on the client:

- `before-call`: counts one call per API operation (retries not included), by `service:Operation`;
- `before-send` (registered last, so it runs after moto's stub has answered the request):
  sleeps the service's fixed delay, 20 ms per S3 request and 15 ms per KMS request by default.

moto answers inside `before-send`, so the sleep stands for the network round trip of a real
service. `time.sleep` releases the GIL, so parallel requests overlap their round trips as they
would against S3; moto's own CPU time does not overlap (it runs in this process, under the
GIL), which is why phases also record process CPU time. Counting and sleeping happen only
while `enabled` is true, so seeding data for a scenario costs neither.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

S3_DELAY = 0.020
KMS_DELAY = 0.015


class Meter:
    def __init__(self, s3_delay: float = S3_DELAY, kms_delay: float = KMS_DELAY) -> None:
        self.delays = {"s3": s3_delay, "kms": kms_delay}
        self.enabled = False
        self._calls: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.s3_waits: list[tuple[float, float]] = []  # (start, end) of each injected S3 delay while enabled

    def attach(self, client: Any) -> Any:
        service = client.meta.service_model.service_name
        if service not in self.delays:
            raise ValueError(f"no delay configured for {service}")
        events = client.meta.events
        events.register(f"before-call.{service}", self._count)
        # moto's stub is registered on the generic `before-send`, and handlers of a more specific
        # event name would run before it; registering last on the generic name runs after it.
        events.register_last("before-send", self._sleep)
        return client

    def _count(self, model: Any, **_: Any) -> None:
        if self.enabled:
            with self._lock:
                self._calls[f"{model.service_model.service_name}:{model.name}"] += 1

    def _sleep(self, event_name: str, **_: Any) -> None:
        if self.enabled:
            kms = event_name.startswith("before-send.kms")
            started = time.perf_counter()
            time.sleep(self.delays["kms" if kms else "s3"])
            if not kms:
                with self._lock:
                    self.s3_waits.append((started, time.perf_counter()))

    def round_trips(self, since: int = 0) -> int:
        """S3 round trips waited for in sequence among the delays recorded from index `since` on:
        the delays are merged where they overlap (requests in flight together), and each merged
        stretch counts as its length in whole delays. Time between requests (the client's and
        moto's CPU, which a loaded machine stretches) is never counted, so the figure holds under
        load as long as requests sent together start within half a delay of each other."""
        with self._lock:
            waits = sorted(self.s3_waits[since:])
        total, stretch = 0, None
        for start, end in waits:
            if stretch is not None and start < stretch[1]:
                stretch = (stretch[0], max(stretch[1], end))
                continue
            if stretch is not None:
                total += round((stretch[1] - stretch[0]) / self.delays["s3"])
            stretch = (start, end)
        if stretch is not None:
            total += round((stretch[1] - stretch[0]) / self.delays["s3"])
        return total

    def snapshot(self) -> Counter[str]:
        with self._lock:
            return Counter(self._calls)


def calls_in(calls: Counter[str] | dict[str, int], service: str | None = None, op: str | None = None) -> int:
    """Calls of `service` (and operation `op`) in a snapshot or a difference of snapshots."""
    total = 0
    for name, n in calls.items():
        svc, _, operation = name.partition(":")
        if (service is None or svc == service) and (op is None or operation == op):
            total += n
    return total


class Phase:
    """`with Phase(meter) as p:` enables the meter; records wall time, process CPU time and calls."""

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        self.calls: Counter[str] = Counter()
        self.seconds = 0.0
        self.cpu_seconds = 0.0

    def __enter__(self) -> Phase:
        self._before = self.meter.snapshot()
        self.meter.enabled = True
        self._cpu = time.process_time()
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start
        self.cpu_seconds = time.process_time() - self._cpu
        self.meter.enabled = False
        self.calls = self.meter.snapshot() - self._before

    def count(self, service: str | None = None, op: str | None = None) -> int:
        return calls_in(self.calls, service, op)
