"""The fleet state machine the module renders (terraform/fleet/state-machine.asl.json.tftpl), run by
moto's Step Functions interpreter with its Lambda invocations answered by the worker handler
(`s3memory.fleet.worker.lambda_handler`) in this process; see sfn_moto.py for the seams and for
what moto cannot execute (multi-item batches, the tolerated-failure threshold, redrive).

Issue 33's cases over 220 agents: every agent processed exactly once; one failing agent tolerated
and reported; a second execution of the same run finishes only it (moto has no RedriveExecution:
the worker's done markers make any rerun, a redrive included, skip what is done); prune deletes
exactly what `s3memory prune` deletes. And: the job picks its worker (the rendered mapping equals
`JOBS`), Lambda throttling and 5xx are retried with backoff, the results go where the module says.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import boto3
import botocore.awsrequest
import botocore.session
import pytest
from moto import mock_aws

from s3memory import LocalKeys, S3MemoryTool
from s3memory.cli import main
from s3memory.fleet import stepfunctions, worker
from s3memory.fleet.jobs import JOBS
from tests.terraform.deploy import FLEET_NAME, RESULTS_BUCKET, RESULTS_PREFIX, TERRAFORM, state_machine_definition
from tests.terraform.sfn_moto import MOTO_REGION, for_moto, machine

BUCKET = "acme-s3memory"
KEYSTORE = "acme-s3memory-keys"
AGENTS = 220
DAY = 86400
LOCAL_KEY = bytes(range(32))
HANDLER = TERRAFORM / "functions" / "fleet" / "handler.py"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto with Step Functions executing, the worker's environment as fleet.tf sets it, and a cold
    worker (its clients are built on its first batch)."""
    for name, value in {
        "S3MEMORY_BUCKET": BUCKET,
        "S3MEMORY_KEYSTORE_BUCKET": KEYSTORE,
        "S3MEMORY_PREFIX": "agents/",
        "S3MEMORY_REGION": MOTO_REGION,
        "S3MEMORY_NAMES": "plain",
        "AWS_DEFAULT_REGION": MOTO_REGION,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(worker, "_RUNTIME", [])
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        s3 = boto3.client("s3", region_name=MOTO_REGION)
        for bucket in (BUCKET, KEYSTORE, RESULTS_BUCKET):
            s3.create_bucket(Bucket=bucket)
        yield
    for built in worker._RUNTIME:
        built.close()


def seed(s3: Any, count: int) -> list[str]:
    ids = [f"agent-{n:04d}" for n in range(count)]
    for agent in ids:
        s3.put_object(Bucket=BUCKET, Key=f"agents/{agent}/notes.md", Body=b"x")
    return ids


def start_input(s3: Any, run_id: str, ids: list[str], job: str = "prune", **options: Any) -> dict[str, Any]:
    """What `s3memory fleet run --engine stepfunctions` starts: the manifest written first."""
    key = f"{RESULTS_PREFIX}{run_id}/manifest.json"
    s3.put_object(Bucket=RESULTS_BUCKET, Key=key, Body=json.dumps([{"id": a, "kind": "agent"} for a in ids]).encode())
    return {
        "job": job,
        "options": options,
        "run_id": run_id,
        "results": {"bucket": RESULTS_BUCKET, "prefix": RESULTS_PREFIX},
        "manifest": {"bucket": RESULTS_BUCKET, "key": key},
        "batch_size": 25,
        "max_concurrency": 8,
        "tolerated_failure_percentage": 5,
    }


def markers(s3: Any, run_id: str, state: str) -> list[str]:
    prefix = f"{RESULTS_PREFIX}{run_id}/{state}/agent/"
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=RESULTS_BUCKET, Prefix=prefix)
    return [o["Key"][len(prefix) :] for page in pages for o in page.get("Contents", [])]


