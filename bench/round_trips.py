"""Round trips per memory command: the requests a command waits for one after another.

Each command runs once on a warm tool (in-process moto, `bench.latency.Meter` with one fixed
delay per request) and is reported three ways, in units of that delay (see `bench.latency`):

- *round trips*: on a clock where CPU takes no time: exact, the same on an idle and a loaded
  machine (tests/bench/test_round_trips.py pins them);
- *in flight*: the measured time with at least one request in flight / delay;
- *wall*: wall time / delay (round trips plus the client's and moto's CPU between them).

A directory change answers before its intent record is released: the release is counted in
the S3 column, not waited for. A directory the tool has seen (in a listing) is listed while it is
read as a file; one it has not seen ("not seen") is listed once that read has found no file.

    python -m bench.round_trips [delay in seconds, default 0.05]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.latency import Meter, Phase
from bench.scenarios import aws, make_tool

DIR_FILES = 10


@dataclass(frozen=True)
class Row:
    name: str
    round_trips: float
    in_flight: float
    wall: float
    s3: int


def _settle(tool: Any) -> None:
    settle: Callable[[], None] | None = getattr(tool.memory, "settle", None)
    if settle is not None:  # an s3memory without background work: nothing to wait for
        settle()


def measure(delay: float = 0.05) -> list[Row]:
    """Run each command once on a warm tool; `delay`: seconds per S3 request (a KMS request takes
    0.3 of it, as 15 ms against 50 ms)."""
    meter = Meter(s3_delay=delay, kms_delay=0.3 * delay)
    rows: list[Row] = []
    with aws(meter) as (s3, kms, key_id):
        tool = make_tool(s3, kms, key_id, "round-trips")
        tool.call({"command": "create", "path": "/memories/notes/seed.md", "file_text": "alpha\nbeta\n"})
        tool.call({"command": "create", "path": "/memories/notes/old.md", "file_text": "to rename\n"})
        tool.call({"command": "create", "path": "/memories/notes/gone.md", "file_text": "to delete\n"})
        for name in ("proj", "trash", "proj-4"):
            for i in range(DIR_FILES):
                tool.call({"command": "create", "path": f"/memories/{name}/f{i}.md", "file_text": f"file {i}\n"})
        tool.call({"command": "view", "path": "/memories"})  # the tool has seen every directory

        def run(name: str, command: dict[str, Any]) -> None:
            with Phase(meter) as phase:
                tool.call(command)
                phase.answer()
                _settle(tool)
            rows.append(Row(name, phase.round_trips, phase.in_flight, phase.wall_round_trips, phase.count("s3")))

        run("view /memories", {"command": "view", "path": "/memories"})
        run("view a directory", {"command": "view", "path": "/memories/notes"})
        run("view a file", {"command": "view", "path": "/memories/notes/seed.md"})
        run("create in an existing dir", {"command": "create", "path": "/memories/notes/c.md", "file_text": "x"})
        run("create in a new dir (depth 2)", {"command": "create", "path": "/memories/new/c.md", "file_text": "x"})
        run("create in a new dir (depth 3)", {"command": "create", "path": "/memories/p/q/c.md", "file_text": "x"})
        run("str_replace", {"command": "str_replace", "path": "/memories/notes/seed.md", "old_str": "beta",
                            "new_str": "gamma"})  # fmt: skip
        run("insert", {"command": "insert", "path": "/memories/notes/seed.md", "insert_line": 0, "insert_text": "x"})
        # An edit of a file this tool has not read (another process wrote it), and of one it read
        # before another process changed it (its remembered version is refused, then read).
        other = make_tool(s3, kms, key_id, "round-trips")
        other.call({"command": "create", "path": "/memories/notes/theirs.md", "file_text": "one\n"})
        run(
            "str_replace, a file this tool has not read",
            {"command": "str_replace", "path": "/memories/notes/theirs.md", "old_str": "one", "new_str": "two"},
        )
        other.call({"command": "str_replace", "path": "/memories/notes/seed.md", "old_str": "gamma", "new_str": "g"})
        run(
            "str_replace, changed by another process since",
            {"command": "str_replace", "path": "/memories/notes/seed.md", "old_str": "alpha", "new_str": "a"},
        )
        other.call({"command": "create", "path": "/memories/notes/theirs-gone.md", "file_text": "x\n"})
        other.call({"command": "create", "path": "/memories/notes/theirs-old.md", "file_text": "x\n"})
        other.close()
        run("rename a file", {"command": "rename", "old_path": "/memories/notes/old.md",
                              "new_path": "/memories/notes/new.md"})  # fmt: skip
        run("rename a file this tool has not read", {"command": "rename", "old_path": "/memories/notes/theirs-old.md",
                                                      "new_path": "/memories/notes/theirs-new.md"})  # fmt: skip
        run("delete a file", {"command": "delete", "path": "/memories/notes/gone.md"})
        run("delete a file this tool has not read", {"command": "delete", "path": "/memories/notes/theirs-gone.md"})
        run(f"rename a directory of {DIR_FILES} files",
            {"command": "rename", "old_path": "/memories/proj", "new_path": "/memories/proj-2"})  # fmt: skip
        run(f"delete a directory of {DIR_FILES} files", {"command": "delete", "path": "/memories/trash"})
        tool.close()
        # New tools that have not listed the directory: after a first command (a view of a file, not
        # measured), and as their first command (which also looks for interrupted changes, and
        # unwraps the agent's branch key: one KMS request).
        for name, command, first in (
            (f"rename a directory of {DIR_FILES} files, not seen",
             {"command": "rename", "old_path": "/memories/proj-2", "new_path": "/memories/proj-3"}, True),
            (f"delete a directory of {DIR_FILES} files, not seen", {"command": "delete", "path": "/memories/proj-3"},
             True),
            (f"rename a directory of {DIR_FILES} files, a new tool's first command",
             {"command": "rename", "old_path": "/memories/proj-4", "new_path": "/memories/proj-5"}, False),
            (f"delete a directory of {DIR_FILES} files, a new tool's first command",
             {"command": "delete", "path": "/memories/proj-5"}, False),
            ("view a file, a new tool's first command", {"command": "view", "path": "/memories/notes/seed.md"}, False),
            ("str_replace, a new tool's first command",
             {"command": "str_replace", "path": "/memories/notes/seed.md", "old_str": "a", "new_str": "A"}, False),
            ("create, a new tool's first command",
             {"command": "create", "path": "/memories/notes/first.md", "file_text": "x"}, False),
        ):  # fmt: skip
            tool = make_tool(s3, kms, key_id, "round-trips")
            if first:
                tool.call({"command": "view", "path": "/memories/notes/seed.md"})
            run(name, command)
            tool.close()
    return rows


def render(rows: list[Row], delay: float) -> str:
    width = max(len(r.name) for r in rows)
    lines = [
        f"round trips per command at {delay * 1000:g} ms per request (warm tool)",
        f"{'command':<{width}}  round trips  in flight   wall  S3",
        "-" * (width + 38),
    ]
    for r in rows:
        lines.append(f"{r.name:<{width}}  {r.round_trips:>11.2f}  {r.in_flight:>9.2f}  {r.wall:>5.2f}  {r.s3:>2}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    delay = float(argv[0]) if argv else 0.05
    print(render(measure(delay), delay))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
