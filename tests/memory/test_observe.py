"""One structured log record per command: its costs and outcome, never a path or content by default."""

from __future__ import annotations

import collections
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from s3memory.storage.kms import KmsKeys
from tests.support import err, ok
from tests.support.cli import ROOT

FIELDS = ("command", "outcome", "duration_ms", "s3_requests", "kms_requests", "retries", "agent_id")


def records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "s3memory" and r.getMessage().startswith("s3memory command ")]


def fields(record: logging.LogRecord) -> dict[str, Any]:
    return {name: getattr(record, name) for name in FIELDS if name != "duration_ms"}


def test_one_record_per_command_with_exact_costs(
    make_tool: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    tool = make_tool()
    ok(tool, command="create", path="/memories/notes/a.md", file_text="secret plan")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="s3memory"):
        ok(tool, command="view", path="/memories/notes/a.md")  # a warm file view: one GET
        ok(tool, command="view", path="/memories/notes")  # view calls look: still one record
        assert err(tool, command="view", path="/memories/none.md") == (
            "The path /memories/none.md does not exist. Please provide a valid path."
        )
    got = records(caplog)
    assert [fields(r) for r in got] == [
        {"command": "view", "outcome": "ok", "s3_requests": 1, "kms_requests": 0, "retries": 0, "agent_id": "agent-42"},
        {"command": "view", "outcome": "ok", "s3_requests": 1, "kms_requests": 0, "retries": 0, "agent_id": "agent-42"},
        {
            "command": "view",
            "outcome": "command",
            "s3_requests": 2,
            "kms_requests": 0,
            "retries": 0,
            "agent_id": "agent-42",
        },
    ]
    assert all(r.levelno == logging.INFO and r.duration_ms >= 0 for r in got)
    text = "\n".join(r.getMessage() for r in caplog.records) + repr([r.__dict__ for r in got])
    for private in ("notes", "a.md", "none.md", "secret plan", "/memories"):
        assert private not in text


def test_kms_requests_are_counted(
    make_tool: Callable[..., Any], kms: Any, kms_key: str, caplog: pytest.LogCaptureFixture
) -> None:
    ok(make_tool(keys=KmsKeys(kms_key, kms_client=kms)), command="create", path="/memories/a.md", file_text="a\n")
    reader = make_tool(keys=KmsKeys(kms_key, kms_client=kms))
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="s3memory"):
        ok(reader, command="view", path="/memories/a.md")  # a cold reader: one Decrypt, of the branch key
    assert [fields(r) for r in records(caplog)] == [
        {"command": "view", "outcome": "ok", "s3_requests": 2, "kms_requests": 1, "retries": 0, "agent_id": "agent-42"}
    ]  # the start-up root listing (which also lists the keystore), then the GET


def test_a_conflict_retry_is_counted(make_tool: Callable[..., Any], s3: Any, caplog: pytest.LogCaptureFixture) -> None:
    a, b = make_tool(), make_tool()  # neither holds f.md (memory.recent): both read it before writing
    ok(make_tool(), command="create", path="/memories/f.md", file_text="one\n")
    ok(a, command="view", path="/memories")  # each tool's first command also looks for interrupted changes
    ok(b, command="view", path="/memories")
    edited = []

    def edit_in_between(**_: Any) -> None:  # another writer, in its own thread (its own command)
        if not edited:
            edited.append(True)
            writer = threading.Thread(
                target=ok, args=(b,), kwargs={"command": "insert", "path": "/memories/f.md", "insert_line": 1,
                                              "insert_text": "two"}
            )  # fmt: skip
            writer.start()
            writer.join()

    s3.meta.events.register("before-call.s3.PutObject", edit_in_between)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="s3memory"):
        ok(a, command="insert", path="/memories/f.md", insert_line=0, insert_text="zero")
    s3.meta.events.unregister("before-call.s3.PutObject", edit_in_between)
    inserts = [fields(r) for r in records(caplog)]
    assert inserts[0] == {  # b's, logged first: GET, PUT
        "command": "insert", "outcome": "ok", "s3_requests": 2, "kms_requests": 0, "retries": 0, "agent_id": "agent-42"
    }  # fmt: skip
    assert inserts[1] == {  # a's: GET, PUT (412), backoff, GET, PUT
        "command": "insert", "outcome": "ok", "s3_requests": 4, "kms_requests": 0, "retries": 1, "agent_id": "agent-42"
    }  # fmt: skip


