"""One structured log record per command: what it cost and how it ended, never what it touched.

Each public `Memory` command opens a scope (a context variable, carried into the worker threads
that run its parallel requests); botocore event hooks on the tool's S3 and KMS clients count
the scope's requests and HTTP retries, and conditional-write backoffs count as retries too.
When the outermost command ends, the `s3memory` logger gets one INFO record whose `extra`
fields are `command`, `outcome` ("ok" or the error's class), `duration_ms`, `s3_requests`,
`kms_requests`, `retries` and `agent_id`; `path` only with `log_paths=True`. The message text
holds the same facts (for plain handlers), so it works unchanged with AWS Lambda Powertools'
Logger or `logging.basicConfig`.

When `opentelemetry` is importable, the first command loads `otel` (and with it the OpenTelemetry
API): each outermost command is then also a span `memory.<command>` and a few metrics, which go
wherever the application's tracer and meter providers send them (nowhere if it set none).
Without it, nothing more is imported and nothing changes.
"""

from __future__ import annotations

import contextvars
import functools
import importlib.util
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

log = logging.getLogger("s3memory")


@dataclass
class Scope:
    command: str
    s3_requests: int = 0
    kms_requests: int = 0
    http_retries: int = 0  # botocore's second and later attempts of a request
    conflicts: int = 0  # conditional-write backoffs: another writer got there first
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, name: str) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + 1)

    @property
    def retries(self) -> int:
        return self.http_retries + self.conflicts


_current: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("s3memory_scope", default=None)
_attached_lock = threading.Lock()


def count(name: str) -> None:
    """Count one `s3_requests`, `kms_requests`, `http_retries` or `conflicts` for the command under way, if any."""
    scope = _current.get()
    if scope is not None:
        scope.add(name)


def attach(client: Any) -> None:
    """Count `client`'s requests (and botocore's retries of them) for the command under way. Idempotent."""
    service = client.meta.service_model.service_name
    kind = "kms_requests" if service == "kms" else "s3_requests"
    with _attached_lock:
        events = client.meta.events
        events.register(
            f"before-call.{service}.*", functools.partial(_call, kind), unique_id=f"s3memory-observe-call-{kind}"
        )
        events.register(f"request-created.{service}.*", _attempt, unique_id=f"s3memory-observe-attempt-{kind}")


def _call(kind: str, model: Any = None, **_: Any) -> None:
    """One request of a command: counted, and at DEBUG one record naming its service and operation
    (never a key, bucket or body: `--log-level DEBUG` shows the requests a command makes)."""
    count(kind)
    if log.isEnabledFor(logging.DEBUG):
        service = "kms" if kind == "kms_requests" else "s3"
        log.debug("request %s %s", service, getattr(model, "name", "?"))


def _attempt(request: Any = None, **_: Any) -> None:
    """botocore creates a request per attempt: the second and later ones of a call are retries."""
    context = getattr(request, "context", None)
    if isinstance(context, dict):
        seen = context.get("s3memory_attempts", 0)
        context["s3memory_attempts"] = seen + 1
        if seen:
            count("http_retries")


_otel: ModuleType | bool | None = False  # False: not looked for yet


def telemetry() -> ModuleType | None:
    """The `otel` module when OpenTelemetry's API is importable, else None (looked for once)."""
    global _otel
    if _otel is False:
        _otel = None
        try:
            if importlib.util.find_spec("opentelemetry") is not None:
                from . import otel

                _otel = otel
        except ImportError:
            pass
    assert not isinstance(_otel, bool)
    return _otel


@contextmanager
def command(name: str, agent_id: str, path: str | None) -> Iterator[Scope | None]:
    """The scope of one command; logs its record when the outermost command ends. Yields None when nested."""
    if _current.get() is not None:
        yield None
        return
    scope = Scope(name)
    token = _current.set(scope)
    tracing = telemetry()
    span = tracing.start(name) if tracing is not None else None
    started = time.perf_counter()
    outcome = "ok"
    try:
        yield scope
    except BaseException as err:
        outcome = str(getattr(err, "kind", None) or type(err).__name__)
        raise
    finally:
        _current.reset(token)
        seconds = time.perf_counter() - started
        duration_ms = round(seconds * 1000, 1)
        fields: dict[str, Any] = {
            "command": name,
            "outcome": outcome,
            "duration_ms": duration_ms,
            "s3_requests": scope.s3_requests,
            "kms_requests": scope.kms_requests,
            "retries": scope.retries,
            "agent_id": agent_id,
        }
        if path is not None:
            fields["path"] = path
        text = " ".join(f"{key}={value}" for key, value in fields.items())
        log.info("s3memory command %s", text, extra=fields)
        if tracing is not None:
            tracing.finish(span, fields, scope.conflicts, seconds)
