"""Last access as an object tag (opt-in), and prune by it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from s3memory.admin.prune import prune
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.store import ObjectStore
from tests.support import BUCKET, CallCounter, ok
from tests.support.views import NoProgress

KEY = "agents/agent-42/a.md"


def tags(s3: Any, key: str = KEY) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in s3.get_object_tagging(Bucket=BUCKET, Key=key)["TagSet"]}


def today() -> str:
    return datetime.now(timezone.utc).date().isoformat()


def test_off_by_default_no_tag_and_no_request(make_tool: Any, s3: Any, counter: CallCounter) -> None:
    tool = make_tool()
    ok(tool, command="create", path="/memories/a.md", file_text="x")
    ok(make_tool(), command="view", path="/memories/a.md")
    assert tags(s3) == {}
    assert "s3:PutObjectTagging" not in counter.by_op()


def test_writes_carry_the_tag_and_a_read_sets_it_once_a_day(make_tool: Any, s3: Any) -> None:
    sent: list[Any] = []
    s3.meta.events.register(
        "before-parameter-build.s3.PutObject", lambda params, **_: sent.append(params.get("Tagging"))
    )
    writer = make_tool(track_access=True)
    ok(writer, command="create", path="/memories/a.md", file_text="x")
    assert sent[-1] == f"s3memory-accessed={today()}"  # with the PutObject: no request of its own
    assert all(t is None for t in sent[:-1])  # the keystore's objects carry no tag
    counter = CallCounter(s3)
    ok(writer, command="view", path="/memories/a.md")
    assert "s3:PutObjectTagging" not in counter.by_op()  # written today already
    s3.put_object_tagging(
        Bucket=BUCKET, Key=KEY, Tagging={"TagSet": [{"Key": "s3memory-accessed", "Value": "2000-01-01"}]}
    )
    counter.reset()
    reader = make_tool(track_access=True)  # another process
    ok(reader, command="view", path="/memories/a.md")
    ok(reader, command="view", path="/memories/a.md")
    reader.close()  # waits for the background request
    assert counter.by_op().get("s3:PutObjectTagging") == 1
    assert tags(s3) == {"s3memory-accessed": today()}


def test_prune_by_access_keeps_what_was_used_since_the_cutoff(make_tool: Any, s3: Any) -> None:
    tool = make_tool()
    for name in ("used", "stale", "untagged"):
        ok(tool, command="create", path=f"/memories/{name}.md", file_text=name)
    for name, day in (("used", "2999-01-01"), ("stale", "2000-01-01")):
        tag = {"TagSet": [{"Key": "s3memory-accessed", "Value": day}]}
        s3.put_object_tagging(Bucket=BUCKET, Key=f"agents/agent-42/{name}.md", Tagging=tag)
    cutoff = datetime.now(timezone.utc) + timedelta(days=1)  # every file was modified before it
    store, space = ObjectStore(s3, BUCKET), AgentKeyspace("agents/", "agent-42")
    with Pool(4) as pool:
        by_write = prune(store, space, pool, cutoff, NoProgress(), dry_run=True)
        by_use = prune(store, space, pool, cutoff, NoProgress(), dry_run=True, by_access=True)
        done = prune(store, space, pool, cutoff, NoProgress(), dry_run=False, by_access=True)
    assert [p.path for p in by_write.candidates] == ["/memories/stale.md", "/memories/untagged.md", "/memories/used.md"]
    assert [p.path for p in by_use.candidates] == ["/memories/stale.md", "/memories/untagged.md"]
    assert (done.deleted, done.problems) == (2, [])
    assert ok(make_tool(), command="view", path="/memories/used.md").endswith("1\tused")


def test_cli_prune_not_accessed_for(capsys: Any, env: Any, make_tool: Any) -> None:
    from tests.support.cli import run

    ok(make_tool("ann", track_access=True), command="create", path="/memories/a.md", file_text="x")
    code, out, _ = run(capsys, "prune", "--agent", "ann", "--not-accessed-for", "1d", "--dry-run")
    assert code == 0
    assert out.startswith("would prune 0 objects, 0 bytes in ")
    assert "(not read or modified since " in out
    code, _, error = run(capsys, "prune", "--agent", "ann", "--not-accessed-for", "1d", "--older-than", "1d")
    assert code == 2
    assert "not allowed with argument" in error
    code, _, error = run(capsys, "prune", "--agent", "ann", "--not-accessed-for", "soon")
    assert code == 2
    assert "--not-accessed-for: invalid age 'soon'" in error
