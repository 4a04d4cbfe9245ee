"""No command can lock an agent out: over-long renames are refused up front, a store without
conditional deletes is still fully usable, and an interrupted change that cannot be completed
blocks only the paths it covers until an operator repairs or abandons it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from s3memory.memory.intents import INTENTS
from tests.support import BUCKET, err, ok, without_keystore
from tests.support.cli import CliClients, run

PREFIX = "agents/agent-42/"


def keys(s3: Any) -> list[str]:
    """Every stored key but the agent's keystore (`.s3memory/keys/`, made by its first write): files
    and intent records."""
    return without_keystore(sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])))


def refuse(code: str, status: int, operation: str) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": "x"}, "ResponseMetadata": {"HTTPStatusCode": status}}, operation
    )


class NoConditionalDeletes:
    """A store that answers 501 NotImplemented to If-Match on DeleteObject and to ETags in DeleteObjects
    (as LocalStack does). Its plain deletes work. The refusal is the store's, not a condition it ignores."""

    def __init__(self, s3: Any, on_refusal: Callable[[], None] = lambda: None) -> None:
        self.refused = 0
        self.on_refusal = on_refusal
        s3.meta.events.register("before-parameter-build.s3.DeleteObject", self.delete_object)
        s3.meta.events.register("before-parameter-build.s3.DeleteObjects", self.delete_objects)

    def delete_object(self, params: dict[str, Any], **_: Any) -> None:
        if "IfMatch" in params:
            self.refused += 1
            raise refuse("NotImplemented", 501, "DeleteObject")

    def delete_objects(self, params: dict[str, Any], **_: Any) -> None:
        if any("ETag" in entry for entry in params["Delete"]["Objects"]):
            self.refused += 1
            on_refusal, self.on_refusal = self.on_refusal, lambda: None  # once
            on_refusal()
            raise refuse("NotImplemented", 501, "DeleteObjects")


def test_a_rename_that_would_make_over_long_keys_is_refused_before_any_write(
    make_tool: Callable[..., Any], s3: Any, counter: Any
) -> None:
    tool = make_tool()
    deep = "/memories/d/" + "s" * 200 + "/" + "f" * 200 + ".md"
    ok(tool, command="create", path=deep, file_text="x")
    before = keys(s3)
    new_dir = "/memories/" + "n" * 250 + "/" + "m" * 250 + "/" + "o" * 120
    counter.reset()
    message = err(tool, command="rename", old_path="/memories/d", new_path=new_dir)
    assert message == (
        f"Error: Invalid path {new_dir}/{'s' * 200}/{'f' * 200}.md: "
        "it is too long to store (keys are limited to 1,024 bytes)"
    )
    assert "Try again" not in message
    # read the source, list it, check the destination's placement (1 listing, 2 ancestors, itself): no write
    assert counter.by_op() == {"s3:GetObject": 1, "s3:ListObjectsV2": 2, "s3:HeadObject": 3}
    assert keys(s3) == before  # no intent record, nothing copied
    assert ok(tool, command="view", path=deep).endswith("1\tx")  # the agent stays usable


def test_a_store_without_conditional_deletes_stays_usable(make_tool: Callable[..., Any], s3: Any, caplog: Any) -> None:
    store = NoConditionalDeletes(s3)
    tool = make_tool()
    for name in ("a", "b", "c"):
        ok(tool, command="create", path=f"/memories/dir/{name}.md", file_text=name)
    assert ok(tool, command="rename", old_path="/memories/dir", new_path="/memories/moved") == (
        "Successfully renamed /memories/dir to /memories/moved"
    )
    assert ok(tool, command="rename", old_path="/memories/moved/a.md", new_path="/memories/a.md") == (
        "Successfully renamed /memories/moved/a.md to /memories/a.md"
    )
    assert ok(tool, command="delete", path="/memories/moved") == "Successfully deleted /memories/moved"
    assert keys(s3) == [PREFIX + "a.md"]  # no intent record left behind, no duplicate
    # Each kind of conditional delete was refused once, then the store remembered it.
    assert store.refused == 2
    warnings = [r.getMessage() for r in caplog.records if "does not implement" in r.getMessage()]
    assert len(warnings) == 2
    assert any("delete_if_match" in w for w in warnings)
    assert any("delete_objects_if_match" in w for w in warnings)
    fresh = make_tool()  # another process: usable from its first command
    assert ok(fresh, command="view", path="/memories/a.md").endswith("1\ta")


