"""A write racing `s3memory migrate` (issue 22, item 5): resolved by the sealed change time, and
tools with a stale view of the mode fenced off before anything moves."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from s3memory import LocalKeys
from s3memory.admin.migrate import MigrateReport, migrate
from s3memory.core.names import NameMode
from s3memory.core.options import AgentOptions
from s3memory.storage.concurrency import Pool
from s3memory.storage.session import open_vault
from s3memory.storage.store import ObjectStore
from tests.support import BUCKET, LOCAL_KEY, err, listed_keys, memory_keys, ok
from tests.support.cli import CliClients, run
from tests.support.views import NoProgress

ANN = "agents/ann/"
MIGRATING = (
    "Error: This memory stores its file names in another way than this tool is set up for (NamesMigrating); "
    "nothing was changed. An operator must fix the configuration."
)


def test_an_edit_between_the_copy_and_the_delete_is_kept_and_the_agent_not_locked(
    capsys: Any, versioned: Any, make_tool: Any, cli_clients: CliClients
) -> None:
    """Old code: `it was written while it was being moved`, then every rerun failed with `both of
    its names hold a file, with different content` and every tool answered NamesMigrating."""
    stale = make_tool("ann")  # plain names, its keystore listing cached from its own writes
    ok(stale, command="create", path="/memories/a.md", file_text="v1\n")
    time.sleep(1.1)  # the sealed change time has whole seconds: the edit is newer than the copy
    raced: list[str] = []

    def edit_before_the_delete(params: dict[str, Any]) -> None:
        if params["Key"] == ANN + "a.md" and not raced:
            raced.append(params["Key"])  # the copy exists; a tool that has not seen the migration edits the old key
            ok(stale, command="str_replace", path="/memories/a.md", old_str="v1", new_str="v2")

    cli_clients.before("DeleteObject", edit_before_the_delete)
    code, out, _ = run(capsys, "migrate", "--agent", "ann", "--names", "encrypted", "--yes", "-q")
    assert raced
    assert code == 0, out
    assert (
        out.splitlines()[0]
        == "1 file written at both names meanwhile: the newer copy kept, the older one a prior version"
    )
    assert out.splitlines()[1].startswith("moved 1 file in ")
    assert ok(make_tool("ann", names="encrypted"), command="view", path="/memories/a.md").endswith("1\tv2")
    (key,) = memory_keys(versioned, ANN)
    versions = versioned.list_object_versions(Bucket=BUCKET, Prefix=key)["Versions"]
    assert len(versions) == 2  # the copy of v1 stays a prior version of the new key
    assert ANN + "a.md" not in listed_keys(versioned)


def test_a_tool_with_a_stale_view_refuses_once_the_migration_began(
    s3: Any, make_tool: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Old code: a tool with a cached listing kept creating files under plain names after the claim."""
    from s3memory.storage import keystore_create as keystore_module

    monkeypatch.setattr(keystore_module, "WRITE_FENCE_SECONDS", 0.3)
    stale = make_tool("ann")
    ok(stale, command="create", path="/memories/a.md", file_text="a\n")
    vault = open_vault(ObjectStore(s3, BUCKET), LocalKeys(LOCAL_KEY), "ann", AgentOptions(prefix="agents/"), names=None)
    reports: list[MigrateReport] = []

    def migrating() -> None:
        with Pool(2) as pool:
            reports.append(migrate(vault, NameMode.ENCRYPTED, pool, NoProgress(), wait=1.5))

    thread = threading.Thread(target=migrating)
    thread.start()
    deadline = time.monotonic() + 5
    while not any(".to-encrypted." in k for k in listed_keys(s3, prefix=ANN)) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.4)  # the stale tool's listing is now older than its fence window; nothing moved yet
    assert err(stale, command="create", path="/memories/b.md", file_text="b\n") == MIGRATING
    thread.join()
    (report,) = reports
    assert (report.moved, report.finished) == (1, True)
    assert len(memory_keys(s3, ANN)) == 1
    assert ok(make_tool("ann", names="encrypted"), command="view", path="/memories/a.md").endswith("1\ta")


def test_a_rerun_resolves_both_names_holding_different_content(
    capsys: Any, versioned: Any, make_tool: Any, cli_clients: CliClients
) -> None:
    """The state old code could never leave: a migration stopped between a copy and its delete,
    then a tool with a stale view edited the old key. Old code: every rerun failed with `both of
    its names hold a file, with different content`."""
    stale = make_tool("ann")
    ok(stale, command="create", path="/memories/a.md", file_text="v1\n")
    heal = cli_clients.refuse("DeleteObject", "SlowDown", when=lambda p: True)
    assert run(capsys, "migrate", "--agent", "ann", "--names", "encrypted", "--yes", "-q")[0] == 1
    heal()
    time.sleep(1.1)  # whole seconds in the sealed change time
    ok(stale, command="str_replace", path="/memories/a.md", old_str="v1", new_str="v2")  # within its fence window
    assert len(memory_keys(versioned, ANN)) == 2  # both names, different content

    code, out, _ = run(capsys, "migrate", "--agent", "ann", "--names", "encrypted", "--yes", "-q")
    assert code == 0, out
    assert (
        out.splitlines()[0]
        == "1 file written at both names meanwhile: the newer copy kept, the older one a prior version"
    )
    assert ok(make_tool("ann", names="encrypted"), command="view", path="/memories/a.md").endswith("1\tv2")
    assert len(memory_keys(versioned, ANN)) == 1