def test_a_held_version_another_writer_changed_is_read_again_without_a_retry(
    make_tool: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    a, b = make_tool(), make_tool()
    ok(a, command="create", path="/memories/f.md", file_text="one\n")  # a holds this version
    ok(b, command="insert", path="/memories/f.md", insert_line=1, insert_text="two")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="s3memory"):
        ok(a, command="insert", path="/memories/f.md", insert_line=0, insert_text="zero")
    (record,) = records(caplog)
    assert fields(record) == {  # a's: PUT of the held version (412), GET, PUT; no backoff, no retry counted
        "command": "insert", "outcome": "ok", "s3_requests": 3, "kms_requests": 0, "retries": 0, "agent_id": "agent-42"
    }  # fmt: skip
    assert ok(a, command="view", path="/memories/f.md").endswith("     1\tzero\n     2\tone\n     3\ttwo")


def test_paths_only_with_log_paths(make_tool: Callable[..., Any], caplog: pytest.LogCaptureFixture) -> None:
    tool = make_tool(log_paths=True)
    with caplog.at_level(logging.INFO, logger="s3memory"):
        ok(tool, command="create", path="/memories/ab.md", file_text="x")
    (record,) = records(caplog)
    assert record.path == "/memories/ab.md"
    assert "path=/memories/ab.md" in record.getMessage()


# --- OpenTelemetry ---------------------------------------------------------------------

_NO_OTEL_SCRIPT = """
import json, logging, sys
if sys.argv[1] == "blocked":
    sys.modules["opentelemetry"] = None  # as if opentelemetry-api were not installed
from concurrent.futures import ThreadPoolExecutor
import boto3
from moto import mock_aws
from s3memory.core.guard import SecretGuard
from s3memory.core.limits import Limits
from s3memory.memory.engine import Memory
from s3memory.storage.keys import LocalKeys
from s3memory.storage.store import ObjectStore
from s3memory.storage.vault import Vault
seen = []
handler = logging.Handler()
handler.emit = lambda record: seen.append(record.command)
logging.getLogger("s3memory").addHandler(handler)
logging.getLogger("s3memory").setLevel(logging.INFO)
with mock_aws():
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="b-otel")
    vault = Vault(ObjectStore(s3, "b-otel"), LocalKeys(bytes(32)), "a", "")
    with ThreadPoolExecutor(4) as pool:
        memory = Memory(vault, pool, Limits(), SecretGuard("block"))
        memory.create("/memories/a.md", "x")
        answer = memory.view("/memories/a.md")
loaded = sorted(m for m in sys.modules if m.startswith("opentelemetry") and sys.modules[m] is not None)
print(json.dumps({"answer": answer, "records": seen, "otel": "s3memory.memory.otel" in sys.modules,
                  "opentelemetry": loaded[:1]}))
"""


