"""Deterministic round-trip latency and call counting for botocore clients on in-process moto.

`Meter.attach(client)` registers three handlers on the client:

- `provide-client-params` (the first event of a call): notes when the call began, per thread;
- `before-call`: counts one call per API operation (retries not included), by `service:Operation`;
- `before-send` (registered last, so it runs after moto's stub has answered the request):
  sleeps the service's fixed delay, 20 ms per S3 request and 15 ms per KMS request by default,
  and records the request's `Flight`.

moto answers inside `before-send`, so the sleep stands for the network round trip of a real
service. `time.sleep` releases the GIL, so parallel requests overlap their round trips as they
would against S3; moto's own CPU time does not overlap (it runs in this process, under the
GIL), which is why phases also record process CPU time. Counting and sleeping happen only
while `enabled` is true, so seeding data for a scenario costs neither.

Round trips, from the flights of a phase, in units of the S3 delay:

- `Phase.in_flight`: the time with at least one request in flight (each request in flight for
  its delay from when it was sent) / delay. CPU time between requests is not counted, but the
  requests of one parallel wave are sent one after another (their CPU, and moto's, runs under
  one GIL), which stretches a wave a little: a measure, not an exact count.
- `Phase.round_trips`: the same on a clock where CPU takes no time: a request is sent when the
  last request answered before its call began was answered (at 0 if none was), and is in flight
  for its delay. With one delay per service this is exact, and the same on an idle or a loaded
  machine: the requests a command waits for one after another (a KMS request counts as its
  delay's share of an S3 one). It stays exact while every request of a parallel wave begins
  before the first of that wave is answered: measure with a delay well above a wave's CPU time
  (tests/bench/test_round_trips.py uses 300 ms).
- `Phase.wall_round_trips`: wall time / delay (round trips plus the CPU time between them).

Usage (`answer()` is optional: it ends the timed part; requests after it are counted, not timed):

    meter = Meter(s3_delay=0.05)
    with aws(meter) as (s3, kms, key_id):
        tool = make_tool(s3, kms, key_id, "agent")
        with Phase(meter) as phase:
            tool.call(command)
            phase.answer()
            tool.memory.settle()  # what s3memory sends after answering (an intent record's release)
    phase.round_trips, phase.in_flight, phase.seconds, phase.count("s3")
"""

from __future__ import annotations

import bisect
import contextlib
import multiprocessing
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

S3_DELAY = 0.020
KMS_DELAY = 0.015


@dataclass(frozen=True)
class Flight:
    """One request: its call began at `started`, it was sent at `sent` (moto had answered) and
    answered `delay` seconds later, at `answered` (perf_counter seconds)."""

    name: str  # service:Operation
    started: float
    sent: float
    answered: float
    delay: float


# `bench/run.py --latency-scale`: the factor on the default delays of the Meters made afterwards.
DEFAULT_SCALE = [1.0]


class Meter:
    def __init__(self, s3_delay: float | None = None, kms_delay: float | None = None) -> None:
        scale = DEFAULT_SCALE[0]
        self.delays = {
            "s3": S3_DELAY * scale if s3_delay is None else s3_delay,
            "kms": KMS_DELAY * scale if kms_delay is None else kms_delay,
        }
        self.enabled = False
        self._calls: Counter[str] = Counter()
        self._flights: list[Flight] = []
        self._lock = threading.Lock()
        self._local = threading.local()

    def attach(self, client: Any) -> Any:
        service = client.meta.service_model.service_name
        if service not in self.delays:
            raise ValueError(f"no delay configured for {service}")
        events = client.meta.events
        events.register(f"provide-client-params.{service}", self._begin)
        events.register(f"before-call.{service}", self._count)
        # moto's stub is registered on the generic `before-send`, and handlers of a more specific
        # event name would run before it; registering last on the generic name runs after it.
        events.register_last("before-send", self._sleep)
        return client

    def _begin(self, **_: Any) -> None:
        self._local.started = time.perf_counter()

    def _count(self, model: Any, **_: Any) -> None:
        if self.enabled:
            with self._lock:
                self._calls[f"{model.service_model.service_name}:{model.name}"] += 1

    def _sleep(self, event_name: str, **_: Any) -> None:
        if not self.enabled:
            return
        service = "kms" if event_name.startswith("before-send.kms") else "s3"
        delay = self.delays[service]
        sent = time.perf_counter()
        time.sleep(delay)
        answered = time.perf_counter()
        started = getattr(self._local, "started", sent)
        self._local.started = answered  # a retry of this call begins after this attempt's answer
        with self._lock:
            self._flights.append(Flight(f"{service}:{event_name.rsplit('.', 1)[-1]}", started, sent, answered, delay))

    def snapshot(self) -> Counter[str]:
        with self._lock:
            return Counter(self._calls)

    def flights(self, since: int = 0) -> list[Flight]:
        """The requests recorded so far (from the `since`-th on), in the order they were answered."""
        with self._lock:
            return self._flights[since:]

    def flight_count(self) -> int:
        with self._lock:
            return len(self._flights)


