"""The `s3memory` CLI: help, configuration errors, ls / cat / agents / verify, progress and exit codes.

Every command runs in process through `main([...])` against moto; stdout and stderr are
compared exactly.
"""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys

import pytest

from s3memory.cli import main
from s3memory.cli.progress import Progress
from s3memory.core.paths import MemoryPath
from tests.support import BUCKET, branch_of, ok, stock
from tests.support import err as tool_error
from tests.support.cli import LOCAL, ROOT, run, subprocess_env

COMMANDS = [
    "demo", "chat", "ls", "cat", "agents", "stores", "export", "import", "purge", "shred", "rewrap", "rotate", "reseal",
    "retire", "migrate", "verify", "history", "show", "restore", "redact", "repair", "prune", "doctor", "mcp", "fleet",
    "conformance",
]  # fmt: skip


# --- help and imports ------------------------------------------------------------------


def test_help_as_a_subprocess_lists_every_command():
    proc = subprocess.run(
        [sys.executable, "-m", "s3memory.cli", "--help"], capture_output=True, text=True, env=subprocess_env(), cwd=ROOT
    )
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert proc.stdout.startswith("usage: s3memory [-h] [--version] [--log-level LEVEL] COMMAND ...\n")
    for command in COMMANDS:
        assert f"\n    {command} " in proc.stdout
    assert "examples:\n  s3memory demo\n" in proc.stdout
    assert "exit codes: 0 ok, 1 operation failed, 2 usage or configuration error" in proc.stdout


