"""OpenTelemetry for each command: one span `memory.<command>` and a handful of metrics.

Loaded by `observe` only when the OpenTelemetry API is importable (`pip install 's3memory[otel]'`).
The tracer and meter are the API's proxies: they do nothing until the application installs a
tracer or meter provider, and follow it from then on, whenever that happens. s3memory never
installs a provider or an exporter itself.

The span is current while the command runs (spans of instrumented botocore calls nest under
it) and carries the same facts as the log record, as `s3memory.*` attributes; no path unless
`log_paths` is on, and never an exception message (it would name a path). Metrics (no agent id:
it would make one time series per agent):

| instrument | kind | attributes |
|---|---|---|
| `s3memory.command.duration` (s) | histogram | `s3memory.command`, `s3memory.outcome` |
| `s3memory.s3.requests`, `s3memory.kms.requests` | counter | `s3memory.command` |
| `s3memory.conflict.retries` | counter | `s3memory.command` |
| `s3memory.errors` | counter | `s3memory.command`, `s3memory.outcome` (the error class) |
"""

from __future__ import annotations

from contextvars import Token
from typing import Any

from opentelemetry import context, metrics, trace
from opentelemetry.context import Context
from opentelemetry.trace import Status, StatusCode

from s3memory.core.version import __version__

_tracer = trace.get_tracer("s3memory", __version__)
_meter = metrics.get_meter("s3memory", __version__)
_duration = _meter.create_histogram(
    "s3memory.command.duration", unit="s", description="Duration of memory commands, as the caller waits for them"
)
_s3_requests = _meter.create_counter("s3memory.s3.requests", unit="{request}", description="S3 requests made")
_kms_requests = _meter.create_counter("s3memory.kms.requests", unit="{request}", description="KMS requests made")
_conflicts = _meter.create_counter(
    "s3memory.conflict.retries", unit="{retry}", description="Conditional writes retried because another writer won"
)
_errors = _meter.create_counter("s3memory.errors", unit="{error}", description="Failed commands, by error class")

# log record field → span attribute (path only when the record has it, i.e. with log_paths)
_ATTRIBUTES = ("command", "outcome", "s3_requests", "kms_requests", "retries", "agent_id", "path")

Handle = tuple[trace.Span, Token[Context]]


def start(command: str) -> Handle:
    """Open the command's span and make it current; `finish` ends it."""
    span = _tracer.start_span(f"memory.{command}")
    return span, context.attach(trace.set_span_in_context(span))


def finish(handle: Handle, fields: dict[str, Any], conflicts: int, seconds: float) -> None:
    """End the span with the command's facts and record its metrics."""
    span, token = handle
    context.detach(token)
    outcome = str(fields["outcome"])
    if span.is_recording():
        span.set_attributes({f"s3memory.{name}": fields[name] for name in _ATTRIBUTES if name in fields})
        span.set_attribute("s3memory.conflict_retries", conflicts)
        if outcome != "ok":
            span.set_status(Status(StatusCode.ERROR, outcome))
    span.end()
    by_command = {"s3memory.command": str(fields["command"])}
    with_outcome = {**by_command, "s3memory.outcome": outcome}
    _duration.record(seconds, with_outcome)
    _s3_requests.add(int(fields["s3_requests"]), by_command)
    _kms_requests.add(int(fields["kms_requests"]), by_command)
    _conflicts.add(conflicts, by_command)
    if outcome != "ok":
        _errors.add(1, with_outcome)
