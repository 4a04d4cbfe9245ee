"""The writers' fence of purge, shred and migrate (issue 34, item 1): announced at once with its
variable, counted down, called off by Ctrl-C or `repair --abandon` while nothing is destroyed.

The wait is driven without sleeping: `admin.purge._sleep` is replaced by a clock that records
each step and raises KeyboardInterrupt where a test says."""

from __future__ import annotations

from typing import Any

import pytest

from s3memory.admin import purge as purge_module
from tests.support import BUCKET, err, listed_keys, ok
from tests.support.cli import run

ANN = "agents/ann/"
ERASING = ANN + ".s3memory/keys/erasing"


class Clock:
    """Stands in for `time.sleep` in the fence: records the steps; `interrupt_at`: the step (1-based)
    at which Ctrl-C arrives."""

    def __init__(self, interrupt_at: int = 0, during: Any = None) -> None:
        self.steps: list[float] = []
        self.interrupt_at = interrupt_at
        self.during = during  # called at the interrupting step, before the interrupt (another process)

    def __call__(self, seconds: float) -> None:
        self.steps.append(seconds)
        if len(self.steps) == self.interrupt_at:
            if self.during is not None:
                self.during()
            raise KeyboardInterrupt


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Any:
    def make(seconds: str, **kwargs: Any) -> Clock:
        monkeypatch.setenv("S3MEMORY_FENCE_SECONDS", seconds)
        fake = Clock(**kwargs)
        monkeypatch.setattr(purge_module, "_sleep", fake)
        return fake

    return make


def files(s3: Any) -> list[str]:
    return [k for k in listed_keys(s3, prefix=ANN) if "/.s3memory/" not in k]


def test_purge_names_the_wait_at_once_counts_it_down_and_then_erases(
    capsys: Any, env: Any, make_tool: Any, clock: Any
) -> None:
    """Old code: 90 s of silence (one sleep), nothing on stderr about it."""
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a\n")
    fake = clock("25")
    code, _out, error = run(capsys, "purge", "--agent", "ann", "--yes")
    assert code == 0, error
    assert fake.steps == [1.0] * 25
    assert error.splitlines() == [
        "purge: waiting 25 s (S3MEMORY_FENCE_SECONDS) for the agent's running tools to see the erase and stop "
        "writing; Ctrl-C during the wait leaves the agent as it was",
        "purge: S3MEMORY_FENCE_SECONDS=25 is shorter than the 60 s within which running tools re-read the "
        "keystore: a tool running now may still write for up to 60 s; stop the agent's tools first",
        "purge: 20 s left of the wait",
        "purge: 10 s left of the wait",
        "purge: 1/3",
        "purge: 2/3",
        "purge: 3/3",
    ]
    assert listed_keys(env, prefix=ANN) == []


def test_ctrl_c_during_the_wait_leaves_the_agent_exactly_as_it_was(
    capsys: Any, env: Any, make_tool: Any, clock: Any
) -> None:
    """Old code: the `erasing` entry stayed, and every tool answered AgentErasing."""
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="a\n")
    before = listed_keys(env, prefix=ANN)
    clock("90", interrupt_at=3)
    code, _out, error = run(capsys, "purge", "--agent", "ann", "--yes")
    assert code == 130
    assert error.splitlines()[-1] == (
        "s3memory: error: interrupted during the wait; nothing was erased, agent ann is as it was"
    )
    assert listed_keys(env, prefix=ANN) == before
    assert ok(make_tool("ann"), command="view", path="/memories/a.md").endswith("1\ta")
    ok(tool, command="create", path="/memories/b.md", file_text="b\n")


def test_ctrl_c_during_the_wait_of_shred_keeps_every_key(capsys: Any, env: Any, make_tool: Any, clock: Any) -> None:
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a\n")
    before = listed_keys(env, prefix=ANN)
    clock("90", interrupt_at=1)
    code, _, error = run(capsys, "shred", "--agent", "ann", "--yes")
    assert (code, error.splitlines()[-1]) == (
        130,
        "s3memory: error: interrupted during the wait; nothing was erased, agent ann is as it was",
    )
    assert listed_keys(env, prefix=ANN) == before
    assert ok(make_tool("ann"), command="view", path="/memories/a.md").endswith("1\ta")