class Listings:
    """Every S3 client created while it is active (the worker's, built on its first batch, too):
    S3 refuses the listing of `refused`'s files (403 AccessDenied); `roots` counts the listings of
    each agent's root, one per agent a job works on."""

    def __init__(self) -> None:
        self.refused: str | None = None
        self.roots: Counter[str] = Counter()

    def remember(self, params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["listing"] = (params.get("Prefix", ""), "Delimiter" in params)

    def answer(self, context: dict[str, Any], **_: Any) -> Any:
        prefix, delimited = context.get("listing", ("", False))
        if prefix.startswith("agents/agent-") and prefix.count("/") == 2 and not delimited:
            self.roots[prefix] += 1
        if self.refused is not None and prefix == f"agents/{self.refused}/":
            error = {"Code": "AccessDenied", "Message": "Access Denied"}
            return botocore.awsrequest.AWSResponse("", 403, {}, None), {"Error": error, "ResponseMetadata": {}}
        return None


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> Listings:
    watched = Listings()
    create_client = botocore.session.Session.create_client

    def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
        client = create_client(self, *args, **kwargs)
        client.meta.events.register("before-parameter-build.s3.ListObjectsV2", watched.remember)
        client.meta.events.register("before-call.s3.ListObjectsV2", watched.answer)
        return client

    monkeypatch.setattr(botocore.session.Session, "create_client", patched)
    return watched


def test_moto_runs_the_rendered_definition_with_only_the_item_batcher_swapped() -> None:
    rendered = state_machine_definition(MOTO_REGION)
    adapted = for_moto(rendered)
    batcher = rendered["States"]["Agents"].pop("ItemBatcher")
    selector = adapted["States"]["Agents"].pop("ItemSelector")
    assert adapted == rendered
    assert selector == {"BatchInput": batcher["BatchInput"], "Items.$": "States.Array($$.Map.Item.Value)"}
    assert batcher["MaxItemsPerBatchPath"] == "$.batch_size"


@pytest.mark.slow  # 440 child executions on moto's interpreter
def test_220_agents_each_once_a_failure_tolerated_and_reported_and_a_rerun_finishes_only_it(
    listings: Listings, aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with machine(monkeypatch, worker.lambda_handler) as sm:
        ids = seed(sm.s3, AGENTS)
        execution_input = start_input(sm.s3, "run-1", ids, dry_run=True, older_than="1d")
        listings.refused = "agent-0007"
        execution = sm.run(execution_input)

        assert execution["status"] == "SUCCEEDED", execution  # moto tolerates any failure (sfn_moto.py)
        # every agent in exactly one invocation; agent-0007's batch again, once: FleetBatchFailed is retried once
        assert Counter(sm.lambdas.items()) == Counter({**dict.fromkeys(ids, 1), "agent-0007": 2})
        assert {i.function for i in sm.lambdas.invocations} == {f"{FLEET_NAME}-inspect"}  # a dry run: inspect
        failures = [(i.error, [x["id"] for x in i.event["Items"]]) for i in sm.lambdas.invocations if i.error]
        assert failures == [("FleetBatchFailed", ["agent-0007"]), ("FleetBatchFailed", ["agent-0007"])]
        assert len(sm.waits) == 1
        assert 0 <= sm.waits[0] <= 5
        run = sm.map_run(execution)
        assert (run["maxConcurrency"], run["toleratedFailurePercentage"]) == (8, 5.0)  # from the input
        counts = run["itemCounts"]
        assert (counts["total"], counts["succeeded"], counts["failed"]) == (AGENTS, AGENTS - 1, 1)
        shown = stepfunctions.status(sm.sfn, execution["executionArn"])  # `s3memory fleet status`
        assert (shown.items["total"], shown.items["succeeded"], shown.items["failed"]) == (AGENTS, AGENTS - 1, 1)
        assert sorted(markers(sm.s3, "run-1", "done")) == [a for a in ids if a != "agent-0007"]
        assert markers(sm.s3, "run-1", "failed") == ["agent-0007"]
        failed_marker = f"{RESULTS_PREFIX}run-1/failed/agent/agent-0007"
        reported = json.loads(sm.s3.get_object(Bucket=RESULTS_BUCKET, Key=failed_marker)["Body"].read())
        assert reported == {"id": "agent-0007", "kind": "agent", "outcome": "failed", "counts": {},
                            "reason": "AccessDenied"}  # fmt: skip
        written = json.loads(execution["output"])["map"]["ResultWriterDetails"]
        assert written["Bucket"] == RESULTS_BUCKET
        assert written["Key"].startswith(f"{RESULTS_PREFIX}map-runs/")

        # The same run again (what a redrive does for the failed batch): only agent-0007 is worked on.
        sm.lambdas.invocations.clear()
        listings.refused = None
        listings.roots.clear()
        again = sm.run(execution_input)
        assert again["status"] == "SUCCEEDED", again
        assert listings.roots == Counter({"agents/agent-0007/": 1})
        assert sorted(markers(sm.s3, "run-1", "done")) == ids
        assert markers(sm.s3, "run-1", "failed") == ["agent-0007"]  # the last failure stays on record
        outcomes = Counter(r["outcome"] for i in sm.lambdas.invocations for r in i.answer["results"])
        assert outcomes == Counter({"skipped": AGENTS - 1, "dry_run": 1})


@pytest.mark.parametrize(("code", "status"), [("TooManyRequestsException", 429), ("ServiceException", 500)])
def test_lambda_throttling_and_5xx_are_retried_with_backoff(
    aws: None, monkeypatch: pytest.MonkeyPatch, code: str, status: int
) -> None:
    with machine(monkeypatch, worker.lambda_handler) as sm:
        ids = seed(sm.s3, 3)
        sm.lambdas.refusals = [(code, "Rate exceeded", status), (code, "Rate exceeded", status)]
        execution_input = {**start_input(sm.s3, "run-3", ids, dry_run=True, older_than="1d"), "max_concurrency": 1}
        execution = sm.run(execution_input)

        assert execution["status"] == "SUCCEEDED", execution
        refused = [i.error for i in sm.lambdas.invocations if i.error is not None]
        assert refused == [code, code]
        assert sorted(sm.lambdas.items()) == ids
        assert sorted(markers(sm.s3, "run-3", "done")) == ids
        # two waits, full jitter under 2 s then 4 s (IntervalSeconds 2, BackoffRate 2)
        assert len(sm.waits) == 2
        assert 0 <= sm.waits[0] <= 2
        assert 0 <= sm.waits[1] <= 4


def test_an_error_of_the_invocation_that_is_not_throttling_or_5xx_is_not_retried(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with machine(monkeypatch, worker.lambda_handler) as sm:
        ids = seed(sm.s3, 1)
        sm.lambdas.refusals = [("ResourceNotFoundException", "Function not found", 404)]
        execution = sm.run(start_input(sm.s3, "run-4", ids, dry_run=True, older_than="1d"))
        assert [i.error for i in sm.lambdas.invocations] == ["ResourceNotFoundException"]
        assert sm.waits == []
        assert sm.map_run(execution)["itemCounts"]["failed"] == 1


ROUTES = [(name, {}) for name in JOBS] + [("prune", {"dry_run": True}), ("prune", {"dry_run": False})]


def test_the_job_picks_the_worker_of_its_role_class_as_the_job_table_says(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every job of `JOBS` (and prune's dry run) runs on `<name>-fleet-<JOBS[job].role_class(options)>`;
    the input cannot choose: a `role_class` or `worker` in it changes nothing. The worker's answer
    is a stand-in here: this is about which function is invoked."""
    with machine(monkeypatch, lambda event, context: {"results": []}) as sm:
        picked = {}
        for number, (job, options) in enumerate(ROUTES):
            sm.lambdas.invocations.clear()
            execution_input = {**start_input(sm.s3, f"route-{number}", ["agent-0001"], job, **options)}
            execution_input.update(role_class="erase", worker=f"arn:aws:lambda:{MOTO_REGION}:123456789012:function:x")
            assert sm.run(execution_input)["status"] == "SUCCEEDED"
            (invocation,) = sm.lambdas.invocations
            picked[(job, json.dumps(options))] = invocation.function.removeprefix(f"{FLEET_NAME}-")
        assert picked == {(job, json.dumps(o)): JOBS[job].role_class(o) for job, o in ROUTES}
        assert set(picked.values()) == {"inspect", "audit", "prune", "keys", "erase"}


@pytest.mark.parametrize(
    ("job", "options", "error"),
    [("compact", {}, "UnknownJob"), ("prune", {"dry_run": "yes"}, "InvalidOptions")],
)
def test_an_unknown_job_or_a_non_boolean_dry_run_fails_before_any_worker(
    aws: None, monkeypatch: pytest.MonkeyPatch, job: str, options: dict[str, Any], error: str
) -> None:
    with machine(monkeypatch, lambda event, context: {"results": []}) as sm:
        execution = sm.run(start_input(sm.s3, "bad", ["agent-0001"], job, **options))
        assert (execution["status"], execution["error"]) == ("FAILED", error)
        assert sm.lambdas.invocations == []


# -- prune deletes exactly what `s3memory prune` deletes -------------------------------------------


def _stock(s3: Any, prefix: str, agent: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written 200, 120 and 30 days ago, and now (content times in the objects' headers)."""
    now = time.time()
    tool = S3MemoryTool(
        bucket=BUCKET, agent_id=agent, keys=LocalKeys(LOCAL_KEY), s3_client=s3, prefix=prefix, keystore_bucket=KEYSTORE
    )
    with tool:
        for days, path in ((200, "/memories/old.md"), (120, "/memories/d/older.md"), (30, "/memories/d/recent.md")):
            with monkeypatch.context() as clock:
                clock.setattr("s3memory.storage.vault.time.time", lambda days=days: now - days * DAY)
                tool.call({"command": "create", "path": path, "file_text": f"{days} days\n"})
        tool.call({"command": "create", "path": "/memories/new.md", "file_text": "now\n"})


def _memory(s3: Any, prefix: str, agent: str) -> list[str]:
    root = f"{prefix}{agent}/"
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=root).get("Contents", [])]
    return sorted(key[len(root) :] for key in keys)


def test_prune_deletes_exactly_what_s3memory_prune_deletes(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same agents under two prefixes: `s3memory prune` on one, the state machine on the other."""
    with machine(monkeypatch, worker.lambda_handler) as sm:
        stocked = ["agent-a", "agent-b", "agent-c"]
        for agent in stocked:
            _stock(sm.s3, "agents/", agent, monkeypatch)
            _stock(sm.s3, "by-cli/", agent, monkeypatch)
        for agent in stocked:
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                code = main(["prune", "--prefix", "by-cli/", "--agent", agent, "--older-than", "90d", "-q", "--yes"])
            assert code == 0, out.getvalue()

        execution = sm.run(start_input(sm.s3, "run-5", stocked, older_than="90d"))

        assert execution["status"] == "SUCCEEDED", execution
        assert {i.function for i in sm.lambdas.invocations} == {f"{FLEET_NAME}-prune"}
        for agent in stocked:
            assert _memory(sm.s3, "agents/", agent) == _memory(sm.s3, "by-cli/", agent)
        assert "old.md" not in _memory(sm.s3, "agents/", "agent-a")
        assert "d/recent.md" in _memory(sm.s3, "agents/", "agent-a")
        assert "new.md" in _memory(sm.s3, "agents/", "agent-a")


# -- the retention schedule's start: no run id, no manifest ---------------------------------------


def _handler() -> ModuleType:
    """terraform/functions/fleet/handler.py, the file the module packages (no __pycache__ left there)."""
    spec = importlib.util.spec_from_file_location("s3memory_fleet_handler", HANDLER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    return module


def test_a_scheduled_start_names_the_run_lists_every_agent_and_prunes_them(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The retention schedule's input (fleet.tf's retention_input): the execution's name becomes the
    run id, the inspect worker writes the manifest (one LIST), the prune worker prunes every agent."""
    handler = _handler()
    with machine(monkeypatch, handler.lambda_handler) as sm:
        ids = seed(sm.s3, 5)
        scheduled = {
            "job": "prune",
            "options": {"dry_run": False, "older_than": "90d"},
            "stores": False,
            "results": {"bucket": RESULTS_BUCKET, "prefix": RESULTS_PREFIX},
            "batch_size": 50,
            "max_concurrency": 100,
            "tolerated_failure_percentage": 5,
        }
        execution = sm.run(scheduled, name="scheduled-run-1")

        assert execution["status"] == "SUCCEEDED", execution
        listing, *batches = sm.lambdas.invocations
        assert (listing.function, listing.event) == (
            f"{FLEET_NAME}-inspect",
            {"ListAgents": {"run_id": "scheduled-run-1", "stores": False, "results": scheduled["results"]}},
        )
        assert listing.answer == {
            "bucket": RESULTS_BUCKET,
            "key": f"{RESULTS_PREFIX}scheduled-run-1/manifest.json",
            "count": 5,
        }
        body = sm.s3.get_object(Bucket=RESULTS_BUCKET, Key=listing.answer["key"])["Body"].read()
        assert json.loads(body) == [{"id": a, "kind": "agent"} for a in ids]
        assert {b.function for b in batches} == {f"{FLEET_NAME}-prune"}
        assert sorted(sm.lambdas.items()) == ids
        assert {b.event["BatchInput"]["run_id"] for b in batches} == {"scheduled-run-1"}
        assert sorted(markers(sm.s3, "scheduled-run-1", "done")) == ids
        # what `s3memory fleet status` shows of it
        shown = stepfunctions.status(sm.sfn, execution["executionArn"])
        assert (shown.status, shown.error, shown.redrive_count) == ("SUCCEEDED", "", 0)
        assert shown.items == {"pending": 0, "running": 0, "succeeded": 5, "failed": 0, "timedOut": 0,
                               "aborted": 0, "total": 5}  # fmt: skip
        assert shown.map_run.startswith(f"arn:aws:states:{MOTO_REGION}:123456789012:mapRun:{FLEET_NAME}/agents:")


def test_a_list_agents_request_that_is_not_one_is_refused(aws: None) -> None:
    handler = _handler()
    with pytest.raises(worker.FleetInputError) as refused:
        handler.lambda_handler({"ListAgents": {"run_id": "a/b", "results": {"bucket": RESULTS_BUCKET}}}, None)
    assert str(refused.value) == "not a ListAgents request: run_id is a name without '/', stores true or false"
