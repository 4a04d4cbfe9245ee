"""The fleet worker Lambda's handler (issue 33): small results without paths, contents or secrets;
each finished agent skipped by a rerun; the deadline checked per agent; a failed batch raised as
`FleetBatchFailed` after the others' results are written."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from s3memory.fleet import worker
from s3memory.fleet.jobs import JOBS, InvalidJob, check
from s3memory.fleet.runtime import Runtime, load_settings
from tests.support import BUCKET, ok

SECRET_TEXT = "the customer's card ends 4242"


class Clock:
    """A Lambda context whose remaining time is read from a list, one value per agent."""

    def __init__(self, *millis: int) -> None:
        self.millis = list(millis)

    def get_remaining_time_in_millis(self) -> int:
        return self.millis.pop(0)


@pytest.fixture
def rt(env: Any) -> Any:
    worker._RUNTIME[:] = [Runtime.build(load_settings())]
    yield worker._RUNTIME[0]
    worker._RUNTIME[0].close()
    worker._RUNTIME.clear()


def event(job: str, *agents: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    batch = {"job": job, "options": options or {}, "run_id": "run-1", "results": {"bucket": BUCKET, "prefix": "r/"}}
    return {"BatchInput": batch, "Items": [{"id": a, "kind": "agent"} for a in agents]}


def test_verify_results_hold_counts_and_codes_never_paths_or_contents(rt: Any, env: Any, new_tool: Any) -> None:
    for agent in ("ann", "bob"):
        ok(new_tool(agent), command="create", path="/memories/private/secret-plans.md", file_text=SECRET_TEXT)
    env.put_object(Bucket=BUCKET, Key="agents/bob/private/forged-notes.md", Body=b"not sealed")
    with pytest.raises(worker.FleetBatchFailed) as failed:
        worker.lambda_handler(event("verify", "ann", "bob"), Clock(600_000, 600_000))
    results = json.loads(str(failed.value))["results"]
    assert [(r["id"], r["outcome"], r["reason"]) for r in results] == [("ann", "ok", ""), ("bob", "failed",
                                                                        "objects_failed")]  # fmt: skip
    assert results[0]["counts"]["verified"] == 1  # its one file
    assert results[1]["counts"]["failed"] == 1
    stored = [env.get_object(Bucket=BUCKET, Key=k)["Body"].read().decode() for k in ("r/run-1/done/agent/ann",
              "r/run-1/failed/agent/bob")]  # fmt: skip
    for text in [str(failed.value), *stored]:
        for secret in ("secret-plans", "forged-notes", "private", "/memories", "agents/", SECRET_TEXT):
            assert secret not in text


def test_a_rerun_skips_what_is_done_and_the_deadline_is_checked_per_agent(rt: Any, env: Any) -> None:
    for agent in ("a1", "a2", "a3"):
        env.put_object(Bucket=BUCKET, Key=f"agents/{agent}/notes.md", Body=b"x")
    prune = {"older_than": "1d", "dry_run": True}
    with pytest.raises(worker.FleetBatchFailed) as failed:  # 40 s left for a1, then 20 s: below the reserve
        worker.lambda_handler(event("prune", "a1", "a2", "a3", options=prune), Clock(40_000, 20_000, 20_000))
    outcomes = [(r["id"], r["outcome"], r["reason"]) for r in json.loads(str(failed.value))["results"]]
    assert outcomes == [("a1", "dry_run", ""), ("a2", "deadline", "deadline"), ("a3", "deadline", "deadline")]
    answer = worker.lambda_handler(event("prune", "a1", "a2", "a3", options=prune), Clock(600_000, 600_000))
    assert [(r["id"], r["outcome"]) for r in answer["results"]] == [("a1", "skipped"), ("a2", "dry_run"),
                                                                   ("a3", "dry_run")]  # fmt: skip
    assert answer["results"][0]["previous"] == "dry_run"


def test_a_malformed_batch_is_refused_with_what_is_wrong(rt: Any) -> None:
    with pytest.raises(worker.FleetInputError) as refused:
        worker.lambda_handler(event("prune", "a1", options={"older_than": "6m"}), Clock())
    assert str(refused.value).startswith("not a fleet batch: --older-than: ambiguous age '6m'")


def test_list_agents_writes_the_runs_manifest_with_one_list(rt: Any, env: Any) -> None:
    """The state machine's ListAgents request (a scheduled start has no manifest), in the package."""
    for agent in ("bob", "ann", "carl"):
        env.put_object(Bucket=BUCKET, Key=f"agents/{agent}/notes.md", Body=b"x")
    calls: list[str] = []
    rt.s3.meta.events.register("before-call.s3.*", lambda model, **_: calls.append(model.name))
    request = {"run_id": "sched-1", "stores": False, "results": {"bucket": BUCKET, "prefix": "r/"}}
    answer = worker.lambda_handler({"ListAgents": request}, None)
    assert answer == {"bucket": BUCKET, "key": "r/sched-1/manifest.json", "count": 3}
    assert calls == ["ListObjectsV2", "PutObject"]  # one LIST for the agents, the manifest's PUT
    body = env.get_object(Bucket=BUCKET, Key="r/sched-1/manifest.json")["Body"].read()
    assert json.loads(body) == [{"id": a, "kind": "agent"} for a in ("ann", "bob", "carl")]
    for bad in ({**request, "run_id": "a/b"}, {**request, "stores": "yes"}):
        with pytest.raises(worker.FleetInputError) as refused:
            worker.lambda_handler({"ListAgents": bad}, None)
        assert str(refused.value) == "not a ListAgents request: run_id is a name without '/', stores true or false"
    with pytest.raises(worker.FleetInputError) as refused:
        worker.lambda_handler({"ListAgents": {"run_id": "r"}}, None)
    assert str(refused.value) == "not a ListAgents request: 'results'"


