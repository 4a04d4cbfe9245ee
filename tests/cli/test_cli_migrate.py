"""`s3memory migrate`: an agent's names converted both ways, crash-safe and resumable, end to end."""

from __future__ import annotations

import re
from typing import Any

import pytest

from s3memory.cli.context import Context
from tests.support import BUCKET, err, listed_keys, memory_keys, ok
from tests.support.cli import CliClients, run

ANN = "agents/ann/"
FILES = {
    "/memories/patients/jane_doe_hiv.md": "private\n",
    "/memories/patients/archive/old.md": "old\n",
    "/memories/notes.md": "notes\n",
}
REFUSED = (
    "Error: This memory stores its file names in another way than this tool is set up for ({}); "
    "nothing was changed. An operator must fix the configuration."
)


def mode_entries(s3: Any) -> list[str]:
    """The agent's name mode claims and entries, each entry's tag shown as `{tag}`."""
    folder = ANN + ".s3memory/keys/"
    names = sorted(k[len(folder) :] for k in listed_keys(s3) if k.startswith(folder + "names."))
    return [re.sub(r"^(names\.[0-9]{8}\.[a-z-]+)\.[A-Za-z0-9_-]{22}$", r"\1.{tag}", n) for n in names]


def seed(make_tool: Any, names: str = "plain") -> None:
    tool = make_tool("ann", names=names)
    for path, text in FILES.items():
        ok(tool, command="create", path=path, file_text=text)


def assert_all_readable(make_tool: Any, names: str) -> None:
    tool = make_tool("ann", names=names)
    for path, text in FILES.items():
        assert ok(tool, command="view", path=path).endswith(f"     1\t{text.rstrip()}")


def test_plain_to_encrypted_and_back(capsys: Any, env: Any, make_tool: Any) -> None:
    seed(make_tool)
    code, out, _ = run(capsys, "migrate", "--yes", "--agent", "ann", "--names", "encrypted", "-q")
    assert code == 0, out
    assert out.splitlines()[0].startswith("moved 3 files in ")
    assert out.splitlines()[0].endswith(" s (0 already stored encrypted)")
    assert (
        out.splitlines()[1]
        == "ann: file names are encrypted; tools of this agent need names='encrypted' (S3MEMORY_NAMES=encrypted)"
    )
    keys = memory_keys(env, ANN)
    assert len(keys) == 3
    assert not any(word in key for key in keys for word in ("patients", "jane", "archive", "old", "notes"))
    assert mode_entries(env) == [  # plain tools record no mode; each migration step is a claim and its entry
        "names.00000002",
        "names.00000002.to-encrypted.{tag}",
        "names.00000003",
        "names.00000003.encrypted.{tag}",
    ]
    assert_all_readable(make_tool, "encrypted")
    assert err(make_tool("ann"), command="view", path="/memories") == REFUSED.format("NamesEncrypted")

    code, out, _ = run(capsys, "migrate", "--yes", "--agent", "ann", "--names", "plain", "-q")
    assert code == 0, out
    assert out.splitlines()[0].startswith("moved 3 files in ")
    assert memory_keys(env, ANN) == sorted(ANN + p.removeprefix("/memories/") for p in FILES)
    assert_all_readable(make_tool, "plain")
    assert err(make_tool("ann", names="encrypted"), command="view", path="/memories") == REFUSED.format("NamesPlain")


@pytest.mark.parametrize(
    ("stored", "configured", "line"),
    [
        (
            "encrypted",
            "plain",
            'this agent stores encrypted file names (NamesEncrypted); set S3MEMORY_NAMES=encrypted (names="encrypted")',
        ),
        (
            "plain",
            "encrypted",
            "this agent stores plain file names (NamesPlain); convert it with `s3memory migrate --agent ID "
            "--names encrypted`; if its names should be encrypted already, objects a bucket writer planted under "
            "it can make it look plain: check it with `s3memory verify --agent ID` first",
        ),
    ],
)
def test_a_command_in_the_other_name_mode_prints_the_fix(
    capsys: Any, env: Any, make_tool: Any, monkeypatch: pytest.MonkeyPatch, stored: str, configured: str, line: str
) -> None:
    """A configuration error with a fix of its own prints that fix (not the generic "check the settings").

    The CLI's commands read an agent in whatever mode it is in; here `ls` runs in a fixed mode, as
    the agent's tools do with S3MEMORY_NAMES, and meets an agent in the other one."""
    seed(make_tool, names=stored)
    vault = Context.vault
    monkeypatch.setattr(
        Context, "vault", lambda self, agent, names="auto", **kw: vault(self, agent, names=configured, **kw)
    )
    assert run(capsys, "ls", "--agent", "ann") == (2, "", f"s3memory: error: {line}\n")


def test_migrating_again_changes_nothing(capsys: Any, env: Any, make_tool: Any) -> None:
    seed(make_tool, names="encrypted")
    before = listed_keys(env)
    code, out, _ = run(capsys, "migrate", "--yes", "--agent", "ann", "--names", "encrypted", "-q")
    assert code == 0, out
    assert out.splitlines()[0].startswith("moved 0 files in ")
    assert out.splitlines()[0].endswith(" s (3 already stored encrypted)")
    assert listed_keys(env) == before


