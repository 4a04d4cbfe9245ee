"""Safe by default (issue 23, item 1): commands that delete or rewrite ask first, ages say their
unit, and every command that changes state has a --dry-run that makes no write request.

Write requests are counted on the CLI's own clients (`tests.support.cli.count_writes`).
"""

from __future__ import annotations

import io
import sys
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from s3memory.admin.prune import parse_age
from tests.support import BUCKET, ok
from tests.support.cli import Writes, count_writes, run


class TTYInput(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def writes() -> Writes:
    return count_writes()


@pytest.fixture
def ann(env: Any, make_tool: Any) -> Any:
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/notes.md", file_text="one\n")
    ok(tool, command="create", path="/memories/dir/b.md", file_text="two\n")
    return env


def stored(s3: Any, prefix: str = "agents/") -> list[tuple[str, str]]:
    return sorted((o["Key"], o["ETag"]) for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", []))


# --- ages ------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--older-than", "--not-accessed-for"])
def test_m_alone_is_refused_naming_both_readings(capsys, env, writes, flag):
    assert run(capsys, "prune", "--agent", "ann", flag, "6m", "--yes") == (
        2, "",
        f"s3memory: error: {flag}: ambiguous age '6m': m could mean minutes or months; write 6min for minutes, "
        "or days or weeks for months (e.g. 180d or 26w for six months)\n",
    )  # fmt: skip
    assert writes.seen == []


@pytest.mark.parametrize(
    ("text", "age"),
    [("30min", timedelta(minutes=30)), ("12h", timedelta(hours=12)), ("90d", timedelta(days=90)),
     ("2w", timedelta(weeks=2))],
)  # fmt: skip
def test_ages_in_min_h_d_and_w(text, age):
    assert parse_age(text) == age


def test_an_age_without_a_known_unit_lists_the_units(capsys, env):
    assert run(capsys, "prune", "--agent", "ann", "--older-than", "6mo", "--yes") == (
        2, "",
        "s3memory: error: --older-than: invalid age '6mo': use a number followed by min, h, d or w, "
        "e.g. 90d, 2w, 12h or 30min (a whole number, 1 or more)\n",
    )  # fmt: skip


# --- asking first ----------------------------------------------------------------------

REFUSED = "asks for the agent id to be typed again, but stdin is not a terminal; pass --yes"


@pytest.mark.parametrize(
    ("verb", "argv"),
    [
        ("prune", ["prune", "--agent", "ann", "--older-than", "1min"]),
        ("restore", ["restore", "--agent", "ann", "--at", "2020-01-01T00:00:00Z"]),
        ("migrate", ["migrate", "--agent", "ann", "--names", "encrypted"]),
        ("reseal", ["reseal", "--agent", "ann"]),
        ("rewrap", ["rewrap", "--agent", "ann", "--to-key", "alias/other"]),
        ("rewrap", ["rewrap", "--to-key", "alias/other"]),
        ("import --overwrite", ["import", "--agent", "ann", "SRC", "--overwrite"]),
    ],
)
def test_every_command_that_deletes_or_rewrites_asks_first(capsys, ann, writes, tmp_path, verb, argv):
    (tmp_path / "notes.md").write_text("replaced\n")
    argv = [str(tmp_path) if a == "SRC" else a for a in argv]
    before = stored(ann)
    assert run(capsys, *argv) == (2, "", f"s3memory: error: {verb} {REFUSED}\n")
    assert writes.seen == []
    assert stored(ann) == before


@pytest.mark.moto_only  # back-dates objects through moto's clock
def test_prune_asks_for_the_agent_id_after_saying_what_it_deletes(capsys, env, make_tool, writes, monkeypatch):
    tool = make_tool("ann")
    past = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(days=100)
    with monkeypatch.context() as m:
        m.setattr("moto.s3.models.utcnow", lambda: past)
        ok(tool, command="create", path="/memories/old.md", file_text="old")
    ok(tool, command="create", path="/memories/new.md", file_text="new")
    before = stored(env)
    monkeypatch.setattr(sys, "stdin", TTYInput("an\n"))
    code, out, err = run(capsys, "prune", "--agent", "ann", "--older-than", "90d", "-q")
    assert (code, out) == (1, "")
    assert err.startswith("This deletes 1 file of agent ann (--older-than 90d: not modified since ")
    assert err.endswith(
        " UTC).\nType the agent id (ann) to confirm: "
        "s3memory: error: prune cancelled: the typed id does not match; nothing was deleted\n"
    )
    assert writes.seen == []
    assert stored(env) == before
    monkeypatch.setattr(sys, "stdin", TTYInput("ann\n"))
    code, out, _ = run(capsys, "prune", "--agent", "ann", "--older-than", "90d", "-q")
    assert code == 0
    assert out.startswith("deleted /memories/old.md (last modified ")
    assert [op for op, _ in writes.seen] == ["DeleteObjects"]


@pytest.mark.parametrize(
    ("argv", "typed", "message"),
    [
        (["migrate", "--agent", "ann", "--names", "encrypted"], "Type the agent id (ann)",
         "migrate cancelled: the typed id does not match; nothing was changed"),
        (["reseal", "--agent", "ann"], "Type the agent id (ann)",
         "reseal cancelled: the typed id does not match; nothing was changed"),
        (["rewrap", "--to-key", "alias/other"], "Type the bucket name ({bucket})",
         "rewrap cancelled: the typed name does not match; nothing was changed"),
    ],
)  # fmt: skip
def test_a_wrong_answer_changes_nothing(capsys, ann, writes, monkeypatch, argv, typed, message):
    before = stored(ann)
    monkeypatch.setattr(sys, "stdin", TTYInput("nope\n"))
    code, out, err = run(capsys, *argv, "-q")
    assert (code, out) == (1, "")
    typed = typed.format(bucket=BUCKET)  # each xdist worker has its own bucket: not part of the test's id
    assert err.endswith(f"\n{typed} to confirm: s3memory: error: {message}\n")
    assert writes.seen == []
    assert stored(ann) == before


def test_import_overwrite_asks_but_a_plain_import_does_not(capsys, ann, writes, monkeypatch, tmp_path):
    (tmp_path / "notes.md").write_text("replaced\n")
    (tmp_path / "new.md").write_text("new\n")
    monkeypatch.setattr(sys, "stdin", TTYInput("ann\n"))
    code, out, err = run(capsys, "import", "--agent", "ann", str(tmp_path), "--overwrite", "-q")
    assert code == 0
    assert err == (
        f"This replaces every file of agent ann that {tmp_path} also holds (in a versioned bucket the old versions "
        "stay).\nType the agent id (ann) to confirm: "
    )
    assert "overwrote /memories/notes.md (9 bytes)" in out
    code, _, err = run(capsys, "import", "--agent", "ann", str(tmp_path), "-q")  # creates only: no question
    assert (code, err) == (0, "")


# --- dry runs --------------------------------------------------------------------------


def test_migrate_dry_run_lists_the_moves_and_writes_nothing(capsys, ann, writes):
    before = stored(ann)
    assert run(capsys, "migrate", "--agent", "ann", "--names", "encrypted", "--dry-run") == (
        0,
        "would move /memories/dir/b.md\nwould move /memories/notes.md\n"
        "would move 2 files of agent ann to encrypted names (0 already stored encrypted); "
        "nothing was changed (--dry-run)\n",
        "",
    )
    assert writes.seen == []
    assert stored(ann) == before  # no name key, no mode entry either


def test_reseal_dry_run_counts_and_writes_nothing(capsys, ann, writes):
    before = stored(ann)
    code, out, err = run(capsys, "reseal", "--agent", "ann", "--dry-run")
    assert (code, err) == (0, "")
    assert out.startswith("would reseal 0 objects of agent ann under branch key ")
    assert out.endswith(" (2 already); nothing was changed (--dry-run)\n")
    assert writes.seen == []
    assert stored(ann) == before


def test_rotate_dry_run_names_the_next_generation_and_writes_nothing(capsys, ann, writes):
    before = stored(ann)
    code, out, err = run(capsys, "rotate", "--agent", "ann", "--dry-run")
    assert (code, err) == (0, "")
    assert out.startswith("ann: would make branch key generation 2 active (now ")
    assert out.endswith(")\nwould rotate 1 agent; nothing was changed (--dry-run)\n")
    assert writes.seen == []
    assert stored(ann) == before


def test_rewrap_dry_run_lists_the_keys_and_writes_nothing(capsys, ann, writes, make_tool):
    ok(make_tool("bob"), command="create", path="/memories/x.md", file_text="x\n")
    before = stored(ann)
    assert run(capsys, "rewrap", "--to-key", "alias/other", "--dry-run") == (
        0,
        "would rewrap 1 branch key of agent ann under alias/other\n"
        "would rewrap 1 branch key of agent bob under alias/other\n"
        "would rewrap up to 2 branch keys of 2 agents; keys already under alias/other stay as they are; "
        "nothing was changed (--dry-run)\n",
        "",
    )
    assert writes.seen == []
    assert stored(ann) == before