def test_the_job_table() -> None:
    assert {n: (j.role, j.dry_run_role, j.destructive, j.explicit_agents) for n, j in JOBS.items()} == {
        "prune": ("prune", "inspect", True, False),
        "verify": ("audit", None, False, False),
        "rotate": ("keys", None, False, False),
        "rewrap": ("keys", None, True, False),
        "reseal": ("keys", None, True, False),
        "shred": ("erase", None, True, True),
        "purge": ("erase", None, True, True),
    }
    assert JOBS["prune"].role_class({"older_than": "1d", "dry_run": True}) == "inspect"
    assert JOBS["prune"].role_class({"older_than": "1d"}) == "prune"
    with pytest.raises(InvalidJob, match=r"^rewrap needs --to-key KEY "):
        check("rewrap", {})
    with pytest.raises(InvalidJob, match=r"^verify takes no option --older-than$"):
        check("verify", {"older_than": "1d"})


def test_the_retention_cost_the_terraform_readme_states_is_what_a_prune_costs(rt: Any, env: Any) -> None:
    """terraform/README's retention cost line, request by request, as the worker sends them (issue 34,
    item 11: it said one LIST per 1,000 objects where 6 LISTs an agent were measured)."""
    readme = (Path(__file__).resolve().parents[2] / "terraform" / "README.md").read_text(encoding="utf-8")
    line = next(row for row in readme.splitlines() if row.startswith("| costs |"))
    stated = re.search(
        r"per agent of (\d+) files with none to prune, ([\d.]+) S3 requests \(the fleet worker in batches of (\d+),"
        r".*?: (\d+) LISTs .*?, (\d+) HEADs .*?, the PUT of its result and a quarter of its batch's LIST",
        line,
    )
    assert stated, line
    files, total, batch, lists, heads = int(stated[1]), float(stated[2]), int(stated[3]), int(stated[4]), int(stated[5])
    agents = [f"cost-{n}" for n in range(batch)]
    for agent in ["warm", *agents]:
        for n in range(files):
            env.put_object(Bucket=BUCKET, Key=f"agents/{agent}/d{n % 5}/note-{n:04d}.md", Body=b"x")
    prune = {"older_than": "90d"}
    worker.lambda_handler(event("prune", "warm", options=prune), Clock(600_000))  # clients and caches warm
    sent: Counter[str] = Counter()
    rt.s3.meta.events.register("before-call.s3", lambda model, **_: sent.update([model.name]))
    answer = worker.lambda_handler(event("prune", *agents, options=prune), Clock(*[600_000] * batch))
    assert [r["outcome"] for r in answer["results"]] == ["ok"] * batch
    assert sent == Counter({"ListObjectsV2": lists * batch + 1, "HeadObject": heads * batch, "PutObject": batch})
    assert sent.total() / batch == total


def test_a_batch_lists_only_the_done_markers_of_its_own_range(s3: Any) -> None:
    """A batch asks which of its agents are done with one LIST whose prefix is what its first and
    last markers share: the page holds that range, not every later agent's marker."""
    from s3memory.fleet.results import Item, Location, done_ids

    for agent in ("a-10", "a-11", "a-12", "a-19", "a-2", "a-20", "b-1"):
        s3.put_object(Bucket=BUCKET, Key=f"r/run-1/done/agent/{agent}", Body=b"{}")
    lists: list[tuple[str, int]] = []
    s3.meta.events.register(
        "after-call.s3.ListObjectsV2", lambda parsed, **_: lists.append((parsed["Prefix"], parsed["KeyCount"]))
    )
    batch = [Item("a-11", "agent"), Item("a-13", "agent"), Item("a-12", "agent")]
    assert done_ids(s3, Location(BUCKET, "r/"), "run-1", batch) == {Item("a-11", "agent"), Item("a-12", "agent")}
    # a-11, a-12 and a-19 (under "a-1", after the range: not read on); not a-10 (StartAfter), a-2, a-20 or b-1
    assert lists == [("r/run-1/done/agent/a-1", 3)]
    one = [Item("b-1", "agent")]
    assert done_ids(s3, Location(BUCKET, "r/"), "run-1", one) == set(one)
    assert lists[1:] == [("r/run-1/done/agent/b-1", 1)]