def test_help_imports_neither_boto3_nor_anthropic_and_ls_verify_do_not_import_anthropic():
    code = f"""
import os, sys
os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x", AWS_DEFAULT_REGION="us-east-1")
from s3memory.cli import main
from s3memory.config import Settings
assert main(["--help"]) == 0
print("after help:", sorted(m for m in ("boto3", "botocore", "anthropic") if m in sys.modules))
from moto import mock_aws
import boto3
with mock_aws():
    boto3.client("s3").create_bucket(Bucket="{BUCKET}")
    args = ["--bucket", "{BUCKET}", "--local-key", "{LOCAL}"]
    assert main(["ls", "--agent", "ann", *args]) == 1  # agent ann has no objects
    assert main(["cat", "--agent", "ann", "/memories/x", *args]) == 1
    assert main(["verify", *args]) == 0
    assert main(["agents", *args]) == 0
print("after ls/cat/verify/agents:", "anthropic" in sys.modules)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "after help: []\n" in proc.stdout
    assert proc.stdout.endswith("after ls/cat/verify/agents: False\n")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_subcommand_help_shows_an_example_and_exit_codes(capsys, command):
    code, out, err = run(capsys, command, "--help")
    assert code == 0
    assert err == ""
    assert f"example:\n  s3memory {command}" in out
    assert "\nexit codes: 0 ok" in out


def test_the_registry_names_every_command_and_each_runs_a_real_function():
    import importlib

    from s3memory.cli import COMMANDS as REGISTRY
    from s3memory.cli import build_parser

    parser = build_parser()
    choices = next(a.choices for a in parser._actions if a.dest == "command")
    assert sorted(REGISTRY) == sorted(COMMANDS) == sorted(choices)
    for name, (module, function) in REGISTRY.items():
        run_it = getattr(importlib.import_module(f"s3memory.cli.{module}"), function)
        assert callable(run_it), name


def test_no_command_prints_the_help_on_stderr_as_a_usage_error(capsys):
    from s3memory.cli import build_parser

    for argv in ([], ["--log-level", "INFO"]):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (2, "")
        assert err == build_parser().format_help()
    assert err.startswith("usage: s3memory [-h] [--version] [--log-level LEVEL] COMMAND ...\n")
    assert "\n    purge " in err


# --- configuration errors --------------------------------------------------------------


def test_missing_bucket_names_the_variable_and_the_flag(capsys, s3):
    code, out, err = run(capsys, "ls", "--agent", "ann", "--local-key", LOCAL)
    assert (code, out) == (2, "")
    assert err == "s3memory: error: configuration: S3MEMORY_BUCKET (--bucket) is required\n"


def test_missing_key_source(capsys, s3):
    code, _, err = run(capsys, "verify", "--bucket", BUCKET)
    assert code == 2
    assert err == "s3memory: error: configuration: set exactly one of S3MEMORY_KMS_KEY_ID or S3MEMORY_LOCAL_KEY\n"


def test_bad_local_key_is_reported_without_echoing_it(capsys, s3):
    secret = "c2VjcmV0LXNlY3JldC1zZWNyZXQ="  # valid base64, but 21 bytes
    code, out, err = run(capsys, "verify", "--bucket", BUCKET, "--local-key", secret)
    assert code == 2
    assert err == "s3memory: error: configuration: S3MEMORY_LOCAL_KEY must decode to 32 bytes\n"
    assert secret not in out + err
    code, _, err = run(capsys, "verify", "--bucket", BUCKET, "--local-key", "not base64!")
    assert err == "s3memory: error: configuration: S3MEMORY_LOCAL_KEY must be base64\n"
    assert "not base64!" not in err


def test_bad_prefix_names_the_flag(capsys, env):
    code, _, err = run(capsys, "agents", "--prefix", "agents")
    assert code == 2
    assert err == (
        "s3memory: error: configuration: S3MEMORY_PREFIX (--prefix): "
        'prefix must be "" or end with "/" (and not start with "/"), e.g. "agents/"\n'
    )


def test_a_key_flag_replaces_the_other_key_source_from_the_environment(capsys, env, kms_key, make_tool):
    ok(make_tool("ann", use_kms=True), command="create", path="/memories/k.md", file_text="kms\n")
    code, out, _ = run(capsys, "cat", "--agent", "ann", "/memories/k.md", "--kms-key-id", kms_key)
    assert code == 0
    assert out == "Here's the content of /memories/k.md with line numbers:\n     1\tkms\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["ls", "--agent", "../x"],
            "argument --agent: agent_id must be 1-128 characters of letters, digits, '.', '_' or '-', "
            "starting with a letter or digit",
        ),
        (["verify", "--workers", "0"], "argument --workers: must be a whole number from 1 to 256"),
        (
            ["prune", "--agent", "ann", "--older-than", "soon"],
            "--older-than: invalid age 'soon': use a number followed by min, h, d or w, e.g. 90d, 2w, 12h or 30min "
            "(a whole number, 1 or more)",
        ),
        (["ls"], "one of the arguments --agent --store is required"),
        (["prune", "--agent", "ann"], "one of the arguments --older-than --not-accessed-for is required"),
        (["ls", "--agent", "ann", "--bogus"], "unrecognized arguments: --bogus"),
        (
            ["cat", "--agent", "ann", "/memories/x", "--view-range", "x", "1"],
            "argument --view-range: invalid int value: 'x'",
        ),
        (["export", "--agent", "ann"], "the following arguments are required: --to"),
    ],
)
def test_usage_errors_are_one_line_exit_2(capsys, env, argv, message):
    # One line in the CLI's own form, from the top-level parser and from every subparser alike:
    # no usage block before it, no `s3memory COMMAND: error:` prefix.
    assert run(capsys, *argv) == (2, "", f"s3memory: error: {message}\n")


def test_usage_errors_as_a_subprocess_are_one_line():
    proc = subprocess.run(
        [sys.executable, "-m", "s3memory.cli", "purge", "--yes"], capture_output=True, text=True,
        env=subprocess_env(), cwd=ROOT,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "s3memory: error: one of the arguments --agent --store is required\n"


def test_a_missing_bucket_is_a_configuration_error_naming_the_variable(capsys, env, monkeypatch):
    monkeypatch.setenv("S3MEMORY_BUCKET", "no-such-bucket-here")
    expected = (
        "s3memory: error: the bucket does not exist (NoSuchBucket); "
        "check S3MEMORY_BUCKET (--bucket) and S3MEMORY_REGION (--region)\n"
    )
    for argv in (
        ["agents"],
        ["ls", "--agent", "ann"],
        ["verify", "--agent", "ann"],
        ["prune", "--yes", "--agent", "ann", "--older-than", "1d"],
    ):
        assert run(capsys, *argv) == (2, "", expected), argv


def test_a_transient_storage_failure_is_one_line_exit_1(capsys, env, cli_clients):
    def slow(**_):
        from botocore.exceptions import ClientError

        raise ClientError({"Error": {"Code": "SlowDown"}, "ResponseMetadata": {"HTTPStatusCode": 503}}, "ListObjectsV2")

    cli_clients.hook("before-call.s3.ListObjectsV2", slow)
    code, out, err = run(capsys, "ls", "--agent", "ann")
    assert (code, out) == (1, "")
    assert err == (
        "s3memory: error: Memory storage is unavailable right now (SlowDown); nothing was changed. Try again.\n"
    )


# --- ls / cat --------------------------------------------------------------------------


@pytest.fixture
def stocked(env, make_tool):
    files = {"notes.md": "one\ntwo\nthree\n", "customers/acme.md": "x" * 1536, ".hidden": "h"}
    return stock(make_tool("ann"), files)


def test_ls_prints_exactly_what_view_returns(capsys, stocked):
    expected = ok(stocked, command="view", path="/memories")
    code, out, err = run(capsys, "ls", "--agent", "ann")
    assert (code, err) == (0, "")
    assert out == expected + "\n"
    assert out == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories\n4.0K\t/memories/customers/\n1.5K\t/memories/customers/acme.md\n14B\t/memories/notes.md\n"
    )
    code, out, _ = run(capsys, "ls", "--agent", "ann", "/memories/customers/")
    assert out == ok(stocked, command="view", path="/memories/customers") + "\n"


def test_ls_json(capsys, stocked):
    code, out, err = run(capsys, "ls", "--agent", "ann", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "type": "directory",
        "path": "/memories",
        "entries": [
            {"path": "/memories/customers", "type": "directory", "size": None, "size_shown": "4.0K"},
            {"path": "/memories/customers/acme.md", "type": "file", "size": 1536, "size_shown": "1.5K"},
            {"path": "/memories/notes.md", "type": "file", "size": 14, "size_shown": "14B"},
        ],
    }
    code, out, _ = run(capsys, "ls", "--agent", "ann", "/memories/customers", "--json")
    assert [e["path"] for e in json.loads(out)["entries"]] == ["/memories/customers/acme.md"]
    code, out, _ = run(capsys, "ls", "--agent", "ann", "/memories/notes.md", "--json")
    assert json.loads(out) == {"type": "file", "view": ok(stocked, command="view", path="/memories/notes.md")}


def test_cat_and_view_range(capsys, stocked):
    code, out, _ = run(capsys, "cat", "--agent", "ann", "/memories/notes.md")
    assert (code, out) == (0, ok(stocked, command="view", path="/memories/notes.md") + "\n")
    code, out, _ = run(capsys, "cat", "--agent", "ann", "/memories/notes.md", "--view-range", "2", "-1")
    assert out == "Here's the content of /memories/notes.md with line numbers:\n     2\ttwo\n     3\tthree\n"
    code, out, err = run(capsys, "cat", "--agent", "ann", "/memories/notes.md", "--view-range", "5", "6")
    assert (code, out) == (1, "")
    assert err == (
        "s3memory: error: Invalid `view_range` parameter: [5, 6]. "
        "It should be within the range of lines of the file: [1, 3]\n"
    )


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("3", "1", "--view-range: END (1) is before START (3); use -1 for the end of the file"),
        ("0", "2", "--view-range: START (0) must be 1 or more; the first line is 1"),
        ("2", "0", "--view-range: END (0) must be a line number or -1 for the end of the file"),
        ("1", "-2", "--view-range: END (-2) must be a line number or -1 for the end of the file"),
    ],
)
def test_cat_view_range_no_file_can_satisfy_is_a_usage_error(capsys, stocked, start, end, message):
    code, out, err = run(capsys, "cat", "--agent", "ann", "/memories/notes.md", "--view-range", start, end)
    assert (code, out, err) == (2, "", f"s3memory: error: {message}\n")
    # The tool's own answer to the model is unchanged.
    assert tool_error(stocked, command="view", path="/memories/notes.md", view_range=[3, 1]) == (
        "Error: Invalid `view_range` parameter: [3, 1]. It should be within the range of lines of the file: [1, 3]"
    )


def test_cat_missing_is_exit_1_and_invalid_path_exit_2(capsys, stocked):
    code, out, err = run(capsys, "cat", "--agent", "ann", "/memories/nope.md")
    assert (code, out) == (1, "")
    assert err == "s3memory: error: The path /memories/nope.md does not exist. Please provide a valid path.\n"
    code, out, err = run(capsys, "cat", "--agent", "ann", "/memories/../etc/passwd")
    assert (code, out) == (2, "")
    assert err == "s3memory: error: Invalid path /memories/../etc/passwd: it contains '..'\n"


# --- agents ----------------------------------------------------------------------------


PENDING_NOTE = (
    "note: agent {agent} has interrupted changes, not completed by this command; "
    "`s3memory repair --agent {agent} --dry-run` shows them, without --dry-run completes them\n"
)


def test_agents_table_and_json(capsys, stocked, make_tool, s3):
    ok(make_tool("ann2"), command="create", path="/memories/a.md", file_text="12345")
    make_tool("ann2").memory.vault.write(MemoryPath((".s3memory", "intents", "x")), "{}")  # bookkeeping
    s3.put_object(Bucket=BUCKET, Key="agents/not an agent!/x", Body=b"")
    code, out, err = run(capsys, "agents")
    assert (code, err) == (0, "agents: 1/2\nagents: 2/2\n" + PENDING_NOTE.format(agent="ann2"))  # the record above
    lines = out.splitlines()
    assert lines[:3] == [
        "AGENT    OBJECTS            BYTES",
        "ann            3            1,551",
        "ann2           1                5",
    ]
    assert lines[3].startswith("2 agents, 4 objects, 1,556 bytes in ")
    assert len(lines) == 4
    code, out, err = run(capsys, "agents", "--json", "--quiet")
    assert code == 0
    assert json.loads(out) == [
        {"agent": "ann", "objects": 3, "bytes": 1551},
        {"agent": "ann2", "objects": 1, "bytes": 5},
    ]
    assert err.startswith("2 agents, 4 objects, 1,556 bytes in ")  # the summary moves to stderr with --json


def test_agents_on_an_empty_prefix_needs_no_key_source(capsys, env, monkeypatch):
    monkeypatch.delenv("S3MEMORY_LOCAL_KEY")
    code, out, err = run(capsys, "agents", "--quiet")
    assert (code, err) == (0, "")
    assert out.startswith("AGENT    OBJECTS            BYTES\n0 agents, 0 objects, 0 bytes in ")


# --- verify ----------------------------------------------------------------------------


def test_verify_passes_and_counts_bookkeeping(capsys, stocked, s3):
    stocked.memory.vault.write(MemoryPath((".s3memory", "intents", "abc")), '{"v":1}')
    code, out, err = run(capsys, "verify", "--agent", "ann")
    assert code == 0
    assert err == "verify: 1/4\nverify: 2/4\nverify: 3/4\nverify: 4/4\n"  # plain lines: stderr is not a TTY
    lines = out.splitlines()
    assert lines[:2] == [
        "formats: 2: 4 objects",
        f"branch key ann {branch_of(s3, 'agents/ann/notes.md')} (active): 4 objects",
    ]  # the keystore objects are not among the objects verified: its branch key is unwrapped instead
    assert lines[2].startswith("verified 4 objects, 1,558 bytes in ")
    assert lines[2].endswith(" s (1 bookkeeping)")
    assert len(lines) == 3


def test_verify_catches_tampering_with_paths_and_exit_1(capsys, stocked, make_tool, s3):
    ok(make_tool("bob"), command="create", path="/memories/fine.md", file_text="fine")
    obj = s3.get_object(Bucket=BUCKET, Key="agents/ann/notes.md")
    body = bytearray(obj["Body"].read())
    body[0] ^= 1
    s3.put_object(Bucket=BUCKET, Key="agents/ann/notes.md", Body=bytes(body), Metadata=obj["Metadata"])
    moved = s3.get_object(Bucket=BUCKET, Key="agents/ann/customers/acme.md")  # ciphertext moved to another path
    s3.put_object(Bucket=BUCKET, Key="agents/ann/moved.md", Body=moved["Body"].read(), Metadata=moved["Metadata"])
    s3.put_object(Bucket=BUCKET, Key="agents/ann/plain.txt", Body=b"not sealed")
    code, out, err = run(capsys, "verify", "--quiet")
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[:3] == [
        "failed: ann:/memories/moved.md: failed its integrity check",
        "failed: ann:/memories/notes.md: failed its integrity check",
        "failed: ann:/memories/plain.txt: failed its integrity check",
    ]
    ann, bob = branch_of(s3, "agents/ann/.hidden"), branch_of(s3, "agents/bob/fine.md")
    assert lines[3:6] == [
        "formats: 2: 3 objects",
        f"branch key ann {ann} (active): 2 objects",  # only the objects that authenticated count
        f"branch key bob {bob} (active): 1 object",
    ]
    assert lines[6].startswith("verified 3 objects, ")
    assert lines[6].endswith(" s (0 bookkeeping); 3 failed")
    assert len(lines) == 7
    code, out, err = run(capsys, "verify", "--json", "--quiet", "--agent", "ann")
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False
    assert (report["verified"], report["failed"], report["bookkeeping"]) == (2, 3, 0)
    assert report["formats"] == {"2": 2}
    assert report["branch_keys"] == [{"agent": "ann", "id": ann, "active": True, "objects": 2}]
    assert report["problems"][1] == {
        "agent": "ann",
        "path": "/memories/notes.md",
        "reason": "failed its integrity check",
    }
    assert "3 failed" in err


def test_verify_with_the_wrong_key_fails_every_object(capsys, stocked, s3):
    """With another local key, each failure names the variable to set, not tampering (issue 34, item 2)."""
    other = base64.b64encode(bytes(32)).decode()
    code, out, _ = run(capsys, "verify", "--quiet", "--local-key", other)
    assert code == 1
    branch = branch_of(s3, "agents/ann/notes.md")
    lines = out.splitlines()
    why = (
        "sealed with another local key than S3MEMORY_LOCAL_KEY (OtherLocalKey): "
        "set S3MEMORY_LOCAL_KEY (--local-key) to the local key that sealed it"
    )
    assert lines[:5] == [
        f"failed: ann:/memories/.hidden: {why}",
        f"failed: ann:/memories/customers/acme.md: {why}",
        f"failed: ann:/memories/notes.md: {why}",
        f"failed: ann:branch key {branch}: {why}",  # the key itself does not unwrap
        f"branch key ann {branch} (active): 0 objects",
    ]  # no `formats:` line: no object authenticated
    assert lines[5].startswith("verified 0 objects, 0 bytes in ")
    assert lines[5].endswith(" s (0 bookkeeping); 4 failed")
    assert len(lines) == 6


# --- progress --------------------------------------------------------------------------


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_lines_are_one_per_tenth():
    stream = io.StringIO()
    progress = Progress("export", stream, "lines")
    progress.start(25)
    for _ in range(25):
        progress.advance(10)
    assert stream.getvalue().splitlines() == [
        "export: 3/25",
        "export: 5/25",
        "export: 8/25",
        "export: 10/25",
        "export: 13/25",
        "export: 15/25",
        "export: 18/25",
        "export: 20/25",
        "export: 23/25",
        "export: 25/25",
    ]


def test_progress_bar_on_a_tty_is_redrawn_and_cleared(capsys, stocked, monkeypatch):
    tty = FakeTTY()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(["verify", "--agent", "ann"]) == 0
    drawn = tty.getvalue()
    assert drawn.startswith("\rverify [")
    assert drawn.endswith("] 3/3 1,551 bytes\r\x1b[2K")
    assert "\n" not in drawn


def test_quiet_silences_progress(capsys, stocked, s3):
    code, out, err = run(capsys, "verify", "--quiet")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[:2] == [
        "formats: 2: 3 objects",
        f"branch key ann {branch_of(s3, 'agents/ann/notes.md')} (active): 3 objects",
    ]
    assert lines[2].startswith("verified 3 objects")
    assert len(lines) == 3


def test_demo_still_runs(capsys):
    code, out, err = run(capsys, "demo")
    assert (code, err) == (0, "")
    assert out.startswith(
        "Embedded moto S3 bucket 's3memory-demo', KMS key alias/s3memory-demo, agent 'support-agent-1'\n"
    )
    assert "Does the body contain the text 'refund'? False" in out
    # The support agent reads the curated store through its read-only mount, and cannot edit it.
    assert "\n4.0K\t/memories/guidelines/\n215B\t/memories/guidelines/customer_service_guidelines.xml\n" in out
    assert (
        '>>> {"command": "str_replace", "path": "/memories/guidelines/refund_policies.xml", "old_str": "store credit '
        'up to 60 days", "new_str": "store credit up to 365 days"}\n[tool_result is_error=true] Error: Cannot change '
        "/memories/guidelines/refund_policies.xml: /memories/guidelines is a read-only shared store. Nothing was "
        "changed; retrying will not help.\n"
    ) in out
    assert out.endswith(
        "Written by (sealed in the header): actor 'support-team-lead', agent 'guidelines-curator', str_replace\n"
    )


# --- repair ----------------------------------------------------------------------------


class Crash(Exception):
    """Stands for the process dying in the middle of an operation."""


def test_repair_completes_an_interrupted_directory_rename(env, capsys, make_tool):
    tool = make_tool()
    for name in ("a.md", "b.md"):
        ok(tool, command="create", path=f"/memories/old/{name}", file_text=f"text of {name}\n")

    def die(**_):
        raise Crash

    env.meta.events.register("before-call.s3.DeleteObjects", die)
    with pytest.raises(Crash):
        tool.call({"command": "rename", "old_path": "/memories/old", "new_path": "/memories/new"})
    env.meta.events.unregister("before-call.s3.DeleteObjects", die)
    keys = sorted(o["Key"] for o in env.list_objects_v2(Bucket=BUCKET)["Contents"])
    assert [k for k in keys if "/.s3memory/intents/" in k] != []  # the intent record is still there
    assert [k for k in keys if "/.s3memory/" not in k] == [
        "agents/agent-42/new/a.md", "agents/agent-42/new/b.md", "agents/agent-42/old/a.md", "agents/agent-42/old/b.md",
    ]  # fmt: skip

    assert run(capsys, "repair", "--agent", "agent-42") == (
        0, "completed 1 interrupted change(s) for agent agent-42\n", ""
    )  # fmt: skip
    keys = sorted(o["Key"] for o in env.list_objects_v2(Bucket=BUCKET)["Contents"])
    keystore = "agents/agent-42/.s3memory/keys/"  # the agent's branch key (claim and index entry) stays
    assert [k for k in keys if not k.startswith(keystore)] == ["agents/agent-42/new/a.md", "agents/agent-42/new/b.md"]
    assert len([k for k in keys if k.startswith(keystore)]) == 2
    assert run(capsys, "cat", "--agent", "agent-42", "/memories/new/b.md") == (
        0, "Here's the content of /memories/new/b.md with line numbers:\n     1\ttext of b.md\n", ""
    )  # fmt: skip
    assert run(capsys, "repair", "--agent", "agent-42") == (
        0, "completed 0 interrupted change(s) for agent agent-42\n", ""
    )  # fmt: skip