def _union(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


def in_flight(flights: list[Flight], unit: float) -> float:
    """Seconds with at least one request in flight (each for its delay from when it was sent) / `unit`."""
    return _union([(f.sent, f.sent + f.delay) for f in flights]) / unit


def round_trips(flights: list[Flight], unit: float) -> float:
    """Round trips on a clock where CPU takes no time (see the module's docstring), in `unit`s."""
    ordered = sorted(flights, key=lambda f: f.answered)
    answers: list[float] = []  # real answer times, ascending
    latest: list[float] = []  # latest[i]: the latest ideal answer among ordered[: i + 1]
    intervals: list[tuple[float, float]] = []
    for flight in ordered:
        before = bisect.bisect_right(answers, flight.started)
        start = latest[before - 1] if before else 0.0
        stop = start + flight.delay / unit
        intervals.append((start, stop))
        answers.append(flight.answered)
        latest.append(max(stop, latest[-1]) if latest else stop)
    return round(_union(intervals), 9)


def calls_in(calls: Counter[str] | dict[str, int], service: str | None = None, op: str | None = None) -> int:
    """Calls of `service` (and operation `op`) in a snapshot or a difference of snapshots."""
    total = 0
    for name, n in calls.items():
        svc, _, operation = name.partition(":")
        if (service is None or svc == service) and (op is None or operation == op):
            total += n
    return total


class Phase:
    """`with Phase(meter) as p:` enables the meter; records wall time, process CPU time, calls and
    the requests' flights (see the module's docstring for `round_trips` and `in_flight`)."""

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        self.calls: Counter[str] = Counter()
        self.flights: list[Flight] = []
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        self._answered: float | None = None

    def __enter__(self) -> Phase:
        self._before = self.meter.snapshot()
        self._first = self.meter.flight_count()
        self.meter.enabled = True
        self._cpu = time.process_time()
        self._start = time.perf_counter()
        return self

    def answer(self) -> None:
        """Mark the answer: `seconds` and the round trips end here; calls after it still count."""
        self._answered = time.perf_counter()
        self.seconds = self._answered - self._start

    def __exit__(self, *exc: object) -> None:
        end = time.perf_counter()
        if self._answered is None:
            self._answered, self.seconds = end, end - self._start
        self.cpu_seconds = time.process_time() - self._cpu
        self.meter.enabled = False
        self.calls = self.meter.snapshot() - self._before
        self.flights = self.meter.flights(self._first)

    def count(self, service: str | None = None, op: str | None = None) -> int:
        return calls_in(self.calls, service, op)

    def _waited(self) -> list[Flight]:
        """The requests answered by the answer (any later one was not waited for)."""
        assert self._answered is not None, "known once the phase has ended"
        return [f for f in self.flights if f.answered <= self._answered]

    @property
    def round_trips(self) -> float:
        """Requests waited for one after another, on a clock where CPU takes no time (exact)."""
        return round_trips(self._waited(), self.meter.delays["s3"])

    @property
    def in_flight(self) -> float:
        """Time with at least one request in flight / the S3 delay (measured)."""
        return in_flight(self._waited(), self.meter.delays["s3"])

    @property
    def wall_round_trips(self) -> float:
        """Wall time / the S3 delay: round trips plus the CPU time spent between them."""
        return self.seconds / self.meter.delays["s3"]


class StoreCpu:
    """The CPU moto spends answering requests in this process and in processes forked from it
    (`seconds`): each thread's CPU time inside moto's stub, summed in memory the forks share.
    What is left of the process CPU is the client's own (botocore and s3memory), which against S3
    is all the CPU a worker spends."""

    def __init__(self) -> None:
        self._total = multiprocessing.get_context("fork").Value("d", 0.0)

    @property
    def seconds(self) -> float:
        with self._total.get_lock():
            return float(self._total.value)

    @contextlib.contextmanager
    def counting(self) -> Iterator[StoreCpu]:
        from moto.core.botocore_stubber import BotocoreStubber

        answer = BotocoreStubber.__call__
        total = self._total

        def timed(stub: BotocoreStubber, *args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return answer(stub, *args, **kwargs)
            finally:
                spent = time.thread_time() - started
                with total.get_lock():
                    total.value += spent

        BotocoreStubber.__call__ = timed  # type: ignore[method-assign]
        try:
            yield self
        finally:
            BotocoreStubber.__call__ = answer  # type: ignore[method-assign]