def test_an_interrupted_migration_locks_the_agent_and_resumes(
    capsys: Any, env: Any, make_tool: Any, cli_clients: CliClients
) -> None:
    seed(make_tool)
    deletes: list[str] = []

    def second_delete(params: dict[str, Any]) -> bool:  # the migration stops between a copy and its source's delete
        deletes.append(params["Key"])
        return len(deletes) == 2

    heal = cli_clients.refuse("DeleteObject", "SlowDown", when=second_delete)
    code, out, _ = run(capsys, "migrate", "--yes", "--agent", "ann", "--names", "encrypted", "-q", "--workers", "1")
    assert code == 1
    assert out.splitlines()[0].startswith("failed: ann:/memories/")
    assert out.splitlines()[0].endswith(": S3 DeleteObject failed (SlowDown)")
    heal()
    assert len(memory_keys(env, ANN)) == 4  # two files moved; one copied, its old key not yet deleted
    assert mode_entries(env)[-1] == "names.00000002.to-encrypted.{tag}"
    for names in ("plain", "encrypted"):
        assert err(make_tool("ann", names=names), command="view", path="/memories") == REFUSED.format("NamesMigrating")
    code, _, error = run(capsys, "ls", "--agent", "ann")
    assert code == 2
    assert error == (
        "s3memory: error: the agent's file names are being migrated (NamesMigrating); run `s3memory migrate "
        "--agent ID --names MODE` again to finish (it resumes where it stopped)\n"
    )

    code, out, _ = run(capsys, "migrate", "--yes", "--agent", "ann", "--names", "encrypted", "-q")
    assert code == 0, out
    assert out.splitlines()[0].startswith("moved 1 file in ")  # the copied one only loses its old key
    assert out.splitlines()[0].endswith(" s (3 already stored encrypted)")
    assert len(memory_keys(env, ANN)) == 3
    assert_all_readable(make_tool, "encrypted")


def test_a_file_the_migration_cannot_place_stays_and_keeps_the_agent_locked(
    capsys: Any, env: Any, make_tool: Any
) -> None:
    seed(make_tool)
    env.put_object(Bucket=BUCKET, Key=ANN + "stray/%41.md", Body=b"not ours")  # no memory path maps to it
    code, out, error = run(capsys, "migrate", "--yes", "--agent", "ann", "--names", "encrypted", "-q")
    assert code == 1, error
    assert out.splitlines()[0] == "failed: ann:/memories/stray/%41.md: not a memory path in either mode"
    assert out.splitlines()[-1] == (
        "ann: the migration is not finished; tools refuse the agent until `s3memory migrate` completes it"
    )
    assert ANN + "stray/%41.md" in listed_keys(env)
    assert mode_entries(env)[-1] == "names.00000002.to-encrypted.{tag}"


def test_an_agent_with_an_interrupted_directory_change_is_refused(capsys: Any, env: Any, make_tool: Any) -> None:
    seed(make_tool)
    env.put_object(Bucket=BUCKET, Key=ANN + ".s3memory/intents/" + "0" * 32, Body=b"x")
    code, _, error = run(capsys, "migrate", "--yes", "--agent", "ann", "--names", "encrypted", "-q")
    assert code == 1
    assert error == "s3memory: error: agent ann has interrupted directory changes; run s3memory repair first\n"
    assert mode_entries(env) == []


def test_restore_does_not_go_back_past_a_migration(capsys: Any, versioned: Any, make_tool: Any) -> None:
    """Versions from before a migration are stored under the old names: a restore to a time before
    it would see every file as new since, and delete it. It is refused instead, changing nothing."""
    import time
    from datetime import datetime, timedelta, timezone

    seed(make_tool)
    time.sleep(1.1)  # S3 times have whole seconds
    before = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    time.sleep(1.1)
    code, out, _ = run(capsys, "migrate", "--yes", "--agent", "ann", "--names", "encrypted", "-q")
    assert code == 0, out
    keys = listed_keys(versioned)
    claim_key = ANN + ".s3memory/keys/names.00000003"  # the listing's time, as restore reads it
    (claim,) = [
        o for o in versioned.list_objects_v2(Bucket=BUCKET, Prefix=claim_key)["Contents"] if o["Key"] == claim_key
    ]
    stamp = claim["LastModified"].astimezone(timezone.utc)
    whole = stamp.replace(microsecond=0)  # some stores list milliseconds: the message rounds up
    converted = (whole if whole == stamp else whole + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for extra in ((), ("--dry-run",)):
        code, _, error = run(capsys, "restore", "--yes", "--agent", "ann", "--at", before, *extra)
        assert code == 1
        assert error == (
            f"s3memory: error: the file names of agent ann were converted (s3memory migrate) at {converted}; "
            "restore can go back to that time at the earliest: earlier versions are stored under the old names\n"
        )
    assert listed_keys(versioned) == keys  # no restore record, nothing deleted
    assert_all_readable(make_tool, "encrypted")
    code, out, error = run(capsys, "history", "--agent", "ann")
    assert code == 0
    assert error == (
        f"note: the file names of agent ann were converted (s3memory migrate) at "
        f"{converted}; versions from before are stored under the old names and marked (old names)\n"
    )
    # The copies are the migration's (the operator's action); the earlier versions stay listed.
    rows = [(line.split()[1], line.endswith("(old names)")) for line in out.splitlines()[:-1]]
    assert rows == [("migrated", False)] * 3 + [("created", True)] * 3, out
