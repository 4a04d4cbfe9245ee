"""Model-based test: random command sequences against S3MemoryTool (moto) and a plain model.

The model is written from the contract (docs/contract.md) alone, with none of s3memory's code: the
memory is a dict {path segments: text}; a directory exists while some file lies below it. Every
command's answer, success string or error text, must be identical in both.

A second tool on the same agent (issue 31) makes the first one's held versions stale, and races
it: just before the first tool's first write of a command (its PUT or DELETE, a client hook, no
timing), the second edits, deletes, renames or deletes and recreates (identically) the file the
first one holds. The answers must be those of the two commands in that order.
"""

from __future__ import annotations

import copy
import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from anthropic.lib.tools import ToolError
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule, run_state_machine_as_test
from moto import mock_aws

from s3memory import LocalKeys, S3MemoryTool
from tests.support import LOCAL_KEY, REGION

# Starts its own moto (server or in-process): nothing to gain from running it against an endpoint.
pytestmark = pytest.mark.moto_only

ROOT = "/memories"
Segments = tuple[str, ...]


class Refused(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --- the model (spec only) -------------------------------------------------------------


def parse(raw: str) -> Segments:
    """Spec "Paths": reasons for the cases the spec leaves open are the implementation's phrases."""
    shown = raw.replace("\\", "\\\\")  # escaped for display, repr-style

    def bad(reason: str) -> Refused:
        return Refused(f"Error: Invalid path {shown}: {reason}")

    if "\\" in raw:
        raise bad("it contains a backslash")
    if any(
        raw[i] == "%" and all(c in "0123456789abcdefABCDEF" for c in raw[i + 1 : i + 3]) for i in range(len(raw) - 2)
    ):
        raise bad("it contains a percent-encoded sequence")
    if raw != ROOT and not raw.startswith(ROOT + "/"):
        raise bad("it must start with /memories")
    body = raw[len(ROOT) + 1 :].removesuffix("/")
    if not body:
        return ()
    segments = tuple(body.split("/"))
    for seg in segments:
        if seg == "":
            raise bad("it contains an empty segment")
        if seg in (".", ".."):
            raise bad(f"it contains '{seg}'")
    return segments


def show(path: Segments) -> str:
    return ROOT + "".join("/" + s for s in path)


def size(text: str) -> str:
    n = len(text.encode("utf-8"))
    assert n < 1024  # the texts used here stay small
    return f"{n}B"


def lines_of(text: str) -> list[str]:
    parts = text.split("\n")
    return parts[:-1] if parts[-1] == "" else parts


def numbered(lines: list[str], first: int) -> list[str]:
    return [f"{first + i:>6}\t{line}" for i, line in enumerate(lines)]


@dataclass
class Model:
    files: dict[Segments, str] = field(default_factory=dict)

    def is_dir(self, path: Segments) -> bool:
        return path == () or any(p[: len(path)] == path and len(p) > len(path) for p in self.files)

    def file_above(self, path: Segments) -> Segments | None:
        return next((path[:i] for i in range(1, len(path)) if path[:i] in self.files), None)

    def view(self, raw: str, view_range: list[int] | None) -> str:
        path = parse(raw)
        if path in self.files:
            lines = lines_of(self.files[path])
            first, n = 1, len(lines)
            if view_range is not None:
                start, end = view_range
                if start < 1 or start > n or (end != -1 and end < start):
                    raise Refused(
                        f"Error: Invalid `view_range` parameter: [{start}, {end}]. "
                        f"It should be within the range of lines of the file: [1, {n}]"
                    )
                first, lines = start, lines[start - 1 : n if end == -1 else min(end, n)]
            return "\n".join([f"Here's the content of {show(path)} with line numbers:", *numbered(lines, first)])
        if not self.is_dir(path):
            raise Refused(f"The path {show(path)} does not exist. Please provide a valid path.")
        entries: dict[Segments, str | None] = {}  # relative path → file size, or None for a directory
        for p, text in self.files.items():
            rel = p[len(path) :]
            if p[: len(path)] != path or not rel or any(s.startswith(".") or s == "node_modules" for s in rel):
                continue
            for depth in range(1, min(len(rel), 3)):
                entries[rel[:depth]] = None
            if len(rel) <= 2:
                entries[rel] = size(text)
        lines = [
            f"Here're the files and directories up to 2 levels deep in {show(path)}, excluding hidden items and "
            "node_modules:",
            f"4.0K\t{show(path)}",
        ]
        for rel in sorted(entries):  # tuple order is depth-first with each level sorted by name
            kind = entries[rel]
            lines.append(f"{kind or '4.0K'}\t{show(path + rel)}{'' if kind else '/'}")
        return "\n".join(lines)

    def create(self, raw: str, text: str) -> str:
        path = parse(raw)
        if path == () or self.is_dir(path):
            raise Refused(f"Error: File {show(path)} already exists")
        above = self.file_above(path)
        if above is not None:
            raise Refused(f"Error: Cannot create {show(path)}: {show(above)} is a file")
        if path in self.files:
            raise Refused(f"Error: File {show(path)} already exists")
        self.files[path] = text
        return f"File created successfully at: {show(path)}"

    def str_replace(self, raw: str, old: str, new: str) -> str:
        path = parse(raw)
        if path not in self.files:
            raise Refused(f"Error: The path {show(path)} does not exist. Please provide a valid path.")
        text = self.files[path]
        starts = [i for i in range(len(text)) if old and text.startswith(old, i)]
        if not starts:
            raise Refused(f"No replacement was performed, old_str `{old}` did not appear verbatim in {show(path)}.")
        if len(starts) > 1:
            where = ", ".join(str(text.count("\n", 0, i) + 1) for i in starts)
            raise Refused(
                f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: {where}. "
                "Please ensure it is unique"
            )
        pos = starts[0]
        result = text[:pos] + new + text[pos + len(old) :]
        self.files[path] = result
        first = text.count("\n", 0, pos) + 1
        last = result.count("\n", 0, pos + len(new) - 1) + 1 if new else first
        lines = lines_of(result)
        lo, hi = max(1, first - 4), min(len(lines), last + 4)
        head = "The memory file has been edited. Here is the snippet showing the change (with line numbers):"
        return "\n".join([head, *numbered(lines[lo - 1 : hi], lo)])

    def insert(self, raw: str, line: int, new: str) -> str:
        path = parse(raw)
        if path not in self.files:
            raise Refused(f"Error: The path {show(path)} does not exist")
        text = self.files[path]
        lines = lines_of(text)
        if not 0 <= line <= len(lines):
            raise Refused(
                f"Error: Invalid `insert_line` parameter: {line}. "
                f"It should be within the range of lines of the file: [0, {len(lines)}]"
            )
        before = "".join(f"{x}\n" for x in lines[:line])
        after = lines[line:]
        rest = "\n".join(after) + ("\n" if after and text.endswith("\n") else "")
        self.files[path] = before + (new if new.endswith("\n") else new + "\n") + rest
        return f"The file {show(path)} has been edited."

    def delete(self, raw: str) -> str:
        path = parse(raw)
        if path == ():
            raise Refused("Error: Cannot delete the /memories directory itself")
        doomed = [p for p in self.files if p[: len(path)] == path]
        if not doomed:
            raise Refused(f"Error: The path {show(path)} does not exist")
        for p in doomed:
            del self.files[p]
        return f"Successfully deleted {show(path)}"

    def rename(self, raw_old: str, raw_new: str) -> str:
        old, new = parse(raw_old), parse(raw_new)
        if old == ():
            raise Refused("Error: Cannot rename the /memories directory itself")
        if old not in self.files:
            if not self.is_dir(old):
                raise Refused(f"Error: The path {show(old)} does not exist")
            if new == old:
                raise Refused(f"Error: The destination {show(new)} already exists")
            if new[: len(old)] == old:
                raise Refused(f"Error: Cannot move {show(old)} into itself")
        if new == () or self.is_dir(new) or new in self.files:
            raise Refused(f"Error: The destination {show(new)} already exists")
        above = self.file_above(new)
        if above is not None:
            raise Refused(f"Error: Cannot create {show(new)}: {show(above)} is a file")
        for p in [p for p in self.files if p[: len(old)] == old]:
            self.files[new + p[len(old) :]] = self.files.pop(p)
        return f"Successfully renamed {show(old)} to {show(new)}"


# --- the machine -----------------------------------------------------------------------

PATHS = [
    "/memories",
    "/memories/",
    "/memories/a.txt",
    "/memories/b.md",
    "/memories/d1",
    "/memories/d1/",
    "/memories/d1/c.txt",
    "/memories/d1/d2",
    "/memories/d1/d2/e.txt",
    "/memories/d1/d2/d3",
    "/memories/d1/.h",
    "/memories/.hidden",
    "/memories/node_modules/m.js",
    "/memories/x/y",
]
INVALID = [
    "/memoriesX/a",
    "memories/a.txt",
    "/memories/../a.txt",
    "/memories/./a.txt",
    "/memories//a.txt",
    "/memories/a\\b",
    "/memories/%2e%2e/a",
]
FILES = [p for p in PATHS if "." in p.rsplit("/", 1)[1] or p.endswith("/d3")]
any_path = st.one_of(st.sampled_from(FILES), st.sampled_from(FILES), st.sampled_from(PATHS), st.sampled_from(INVALID))
texts = st.sampled_from(
    ["", "x", "hello\nworld\n", "a\na\n", "one\ntwo\nthree", "aa", "é\n", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"]
)
olds = st.sampled_from(["", "x", "a", "aa", "hello", "world\n", "two", "\n", "é", "5\n6", "missing"])
news = st.sampled_from(["", "y", "b\nc", "HELLO\n", "aa"])
inserts = st.sampled_from(["", "new", "two\nlines", "ends\n"])
insert_lines = st.sampled_from([-1, 0, 1, 2, 3, 11])
ranges = st.sampled_from([None, [1, -1], [1, 1], [2, 3], [0, 1], [3, 2], [1, 100], [2, -1], [11, 11]])

STATS = {"steps": 0, "examples": 0, "errors": 0, "races": 0}
_BUCKETS = itertools.count()


class MemoryMachine(RuleBasedStateMachine):
    s3: Any = None
    other_s3: Any = None

    def __init__(self) -> None:
        super().__init__()
        bucket = f"s3memory-model-{next(_BUCKETS)}"  # a fresh bucket per example keeps moto's listings small
        self.s3.create_bucket(Bucket=bucket)
        self.tool = S3MemoryTool(
            bucket=bucket, agent_id="model", keys=LocalKeys(LOCAL_KEY), s3_client=self.s3, max_workers=2
        )
        self.bucket = bucket
        # Another tool of the agent on a client of its own, whose creates race the first tool's.
        self.other = S3MemoryTool(
            bucket=bucket, agent_id="model", keys=LocalKeys(LOCAL_KEY), s3_client=self.other_s3, max_workers=2
        )
        self.model = Model()
        STATS["examples"] += 1

    def teardown(self) -> None:
        self.tool.close()
        self.other.close()

    def check(self, expect: Any, tool: S3MemoryTool | None = None, **command: Any) -> None:
        STATS["steps"] += 1
        expected = answer_of(expect)
        actual = call(tool or self.tool, command)
        assert actual == expected, f"{command}\nmodel files: {self.model.files}"

    def pick(self, data: st.DataObject) -> str:
        """Mostly a file or directory that exists now (as the model would address it), else any path."""
        existing = sorted({show(p[:i]) for p in self.model.files for i in range(1, len(p) + 1)})
        if existing and data.draw(st.integers(0, 2)):
            return data.draw(st.sampled_from(existing))
        return data.draw(any_path)

    @rule(data=st.data(), view_range=ranges)
    def view(self, data: st.DataObject, view_range: list[int] | None) -> None:
        path = self.pick(data)
        command: dict[str, Any] = {"command": "view", "path": path}
        if view_range is not None:
            command["view_range"] = view_range
        self.check(lambda: self.model.view(path, view_range), **command)

    @rule(path=any_path, text=texts)
    def create(self, path: str, text: str) -> None:
        self.check(lambda: self.model.create(path, text), command="create", path=path, file_text=text)

    @rule(path=st.sampled_from(FILES), text=texts)
    def create_file(self, path: str, text: str) -> None:
        """A second create rule, on file names only, so that sequences build up some content."""
        self.create(path, text)

    @precondition(lambda self: self.model.files)
    @rule(data=st.data())
    def recreate_identical(self, data: st.DataObject) -> None:
        """A create of a file that holds exactly that text already (a model retrying its create)."""
        path = data.draw(st.sampled_from(sorted(self.model.files)))
        text = self.model.files[path]
        self.check(lambda: self.model.create(show(path), text), command="create", path=show(path), file_text=text)

    @rule(path=any_path, other=any_path, text=texts)
    def create_racing(self, path: str, other: str, text: str) -> None:
        """The other tool's create of `other` runs whole when this tool's create of `path` sends its
        first request, and every request of this one waits for it: the serial order other, then this.
        (A path refused before any request: this one, then the other.)"""
        STATS["steps"] += 2
        lock = threading.Lock()
        raced: list[tuple[bool, str]] = []

        def race(**_: Any) -> None:
            with lock:  # every request of this create waits here until the other create answered
                if not raced:
                    raced.append(call(self.other, {"command": "create", "path": other, "file_text": "other"}))

        self.s3.meta.events.register("before-call.s3.*", race, unique_id="race")
        try:
            mine = call(self.tool, {"command": "create", "path": path, "file_text": text})
        finally:
            self.s3.meta.events.unregister("before-call.s3.*", unique_id="race")
        if raced:
            expected = (
                answer_of(lambda: self.model.create(other, "other")),
                answer_of(lambda: self.model.create(path, text)),
            )
            assert (raced[0], mine) == expected, f"{other} then {path}\nmodel files: {self.model.files}"
        else:
            expected_mine = answer_of(lambda: self.model.create(path, text))
            theirs = call(self.other, {"command": "create", "path": other, "file_text": "other"})
            expected = (expected_mine, answer_of(lambda: self.model.create(other, "other")))
            assert (mine, theirs) == expected, f"{path} then {other}\nmodel files: {self.model.files}"

    @precondition(lambda self: self.model.files)  # edits of missing paths still come from pick()
    @rule(data=st.data(), old=olds, new=news)
    def str_replace(self, data: st.DataObject, old: str, new: str) -> None:
        path = self.pick(data)
        self.check(
            lambda: self.model.str_replace(path, old, new), command="str_replace", path=path, old_str=old, new_str=new
        )

    @precondition(lambda self: self.model.files)  # edits of missing paths still come from pick()
    @rule(data=st.data(), line=insert_lines, text=inserts)
    def insert(self, data: st.DataObject, line: int, text: str) -> None:
        path = self.pick(data)
        self.check(
            lambda: self.model.insert(path, line, text),
            command="insert",
            path=path,
            insert_line=line,
            insert_text=text,
        )

    @precondition(lambda self: self.model.files)  # edits of missing paths still come from pick()
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        path = self.pick(data)
        self.check(lambda: self.model.delete(path), command="delete", path=path)

    @precondition(lambda self: self.model.files)  # edits of missing paths still come from pick()
    @rule(data=st.data(), new=any_path)
    def rename(self, data: st.DataObject, new: str) -> None:
        old = self.pick(data)
        self.check(lambda: self.model.rename(old, new), command="rename", old_path=old, new_path=new)


RENAME_TO = ["/memories/r1.txt", "/memories/d1/r2.txt", "/memories/a.txt"]  # never the second tool's target
MOVED = "/memories/moved.txt"


def answer_of(expect: Any) -> tuple[bool, str]:
    try:
        return True, expect()
    except Refused as refused:
        STATS["errors"] += 1
        return False, refused.message


def call(tool: S3MemoryTool, command: dict[str, Any]) -> tuple[bool, str]:
    try:
        return True, tool.call(command)
    except ToolError as exc:
        return False, str(exc.content)


def apply(model: Model, command: dict[str, Any]) -> str:
    name = command["command"]
    if name == "insert":
        return model.insert(command["path"], command["insert_line"], command["insert_text"])
    if name == "str_replace":
        return model.str_replace(command["path"], command["old_str"], command["new_str"])
    if name == "delete":
        return model.delete(command["path"])
    if name == "create":
        return model.create(command["path"], command["file_text"])
    return model.rename(command["old_path"], command["new_path"])


def other_command(model: Model, kind: str, path: str) -> tuple[list[dict[str, Any]], list[Any]]:
    """The second tool's commands on `path` (a recreate: delete it, then create it again with the
    same text), and for each the model's answer, to be called in order."""
    if kind == "insert":
        commands = [{"command": "insert", "path": path, "insert_line": 0, "insert_text": "theirs"}]
    elif kind == "delete":
        commands = [{"command": "delete", "path": path}]
    elif kind == "rename":
        commands = [{"command": "rename", "old_path": path, "new_path": MOVED}]
    else:
        try:
            text = model.files.get(parse(path), "")
        except Refused:  # an invalid path: both commands are refused
            text = ""
        commands = [{"command": "delete", "path": path}, {"command": "create", "path": path, "file_text": text}]
    return commands, [lambda c=c: apply(model, c) for c in commands]


class OnceBefore:
    """Runs `action` once, just before the first `operation` request the hooked tool sends (the
    action's own requests pass through)."""

    def __init__(self, s3: Any, operation: str, action: Any) -> None:
        self.s3, self.action, self.fired, self.busy = s3, action, False, False
        self.event = f"before-call.s3.{operation}"
        s3.meta.events.register_first(self.event, self)

    def __call__(self, **_: Any) -> None:
        if self.fired or self.busy:
            return
        self.fired = self.busy = True
        try:
            self.action()
        finally:
            self.busy = False

    def remove(self) -> None:
        self.s3.meta.events.unregister(self.event, self)


class RacingMachine(MemoryMachine):
    """The machine with a second tool on the same agent, which changes the files the first holds,
    between its commands and inside them (issue 31)."""

    @precondition(lambda self: self.model.files)
    @rule(data=st.data())
    def other_tool(self, data: st.DataObject) -> None:
        """The second tool changes a file: the first one's held version of it is stale from now on."""
        path = self.pick(data)
        kind = data.draw(st.sampled_from(["insert", "delete", "recreate"]))
        command, expect = other_command(self.model, kind, path)
        for one, want in zip(command, expect, strict=True):
            self.check(want, tool=self.other, **one)

    @precondition(lambda self: self.model.files)
    @rule(
        data=st.data(),
        kind=st.sampled_from(["insert", "str_replace", "delete", "rename"]),
        other=st.sampled_from(["insert", "delete", "rename", "recreate"]),
        at=st.sampled_from(["PutObject", "DeleteObject"]),
    )
    def race(self, data: st.DataObject, kind: str, other: str, at: str) -> None:
        """The first tool holds a file (it views it) and changes it; the second changes the same file
        just before the first one's first `at` request of that command."""
        held = data.draw(st.sampled_from(sorted(show(p) for p in self.model.files)))
        self.check(lambda: self.model.view(held, None), command="view", path=held)
        ours = {
            "insert": {"command": "insert", "path": held, "insert_line": 0, "insert_text": "ours"},
            "str_replace": {"command": "str_replace", "path": held, "old_str": data.draw(olds), "new_str": "ours"},
            "delete": {"command": "delete", "path": held},
            "rename": {"command": "rename", "old_path": held, "new_path": data.draw(st.sampled_from(RENAME_TO))},
        }[kind]
        self.tool.memory.settle()  # no background request of an earlier command may meet the hook
        self.other.memory.settle()
        before = copy.deepcopy(self.model)
        theirs, _ = other_command(self.model, other, held)
        answers: list[tuple[bool, str]] = []
        hook = OnceBefore(self.s3, at, lambda: answers.extend(call(self.other, c) for c in theirs))
        try:
            actual = call(self.tool, ours)
        finally:
            hook.remove()
        if not hook.fired:  # the first tool sent no such request: the second acts after it
            answers.extend(call(self.other, c) for c in theirs)
        STATS["races"] += hook.fired
        self.model = before
        mine = lambda: apply(self.model, ours)  # noqa: E731
        _, wants = other_command(self.model, other, held)
        order = [*wants, mine] if hook.fired else [mine, *wants]
        expected = [answer_of(want) for want in order]
        got = [*answers, actual] if hook.fired else [actual, *answers]
        STATS["steps"] += len(got)
        assert got == expected, f"{ours} raced by {theirs} at {at} (fired: {hook.fired})\nmodel: {self.model.files}"


def test_tool_matches_the_spec_model():
    with mock_aws():
        MemoryMachine.s3 = boto3.client("s3", region_name=REGION)
        MemoryMachine.other_s3 = boto3.client("s3", region_name=REGION)
        run_state_machine_as_test(
            MemoryMachine,
            settings=settings(
                max_examples=40,
                stateful_step_count=25,
                deadline=None,
                derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
            ),
        )
    assert STATS["steps"] >= 40
    print(
        f"\n[model] {STATS['examples']} examples, {STATS['steps']} commands compared "
        f"({STATS['errors']} expected errors, {STATS['races']} races)"
    )


def test_two_tools_racing_on_held_files_match_the_spec_model():
    """Deletes, renames, edits and identical recreates by a second tool, racing the first tool's
    edits, deletes and renames of the files it holds: answers as if the second came first."""
    races = STATS["races"]
    with mock_aws():
        RacingMachine.s3 = boto3.client("s3", region_name=REGION)
        RacingMachine.other_s3 = boto3.client("s3", region_name=REGION)
        run_state_machine_as_test(
            RacingMachine,
            settings=settings(
                max_examples=20,
                stateful_step_count=25,
                deadline=None,
                derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
            ),
        )
    assert STATS["races"] - races >= 8  # the second tool did act inside the first one's commands
    print(f"\n[model] {STATS['races'] - races} races of two tools")


def test_the_model_itself_on_the_documentation_example():
    """The model reproduces the spec's literal example, so it is not trivially agreeing with the tool."""
    model = Model()
    model.create("/memories/customer_service_guidelines.xml", "x" * 1000)
    model.create("/memories/refund_policies.xml", "y" * 1000)
    assert model.view("/memories", None) == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories\n1000B\t/memories/customer_service_guidelines.xml\n1000B\t/memories/refund_policies.xml"
    )