@pytest.mark.parametrize(
    ("mode", "loads"), [("blocked", False), ("installed", True)], ids=["without-opentelemetry", "with-it"]
)
def test_without_opentelemetry_nothing_more_is_imported(mode: str, loads: bool) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("S3MEMORY_", "AWS_ENDPOINT"))}
    env.update(PYTHONPATH=ROOT, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing")
    proc = subprocess.run(
        [sys.executable, "-c", _NO_OTEL_SCRIPT, mode], capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "answer": "Here's the content of /memories/a.md with line numbers:\n     1\tx",
        "records": ["create", "view"],
        "otel": loads,
        "opentelemetry": ["opentelemetry"] if loads else [],
    }


@pytest.fixture(scope="module")
def otel() -> Iterator[tuple[Any, Any]]:
    """The process's tracer and meter providers, set once: an in-memory span exporter and metric reader.

    A provider can be set only once per process; at the end of the module the span exporter is shut
    down, so later tests' spans are dropped instead of piling up in memory (the metric reader keeps
    one cumulative point per metric and attributes). The providers stay up: a shut-down span
    processor logs "Processor is already shutdown, ignoring call" for every later span, and a
    shut-down meter provider a warning for every meter asked of it, into later tests' exact log
    assertions (test_mounts.py's, when it ran after this module in the same process).
    """
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    assert type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider", "another test set a provider"
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    meters = MeterProvider(metric_readers=[reader])
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(meters)
    yield exporter, reader
    exporter.shutdown()
    exporter.clear()


def _totals(reader: Any) -> collections.Counter[tuple[str, tuple[tuple[str, Any], ...]]]:
    """Cumulative value of every s3memory data point (a histogram's: its count), by metric and attributes."""
    totals: collections.Counter[tuple[str, tuple[tuple[str, Any], ...]]] = collections.Counter()
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            if scope.scope.name != "s3memory":
                continue
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    key = (metric.name, tuple(sorted(point.attributes.items())))
                    totals[key] += getattr(point, "count", None) or getattr(point, "value", 0)
    return totals


def _spans(exporter: Any) -> list[Any]:
    return [s for s in exporter.get_finished_spans() if s.name.startswith("memory.")]


def test_each_command_is_one_span_with_its_costs(make_tool: Callable[..., Any], s3: Any, otel: tuple[Any, Any]) -> None:
    from opentelemetry import trace
    from opentelemetry.trace import StatusCode

    exporter, _ = otel
    tool = make_tool()
    ok(tool, command="create", path="/memories/notes/a.md", file_text="secret plan")
    current: list[str] = []

    def hook(**_: Any) -> None:
        current.append(trace.get_current_span().name)

    s3.meta.events.register("before-call.s3.GetObject", hook)
    exporter.clear()
    ok(tool, command="view", path="/memories/notes/a.md")
    err(tool, command="view", path="/memories/none.md")
    s3.meta.events.unregister("before-call.s3.GetObject", hook)
    spans = _spans(exporter)
    assert [s.name for s in spans] == ["memory.view", "memory.view"]
    common = {"s3memory.command": "view", "s3memory.kms_requests": 0, "s3memory.retries": 0,
              "s3memory.conflict_retries": 0, "s3memory.agent_id": "agent-42"}  # fmt: skip
    assert dict(spans[0].attributes) == {**common, "s3memory.outcome": "ok", "s3memory.s3_requests": 1}
    assert dict(spans[1].attributes) == {**common, "s3memory.outcome": "command", "s3memory.s3_requests": 2}
    assert [(s.status.status_code, s.status.description) for s in spans] == [
        (StatusCode.UNSET, None), (StatusCode.ERROR, "command")
    ]  # fmt: skip
    assert current == ["memory.view", "memory.view"]  # the span is current while S3 is called
    assert all(not s.events for s in spans)  # no exception event: its message would name a path
    shown = repr([dict(s.attributes) for s in spans] + [s.status.description for s in spans])
    for private in ("notes", "a.md", "none.md", "secret plan", "/memories"):
        assert private not in shown
    exporter.clear()
    ok(make_tool(log_paths=True), command="view", path="/memories/notes/a.md")
    (logged,) = _spans(exporter)
    assert logged.attributes["s3memory.path"] == "/memories/notes/a.md"


def test_metrics_count_requests_conflicts_and_errors(
    make_tool: Callable[..., Any], s3: Any, kms: Any, kms_key: str, otel: tuple[Any, Any]
) -> None:
    _, reader = otel
    a, b = make_tool(), make_tool()  # neither holds f.md (memory.recent): both read it before writing
    ok(make_tool(), command="create", path="/memories/f.md", file_text="one\n")
    ok(a, command="view", path="/memories")  # each tool's first command also looks for interrupted changes
    ok(b, command="view", path="/memories")
    ok(make_tool("agent-kms", keys=KmsKeys(kms_key, kms_client=kms)), command="create", path="/memories/k.md",
       file_text="k")  # fmt: skip
    kms_reader = make_tool("agent-kms", keys=KmsKeys(kms_key, kms_client=kms))
    edited: list[bool] = []

    def edit_in_between(**_: Any) -> None:  # another writer, in its own thread (its own command)
        if not edited:
            edited.append(True)
            writer = threading.Thread(
                target=ok, args=(b,), kwargs={"command": "insert", "path": "/memories/f.md", "insert_line": 1,
                                              "insert_text": "two"}
            )  # fmt: skip
            writer.start()
            writer.join()

    before = _totals(reader)
    s3.meta.events.register("before-call.s3.PutObject", edit_in_between)
    ok(a, command="insert", path="/memories/f.md", insert_line=0, insert_text="zero")
    s3.meta.events.unregister("before-call.s3.PutObject", edit_in_between)
    err(a, command="delete", path="/memories/none.md")
    ok(kms_reader, command="view", path="/memories/k.md")
    delta = {k: v - before[k] for k, v in _totals(reader).items() if v != before[k]}
    assert delta == {
        ("s3memory.command.duration", (("s3memory.command", "insert"), ("s3memory.outcome", "ok"))): 2,
        ("s3memory.command.duration", (("s3memory.command", "delete"), ("s3memory.outcome", "command"))): 1,
        ("s3memory.command.duration", (("s3memory.command", "view"), ("s3memory.outcome", "ok"))): 1,
        ("s3memory.s3.requests", (("s3memory.command", "insert"),)): 6,  # b: GET, PUT; a: GET, PUT 412, GET, PUT
        ("s3memory.s3.requests", (("s3memory.command", "delete"),)): 2,
        ("s3memory.s3.requests", (("s3memory.command", "view"),)): 2,  # the start-up root listing, then the GET
        ("s3memory.kms.requests", (("s3memory.command", "view"),)): 1,  # a cold reader: one Decrypt (branch key)
        ("s3memory.conflict.retries", (("s3memory.command", "insert"),)): 1,
        ("s3memory.errors", (("s3memory.command", "delete"), ("s3memory.outcome", "command"))): 1,
    }
