"""`s3memory fleet run` on the local engine (issue 33): every agent exactly once, a failing agent
tolerated and reported, a redrive that finishes only the rest, prune deleting exactly what
`s3memory prune` deletes, and the agents listed with one LIST per 1,000.

The CLI runs in-process with the test's clients (`main(clients=...)`), so its local engine runs its
workers as threads on the test's moto: the worker code is the same as in its processes."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from s3memory.fleet import manifest
from s3memory.storage.admin_store import AdminStore
from tests.support import BUCKET, ok
from tests.support.cli import run

AGENTS = 200
RESULTS_BUCKET = BUCKET[:55] + "-fleet"
DAY = 86400


@pytest.fixture
def results(env: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """A bucket of its own for the runs' results (moto lists a bucket in time linear in its keys)."""
    env.create_bucket(Bucket=RESULTS_BUCKET)
    monkeypatch.setenv("S3MEMORY_FLEET_RESULTS", f"s3://{RESULTS_BUCKET}/runs/")
    return RESULTS_BUCKET


def seed(agents: int) -> list[str]:
    """`agents` agents with one plain object each (no keystore: prune needs none), put straight into
    moto's backend (a thousand PutObject requests would cost seconds)."""
    from moto.s3.models import s3_backends

    backend = s3_backends["123456789012"]["aws"]
    ids = [f"agent-{n:04d}" for n in range(agents)]
    for agent in ids:
        backend.put_object(BUCKET, f"agents/{agent}/f0.md", b"x")
    return ids


def root_lists(cli_clients: Any) -> Counter[str]:
    """ListObjectsV2 requests per agent root (prune's one listing of each agent's files)."""
    seen: Counter[str] = Counter()

    def note(params: dict[str, Any]) -> None:
        prefix = str(params.get("Prefix", ""))
        if prefix.startswith("agents/agent-") and prefix.count("/") == 2 and "Delimiter" not in params:
            seen[prefix] += 1

    cli_clients.before("ListObjectsV2", note)
    return seen


def run_id_of(out: str) -> str:
    return json.loads(out)["run_id"]


@pytest.mark.moto_only
def test_every_agent_is_processed_exactly_once(env: Any, results: str, capsys: Any, cli_clients: Any) -> None:
    ids = seed(AGENTS)
    seen = root_lists(cli_clients)
    code, out, err = run(capsys, "fleet", "run", "prune", "--all", "--older-than", "1d", "--dry-run", "--json",
                         "--workers", "4", "-q")  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    assert (report["items"], report["finished"], report["failed"], report["not_reached"]) == (AGENTS, AGENTS, [], [])
    assert report["totals"] == {"bytes": 0, "would_delete": 0}
    assert seen == Counter({f"agents/{a}/": 1 for a in ids})
    done = [o["Key"] for p in env.get_paginator("list_objects_v2").paginate(Bucket=results, Prefix="runs/")
            for o in p.get("Contents", []) if "/done/agent/" in o["Key"]]  # fmt: skip
    assert sorted(k.rsplit("/", 1)[1] for k in done) == ids


@pytest.mark.moto_only
def test_a_failing_agent_is_tolerated_reported_and_a_redrive_does_only_it(
    env: Any, results: str, capsys: Any, cli_clients: Any
) -> None:
    ids = seed(AGENTS)
    stop = cli_clients.refuse("ListObjectsV2", "AccessDenied", lambda p: p.get("Prefix") == "agents/agent-0007/", 403)
    code, out, err = run(capsys, "fleet", "run", "prune", "--all", "--older-than", "1d", "--dry-run", "--json", "-q")
    assert code == 1
    report = json.loads(out)
    assert report["finished"] == AGENTS - 1
    assert report["failed"] == [{"id": "agent-0007", "kind": "agent", "outcome": "failed", "counts": {},
                                 "reason": "AccessDenied"}]  # fmt: skip
    assert report["complete"] is False
    assert "failed: agent-0007: AccessDenied\n" in err
    run_id = report["run_id"]
    stop()

    code, out, err = run(capsys, "fleet", "report", run_id)
    assert code == 1
    assert out.splitlines()[0] == "failed: agent-0007: AccessDenied"
    assert f"fleet prune {run_id}: {AGENTS:,} items, {AGENTS - 1:,} done, 1 failed, 0 not reached" in out

    seen = root_lists(cli_clients)
    code, out, err = run(capsys, "fleet", "redrive", run_id, "--json", "-q")
    assert code == 0, err
    report = json.loads(out)
    assert (report["finished"], report["failed"], report["complete"]) == (AGENTS, [], True)
    assert seen == Counter({"agents/agent-0007/": 1})  # the others are done: not sent again
    assert len(ids) == AGENTS


def write_in_the_past(tool: Any, monkeypatch: pytest.MonkeyPatch, days: int, path: str) -> None:
    now = time.time()
    with monkeypatch.context() as m:
        m.setattr("s3memory.storage.vault.time.time", lambda: now - days * DAY)
        ok(tool, command="create", path=path, file_text=f"written {days} days ago")


def stock(new_tool: Any, monkeypatch: pytest.MonkeyPatch, agent: str) -> None:
    tool = new_tool(agent)
    write_in_the_past(tool, monkeypatch, 200, "/memories/old.md")
    write_in_the_past(tool, monkeypatch, 120, "/memories/d/older.md")
    write_in_the_past(tool, monkeypatch, 30, "/memories/d/recent.md")
    ok(tool, command="create", path="/memories/new.md", file_text="now")


