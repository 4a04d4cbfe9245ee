"""S3 and KMS requests per memory command, against the budgets of the core issue.

Counts are botocore API calls (retries not included), on a warm tool (its first command,
which also checks for interrupted changes, is not counted). Deterministic: no timings. The
first create is also the agent's first write, which creates its keystore (two PutObjects of
`.s3memory/keys/`, once per agent): counted in its row, not held against the per-command budget.

    python bench/requests.py          # prints the table; exit 1 if a budget is exceeded
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

BUCKET = "s3memory-bench-requests"


@dataclass(frozen=True)
class Row:
    name: str
    s3: int
    kms: int
    budget: int | None  # S3 budget; None = informational
    keystore: int = 0  # of `s3`, the requests to the agent's keystore (its creation, once per agent)

    @property
    def ok(self) -> bool:
        return self.budget is None or self.s3 - self.keystore <= self.budget


class _Counter:
    def __init__(self, s3: Any, kms: Any) -> None:
        self.s3 = self.kms = self.keystore = 0
        s3.meta.events.register("provide-client-params.s3.*", self._s3)
        kms.meta.events.register("before-call.kms.*", self._kms)

    def _s3(self, params: dict[str, Any], **_: Any) -> None:
        self.s3 += 1
        if "/.s3memory/keys/" in str(params.get("Key") or params.get("Prefix") or ""):
            self.keystore += 1

    def _kms(self, **_: Any) -> None:
        self.kms += 1

    def take(self) -> tuple[int, int]:
        out = (self.s3, self.kms)
        self.s3 = self.kms = self.keystore = 0
        return out


def measure(names: str = "plain") -> list[Row]:
    """Run each command once on moto and count its calls, with file names stored `names`
    ("plain" or "encrypted"). Needs moto installed."""
    import boto3
    from moto import mock_aws

    from s3memory import KmsKeys, Mount, S3MemoryTool

    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    rows: list[Row] = []
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        kms = boto3.client("kms", region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        key_id = kms.create_key()["KeyMetadata"]["KeyId"]
        counter = _Counter(s3, kms)

        def tool_for(agent: str, mounts: dict[str, Mount] | None = None) -> S3MemoryTool:
            return S3MemoryTool(
                bucket=BUCKET,
                agent_id=agent,
                keys=KmsKeys(key_id, kms_client=kms),
                s3_client=s3,
                prefix="agents/",
                names=names,  # type: ignore[arg-type]
                mounts=mounts,
            )

        tool = tool_for("agent-1")
        tool.call({"command": "view", "path": "/memories"})  # warm-up: recovery check, not counted
        counter.take()

        def run(name: str, budget: int | None, command: dict[str, Any], fails: bool = False, on: Any = None) -> None:
            try:
                (on or tool).call(command)
                assert not fails, name
            except Exception:
                if not fails:
                    raise
            finally:
                (on or tool).memory.settle()  # a directory change releases its record after answering
            keystore = counter.keystore
            s3_calls, kms_calls = counter.take()
            rows.append(Row(name, s3_calls, kms_calls, budget, keystore))

        text = "".join(f"line {i}\n" for i in range(20))
        run("create /memories/a.md", 3, {"command": "create", "path": "/memories/a.md", "file_text": text})
        # A new directory: LIST the path (a directory?) with a HEAD of each ancestor (a file?), then PUT.
        run("create in a new dir (depth 2)", 3,
            {"command": "create", "path": "/memories/notes/b.md", "file_text": text})  # fmt: skip
        # A directory the tool has seen: LIST parent + LIST path together, then PUT.
        run("create in an existing dir (depth 2)", 3,
            {"command": "create", "path": "/memories/notes/c.md", "file_text": text})  # fmt: skip
        run("create in a new dir (depth 3)", None,
            {"command": "create", "path": "/memories/p/q/d.md", "file_text": text})  # fmt: skip
        run("create in an existing dir (depth 3)", 3,
            {"command": "create", "path": "/memories/p/q/e.md", "file_text": text})  # fmt: skip
        run("create over an existing file (error)", 3,
            {"command": "create", "path": "/memories/a.md", "file_text": "x"}, fails=True)  # fmt: skip
        run("view file", 1, {"command": "view", "path": "/memories/a.md"})
        run("view file with view_range", 1, {"command": "view", "path": "/memories/a.md", "view_range": [2, 5]})
        run("view /memories", 2, {"command": "view", "path": "/memories"})
        run("view a subdirectory", 2, {"command": "view", "path": "/memories/notes"})
        run("view a missing path (error)", 2, {"command": "view", "path": "/memories/missing"}, fails=True)
        run("str_replace", 2, {"command": "str_replace", "path": "/memories/a.md", "old_str": "line 3\n",
                               "new_str": "LINE THREE\n"})  # fmt: skip
        run("insert", 2, {"command": "insert", "path": "/memories/a.md", "insert_line": 1, "insert_text": "new"})
        # The rows above edit a file this tool wrote: it holds that version (memory.recent) and PUTs
        # If-Match without a GET. A file another process wrote is read first.
        other = tool_for("agent-1")
        other.call({"command": "create", "path": "/memories/theirs.md", "file_text": text})
        other.call({"command": "create", "path": "/memories/theirs-2.md", "file_text": text})
        other.call({"command": "create", "path": "/memories/theirs-3.md", "file_text": text})
        other.call({"command": "create", "path": "/memories/theirs-4.md", "file_text": text})
        counter.take()
        run("str_replace of a file this tool has not read", 2, {"command": "str_replace", "path": "/memories/theirs.md",
                                                                 "old_str": "line 3\n", "new_str": "3\n"})  # fmt: skip
        run(
            "insert into a file this tool has not read",
            2,
            {"command": "insert", "path": "/memories/theirs-2.md", "insert_line": 1, "insert_text": "new"},
        )
        run("rename a file", 5, {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/notes/a.md"})
        run("rename a file this tool has not read", 5,
            {"command": "rename", "old_path": "/memories/theirs-4.md", "new_path": "/memories/p/q/f.md"})  # fmt: skip
        run("delete a file", 3, {"command": "delete", "path": "/memories/notes/a.md"})
        run("delete a file this tool has not read", 3, {"command": "delete", "path": "/memories/theirs-3.md"})
        run("create a file named without a dot", 3, {"command": "create", "path": "/memories/todo", "file_text": "x"})
        run("rename a file named without a dot", 5, {"command": "rename", "old_path": "/memories/todo",
                                                      "new_path": "/memories/done"})  # fmt: skip
        # Named like a directory, so listed while it is probed as a file (one round trip, one LIST more).
        run("delete a file named without a dot", 3, {"command": "delete", "path": "/memories/done"})
        # GET + LIST source with HEAD + LIST destination; record PUT with a GET per source; a PUT per
        # copy; DeleteObjects; the record's DELETE (after the answer: counted, not waited for).
        run("rename a directory of 2 files", None,
            {"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/archive"})  # fmt: skip
        # HEAD + LIST together; record PUT; DeleteObjects; the record's DELETE (after the answer).
        run("delete a directory of 2 files", None, {"command": "delete", "path": "/memories/archive"})
        tool.close()

        # Shared stores mounted beside the agent's memory (warm tools): one LIST more per mount.
        curator = tool_for("curator", {s: Mount(s, read_only=False) for s in ("store-1", "store-2")})
        for store in ("store-1", "store-2"):
            for i in range(3):
                curator.call({"command": "create", "path": f"/memories/{store}/{i}.md", "file_text": text})
        curator.close()
        mounted = {1: tool_for("agent-1", {"guidelines": Mount("store-1")}),
                   2: tool_for("agent-1", {"guidelines": Mount("store-1"), "notes": Mount("store-2")})}  # fmt: skip
        for warm in mounted.values():
            warm.call({"command": "view", "path": "/memories"})
            warm.call({"command": "view", "path": "/memories/guidelines/0.md"})
        counter.take()
        run("view /memories with 1 mount", 3, {"command": "view", "path": "/memories"}, on=mounted[1])
        run("view /memories with 2 mounts", 4, {"command": "view", "path": "/memories"}, on=mounted[2])
        run("view a file in a mount", 1, {"command": "view", "path": "/memories/guidelines/1.md"}, on=mounted[1])
        for warm in mounted.values():
            warm.close()

        # KMS: 40 creates + 40 views in one process, then a fresh tool reading 30 files.
        kms_tool = tool_for("agent-2")
        counter.take()
        for i in range(40):
            kms_tool.call({"command": "create", "path": f"/memories/k/{i}.md", "file_text": f"note {i}\n"})
        for i in range(40):
            kms_tool.call({"command": "view", "path": f"/memories/k/{i}.md"})
        s3_calls, kms_calls = counter.take()
        rows.append(Row("KMS: 40 creates + 40 views (budget ≤ 4 KMS)", s3_calls, kms_calls, None))
        kms_tool.close()
        fresh = tool_for("agent-2")
        for i in range(30):
            fresh.call({"command": "view", "path": f"/memories/k/{i}.md"})
        s3_calls, kms_calls = counter.take()
        rows.append(Row("KMS: fresh tool reads 30 files (budget ≤ 4 KMS)", s3_calls, kms_calls, None))
        fresh.close()
        cold = tool_for("agent-3", {s: Mount(s) for s in ("store-1", "store-2")})
        for store in ("store-1", "store-2"):
            for i in range(3):
                cold.call({"command": "view", "path": f"/memories/{store}/{i}.md"})
        s3_calls, kms_calls = counter.take()
        rows.append(Row("KMS: fresh tool reads 3 files in each of 2 mounts (budget ≤ 4 KMS)", s3_calls, kms_calls,
                        None))  # fmt: skip
        cold.close()
    return rows


def kms_rows_ok(rows: list[Row]) -> bool:
    return all(r.kms <= 4 for r in rows if r.name.startswith("KMS:"))


def render(rows: list[Row]) -> str:
    width = max(len(r.name) for r in rows)
    lines = [f"{'command':<{width}}  S3  KMS  S3 budget", "-" * (width + 22)]
    for r in rows:
        budget = "-" if r.budget is None else f"≤ {r.budget}"
        mark = "" if r.ok else "  OVER"
        note = f"  ({r.keystore} of them create the agent's keystore, once)" if r.keystore else ""
        lines.append(f"{r.name:<{width}}  {r.s3:>2}  {r.kms:>3}  {budget}{mark}{note}")
    return "\n".join(lines)


def main(out: Callable[[str], Any] = print) -> int:
    status = 0
    for names in ("plain", "encrypted"):
        rows = measure(names)
        out(f"\nfile names stored {names}:\n" + render(rows))
        status |= 0 if all(r.ok for r in rows) and kms_rows_ok(rows) else 1
    return status


if __name__ == "__main__":
    # Run as a script, this file's folder is sys.path[0], where this module's own name would
    # shadow the `requests` package that moto imports; search the repository root instead.
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
    sys.path.insert(0, os.path.dirname(_here))
    sys.exit(main())