def test_a_file_edited_during_a_directory_delete_is_kept_without_conditional_deletes(
    make_tool: Callable[..., Any], s3: Any
) -> None:
    """The fallback compares ETags itself (HEAD) before deleting: an edit made after the listing survives."""
    tool, other = make_tool(), make_tool()
    ok(other, command="view", path="/memories")  # its start-up recovery is done
    ok(tool, command="create", path="/memories/d/a.md", file_text="a")
    ok(tool, command="create", path="/memories/d/b.md", file_text="b")
    # Another writer edits b.md after the listing, while the delete is under way.
    NoConditionalDeletes(
        s3, lambda: ok(other, command="str_replace", path="/memories/d/b.md", old_str="b", new_str="edited")
    )
    ok(tool, command="delete", path="/memories/d")
    assert keys(s3) == [PREFIX + "d/b.md"]
    assert ok(tool, command="view", path="/memories/d/b.md").endswith("1\tedited")


def stuck_rename(make_tool: Callable[..., Any], s3: Any) -> Any:
    """A directory rename whose record survives: the process died after copying, before deleting."""
    tool = make_tool()
    ok(tool, command="create", path="/memories/old/a.md", file_text="a")
    ok(tool, command="create", path="/memories/keep.md", file_text="k")

    class Died(Exception):
        pass

    def die(**_: Any) -> None:
        raise Died

    s3.meta.events.register("before-call.s3.DeleteObjects", die)
    with pytest.raises(Died):
        tool.call({"command": "rename", "old_path": "/memories/old", "new_path": "/memories/new"})
    s3.meta.events.unregister("before-call.s3.DeleteObjects", die)
    return tool


def test_a_change_that_cannot_be_completed_blocks_only_its_paths(make_tool: Callable[..., Any], s3: Any) -> None:
    stuck_rename(make_tool, s3)
    refusal = {"n": 0}

    def denied(**_: Any) -> None:  # completing the change meets a configuration failure
        refusal["n"] += 1
        raise refuse("AccessDenied", 403, "DeleteObjects")

    s3.meta.events.register("before-call.s3.DeleteObjects", denied)
    tool = make_tool()
    blocked = (
        "Error: An unfinished change of /memories/old cannot be completed (AccessDenied). No file was lost; "
        "commands under /memories/old wait until an operator runs s3memory repair for this agent."
    )
    assert ok(tool, command="view", path="/memories/keep.md").endswith("1\tk")  # elsewhere: usable
    assert ok(tool, command="create", path="/memories/other.md", file_text="o").startswith("File created")
    assert err(tool, command="view", path="/memories/old/a.md") == blocked
    assert err(tool, command="create", path="/memories/new/b.md", file_text="b") == blocked  # the destination too
    assert err(tool, command="delete", path="/memories/new") == blocked
    assert refusal["n"] == 1  # not retried on every command: retrying will not help
    s3.meta.events.unregister("before-call.s3.DeleteObjects", denied)


def test_repair_shows_completes_and_abandons(make_tool: Callable[..., Any], s3: Any, env: Any, capsys: Any) -> None:
    stuck_rename(make_tool, s3)
    record = [k for k in keys(s3) if "/.s3memory/intents/" in k]
    assert len(record) == 1
    assert run(capsys, "repair", "--agent", "agent-42", "--dry-run") == (
        0,
        "pending: rename /memories/old -> /memories/new (1 listed object, 1 still under /memories/old)\n"
        "1 interrupted change for agent agent-42; nothing was changed (--dry-run)\n",
        "",
    )
    assert keys(s3) == sorted([*record, PREFIX + "keep.md", PREFIX + "new/a.md", PREFIX + "old/a.md"])
    assert run(capsys, "repair", "--agent", "agent-42", "--abandon") == (
        0,
        "abandoned 1 interrupted change for agent agent-42; every file stays where it is\n",
        "",
    )
    assert keys(s3) == [PREFIX + "keep.md", PREFIX + "new/a.md", PREFIX + "old/a.md"]  # both copies kept
    assert run(capsys, "repair", "--agent", "agent-42") == (
        0,
        "completed 0 interrupted change(s) for agent agent-42\n",
        "",
    )
    assert INTENTS.display == "/memories/.s3memory/intents"


def test_repair_reports_what_it_could_not_complete(
    make_tool: Callable[..., Any], s3: Any, env: Any, capsys: Any, cli_clients: CliClients
) -> None:
    stuck_rename(make_tool, s3)
    cli_clients.hook(
        "before-call.s3.DeleteObjects", lambda **_: (_ for _ in ()).throw(refuse("AccessDenied", 403, "DeleteObjects"))
    )
    code, out, err_text = run(capsys, "repair", "--agent", "agent-42")
    assert (code, err_text) == (1, "")
    assert out == (
        "completed 0 interrupted change(s) for agent agent-42\n"
        "not completed: rename /memories/old -> /memories/new (AccessDenied); "
        "fix the cause and run repair again, or --abandon\n"
    )