def memory(s3: Any, agent: str) -> list[str]:
    root = f"agents/{agent}/"
    keys = AdminStore(s3, BUCKET).list_all(root)
    return sorted(o.key[len(root) :] for o in keys if "/.s3memory/keys/" not in o.key)


@pytest.mark.parametrize("criterion", ["--older-than", "--not-accessed-for"])
def test_fleet_prune_deletes_exactly_what_prune_deletes(
    env: Any, capsys: Any, new_tool: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, criterion: str
) -> None:
    for agent in ("single-1", "single-2", "fleet-1", "fleet-2"):
        stock(new_tool, monkeypatch, agent)
    before = memory(env, "single-1")
    for agent in ("single-1", "single-2"):
        code, _, err = run(capsys, "prune", "--agent", agent, criterion, "90d", "--yes", "-q")
        assert code == 0, err
    listed = tmp_path / "agents.txt"
    listed.write_text("fleet-1\n# a comment\nfleet-2\n", encoding="utf-8")
    code, out, err = run(capsys, "fleet", "run", "prune", "--agents", str(listed), criterion, "90d", "--yes",
                         "--json", "-q")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["totals"]["deleted"] == 4
    kept = memory(env, "single-1")
    assert kept != before  # something was pruned, and not everything
    assert [memory(env, a) for a in ("single-2", "fleet-1", "fleet-2")] == [kept, kept, kept]
    assert [k for k in kept if not k.startswith(".s3memory/")] == ["d/recent.md", "new.md"]


@pytest.mark.moto_only
def test_the_fleet_is_listed_with_one_list_per_thousand_agents(env: Any) -> None:
    seed(1001)
    calls: list[dict[str, Any]] = []
    env.meta.events.register("before-call.s3.ListObjectsV2", lambda params, **_: calls.append(params))
    items = manifest.listed(AdminStore(env, BUCKET), "agents/")
    assert len(items) == 1001
    assert [i.id for i in items[:2]] == ["agent-0000", "agent-0001"]
    assert len(calls) == 2


def test_shred_and_purge_never_run_on_every_agent(env: Any, capsys: Any) -> None:
    env.put_object(Bucket=BUCKET, Key="agents/agent-0000/f0.md", Body=b"x")
    for job in ("shred", "purge"):
        code, _, err = run(capsys, "fleet", "run", job, "--all", "--yes")
        assert code == 2
        assert err == (f"s3memory: error: {job} runs on an explicit list of agents only: "
                       "pass --agents FILE (never --all)\n")  # fmt: skip
    assert len(memory(env, "agent-0000")) == 1


def test_the_stepfunctions_engine_names_the_state_machine_it_needs(env: Any, capsys: Any) -> None:
    env.put_object(Bucket=BUCKET, Key="agents/agent-0000/f0.md", Body=b"x")
    code, _, err = run(capsys, "fleet", "run", "verify", "--all", "--engine", "stepfunctions")
    assert code == 2
    assert err == ("s3memory: error: --engine stepfunctions needs the state machine: --state-machine ARN or "
                   "S3MEMORY_FLEET_STATE_MACHINE (the Terraform module's fleet state machine)\n")  # fmt: skip


def test_the_stepfunctions_engine_needs_the_fleets_results_location(
    env: Any, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default results location is in the memory bucket, where no fleet worker may write."""
    env.put_object(Bucket=BUCKET, Key="agents/agent-0000/f0.md", Body=b"x")
    monkeypatch.setenv("S3MEMORY_FLEET_STATE_MACHINE", "arn:aws:states:us-east-1:123456789012:stateMachine:m")
    code, _, err = run(capsys, "fleet", "run", "verify", "--all", "--engine", "stepfunctions")
    assert code == 2
    assert err == ("s3memory: error: --engine stepfunctions needs the fleet's results location: --results or "
                   "S3MEMORY_FLEET_RESULTS (the Terraform module's `fleet_environment` output; its workers may "
                   "write only there)\n")  # fmt: skip
    listed = env.list_objects_v2(Bucket=BUCKET)["Contents"]
    assert [o["Key"] for o in listed] == ["agents/agent-0000/f0.md"]  # refused before anything was written


def test_a_state_machine_run_gets_its_items_as_one_json_array(env: Any, results: str) -> None:
    """The state machine's ItemReader reads `InputType: JSON`; the JSONL record stays beside it."""
    from s3memory.fleet.results import Item, Location

    where = Location(results, "runs/")
    items = [Item("agent-0001", "agent"), Item("s1", "store")]
    key = manifest.write(env, where, "r1", items, array=True)
    assert key == "runs/r1/manifest.json"
    body = env.get_object(Bucket=results, Key=key)["Body"].read()
    assert json.loads(body) == [{"id": "agent-0001", "kind": "agent"}, {"id": "s1", "kind": "store"}]
    assert manifest.read(env, where, "r1") == items
    assert manifest.write(env, where, "r2", items) == "runs/r2/manifest.jsonl"


def test_a_destructive_fleet_job_without_a_terminal_needs_yes(env: Any, capsys: Any, tmp_path: Path) -> None:
    env.put_object(Bucket=BUCKET, Key="agents/agent-0000/f0.md", Body=b"x")
    listed = tmp_path / "agents.txt"
    listed.write_text("agent-0000\n", encoding="utf-8")
    code, _, err = run(capsys, "fleet", "run", "purge", "--agents", str(listed))
    assert code == 2
    assert err == ("s3memory: error: fleet purge asks for the bucket name to be typed, but stdin is not a terminal; "
                   "pass --yes\n")  # fmt: skip
    assert memory(env, "agent-0000") == ["f0.md"]
