"""Purge and shred against running tools (issue 22, items 8 and 9): the keystore's `erasing`
entry, the writers' fence, and what arrived meanwhile."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from s3memory.admin.shred import ShredReport, shred
from s3memory.storage.admin_store import AdminStore
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from tests.support import BUCKET, err, listed_keys, ok
from tests.support.cli import CliClients, run
from tests.support.views import NoProgress

ANN = "agents/ann/"
ERASING = (
    "Error: This memory is being erased (AgentErasing); nothing was changed. "
    "An operator must finish erasing it before it can be used again."
)


def test_a_half_finished_shred_answers_being_erased_in_every_name_mode(
    capsys: Any, env: Any, make_tool: Any, cli_clients: CliClients
) -> None:
    """Old code: the encrypted-names tool answered NamesPlain, the plain one listed the encrypted
    names as files."""
    ok(make_tool("ann", names="encrypted"), command="create", path="/memories/secret/a.md", file_text="a\n")

    def objects(params: dict[str, Any]) -> bool:  # the shred stops after the keys
        return any("/.s3memory/keys/" not in o["Key"] for o in params["Delete"]["Objects"])

    heal = cli_clients.refuse("DeleteObjects", "SlowDown", when=objects)
    code, _, _ = run(capsys, "shred", "--agent", "ann", "--yes")
    heal()
    assert code == 1
    assert listed_keys(env, prefix=ANN + ".s3memory/keys/") == [ANN + ".s3memory/keys/erasing"]
    for names in ("plain", "encrypted"):
        fresh = make_tool("ann", names=names)
        assert err(fresh, command="view", path="/memories") == ERASING
        assert err(fresh, command="create", path="/memories/b.md", file_text="b") == ERASING
    code, _, error = run(capsys, "ls", "--agent", "ann")
    assert (code, error) == (
        2,
        "s3memory: error: the agent is being erased (AgentErasing); "
        "run `s3memory shred --agent ID` (or `purge`) again to finish\n",
    )

    code, out, _ = run(capsys, "shred", "--agent", "ann", "--yes")
    assert code == 0, out
    assert listed_keys(env, prefix=ANN) == []
    again = make_tool("ann", names="encrypted")  # the agent id can start anew
    ok(again, command="create", path="/memories/b.md", file_text="b\n")
    assert ok(make_tool("ann", names="encrypted"), command="view", path="/memories/b.md").endswith("1\tb")


def test_a_running_writer_refuses_once_a_shred_began_and_nothing_undecryptable_remains(
    s3: Any, make_tool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Old code: the writer kept acknowledging creates sealed under the destroyed key."""
    from s3memory.storage import keystore_create as keystore_module

    monkeypatch.setattr(keystore_module, "WRITE_FENCE_SECONDS", 0.3)
    writer = make_tool("ann")
    ok(writer, command="create", path="/memories/a.md", file_text="a\n")  # warm: its keystore listing is cached
    store, space = AdminStore(s3, BUCKET), AgentKeyspace("agents/", "ann")
    reports: list[ShredReport] = []

    def shredding() -> None:
        with Pool(2) as pool:
            reports.append(shred(store, store, space, pool, NoProgress(), wait=1.5))

    thread = threading.Thread(target=shredding)
    thread.start()
    deadline = time.monotonic() + 5
    while ANN + ".s3memory/keys/erasing" not in listed_keys(s3, prefix=ANN) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.4)  # the writer's listing is now older than its fence window; the keys still exist
    assert err(writer, command="create", path="/memories/b.md", file_text="b\n") == ERASING
    assert err(writer, command="str_replace", path="/memories/a.md", old_str="a", new_str="c") == ERASING
    thread.join()
    (report,) = reports
    assert report.objects is not None
    assert (report.objects.remaining, report.objects.problems) == (0, [])
    assert listed_keys(s3, prefix=ANN) == []


def test_shred_reports_and_erases_what_arrived_meanwhile_and_fails_while_some_remains(
    capsys: Any, env: Any, make_tool: Any, cli_clients: CliClients
) -> None:
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a\n")
    arrivals = {"left": 1}

    def a_writer_meanwhile(params: dict[str, Any]) -> None:
        if arrivals["left"] and any("/.s3memory/keys/" not in o["Key"] for o in params["Delete"]["Objects"]):
            arrivals["left"] -= 1
            env.put_object(Bucket=BUCKET, Key=ANN + f"late-{arrivals['left']}.md", Body=b"sealed under the old key")

    cli_clients.after("DeleteObjects", a_writer_meanwhile)
    code, out, _ = run(capsys, "shred", "--agent", "ann", "--yes")
    assert code == 0, out
    assert "1 version written meanwhile by a running tool erased too; stop the agent's tools\n" in out
    assert listed_keys(env, prefix=ANN) == []

    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a\n")
    arrivals["left"] = 10  # a writer that never stops
    code, out, error = run(capsys, "shred", "--agent", "ann", "--yes")
    assert code == 1
    assert error.endswith(
        "s3memory: error: 1 version still under the agent's prefix, sealed under the destroyed keys "
        "(undecryptable); stop the agent's tools and run shred again\n"
    )
    assert ANN + ".s3memory/keys/erasing" in listed_keys(env, prefix=ANN)  # tools refuse until it is finished