def test_repair_abandon_calls_off_an_erase_that_destroyed_nothing(capsys: Any, env: Any, make_tool: Any) -> None:
    """A purge killed during its wait (no Ctrl-C handler ran: the entry stays) is called off by
    `repair --abandon`; old code had no way to, and every tool answered AgentErasing."""
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a\n")
    env.put_object(Bucket=BUCKET, Key=ERASING, Body=purge_module.FENCE)  # what a purge killed in its wait leaves
    assert ERASING in listed_keys(env, prefix=ANN)
    assert err(make_tool("ann"), command="view", path="/memories").startswith("Error: This memory is being erased")

    code, out, error = run(capsys, "repair", "--agent", "ann", "--abandon")
    assert code == 0, error
    assert out.splitlines()[0] == "called off the erase of agent ann: it had deleted nothing; the agent is as it was"
    assert ERASING not in listed_keys(env, prefix=ANN)
    assert ok(make_tool("ann"), command="view", path="/memories/a.md").endswith("1\ta")


def test_an_erase_called_off_during_the_wait_deletes_nothing(capsys: Any, env: Any, make_tool: Any, clock: Any) -> None:
    """`repair --abandon` from another terminal while purge waits: purge then stops, deleting nothing."""
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a\n")
    before = listed_keys(env, prefix=ANN)
    fake = clock("3")

    def abandon_elsewhere(seconds: float) -> None:
        fake.steps.append(seconds)
        if len(fake.steps) == 2:
            code, _, error = run(capsys, "repair", "--agent", "ann", "--abandon")
            assert code == 0, error

    purge_module._sleep = abandon_elsewhere  # type: ignore[assignment]
    code, _, error = run(capsys, "purge", "--agent", "ann", "--yes")
    assert (code, error.splitlines()[-1]) == (
        1,
        "s3memory: error: the erase of agent ann was called off during the wait (s3memory repair --abandon); "
        "nothing was deleted",
    )
    assert listed_keys(env, prefix=ANN) == before


def test_repair_abandon_refuses_an_erase_that_began_destroying(capsys: Any, env: Any, make_tool: Any) -> None:
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a\n")
    env.put_object(Bucket=BUCKET, Key=ERASING, Body=b"")  # an entry from before the stages: destroying
    code, _, error = run(capsys, "repair", "--agent", "ann", "--abandon")
    assert (code, error) == (
        1,
        "s3memory: error: the erase of agent ann already deleted part of it and cannot be called off; "
        "run `s3memory shred` (or `purge`) again to finish it\n",
    )
    assert ERASING in listed_keys(env, prefix=ANN)


def test_ctrl_c_during_the_wait_of_migrate_keeps_the_names_as_they_were(
    capsys: Any, env: Any, make_tool: Any, clock: Any
) -> None:
    """Old code: the agent stayed `to-encrypted` and every tool answered NamesMigrating."""
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a\n")
    clock("90", interrupt_at=2)
    code, _, error = run(capsys, "migrate", "--agent", "ann", "--names", "encrypted", "--yes")
    assert (code, error.splitlines()[-1]) == (
        130,
        "s3memory: error: interrupted during the wait; nothing was moved, the names of agent ann stay plain",
    )
    assert files(env) == [ANN + "a.md"]
    assert ok(make_tool("ann"), command="view", path="/memories/a.md").endswith("1\ta")
    ok(make_tool("ann"), command="create", path="/memories/b.md", file_text="b\n")


def test_purge_help_says_it_waits_and_how_to_call_it_off(capsys: Any) -> None:
    code, out, _ = run(capsys, "purge", "--help")
    assert code == 0
    assert "Before it deletes anything it waits S3MEMORY_FENCE_SECONDS (default 90 s) for" in out
    assert "`s3memory repair --agent ID --abandon`" in out


def test_purge_run_again_after_a_stopped_erase_says_so_in_one_path_style(capsys: Any, env: Any, make_tool: Any) -> None:
    """Old code: a note suggesting `shred`, and `/memories/.s3memory/keys/...` next to `agents/ann/a.md`."""
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="a\n")
    env.put_object(Bucket=BUCKET, Key=ERASING, Body=b"")  # a purge that stopped after it began deleting
    code, out, error = run(capsys, "purge", "--agent", "ann", "--yes")
    assert code == 0, error
    assert error.splitlines()[0] == (
        "note: the file names of agent ann are shown as stored keys: an earlier purge or shred of it stopped "
        "part-way (its keys may be gone)"
    )
    deleted = [line.removeprefix("deleted ") for line in out.splitlines() if line.startswith("deleted ")]
    assert len(deleted) == 3
    assert [line.startswith(ANN) for line in deleted] == [True, True, True]
