"""`view` of a directory holding more than one listing page: level-by-level listing, exact request counts.

Agents are seeded with raw `put_object` calls of small plain bodies (a directory view only
lists; sizes are shown as stored size minus the 16-byte tag). The expected listing is built
independently from a full paginated listing folded by `view_entries`, which is what the
single-page path shows for the same keys.
"""

from __future__ import annotations

from typing import Any

import pytest

from s3memory.core import messages as fmt
from s3memory.storage.listing import complete_before
from tests.support import BUCKET, ok
from tests.support.views import view_entries

ROOT = "agents/agent-42/"


class ListSpy:
    """Records (Prefix, Delimiter) of every ListObjectsV2 request made through a client."""

    def __init__(self, client: Any) -> None:
        self.requests: list[tuple[str, str | None]] = []
        client.meta.events.register("provide-client-params.s3.ListObjectsV2", self._seen)

    def _seen(self, params: dict[str, Any], **_: Any) -> None:
        self.requests.append((params.get("Prefix", ""), params.get("Delimiter")))


def seed(s3: Any, keys: list[tuple[str, int]]) -> None:
    for rel, size in keys:
        s3.put_object(Bucket=BUCKET, Key=ROOT + rel, Body=b"x" * (size + 16))


def expected_view(s3: Any, prefix: str, display: str) -> str:
    """The listing folded from every key below `prefix` at once (the single-page path's view)."""
    files: list[tuple[tuple[str, ...], int]] = []
    dirs: list[tuple[str, ...]] = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        for obj in page.get("Contents", []):
            rel = obj["Key"][len(prefix) :]
            if rel.endswith("/"):
                dirs.append(tuple(rel[:-1].split("/")))
            else:
                files.append((tuple(rel.split("/")), obj["Size"] - 16))
    return fmt.dir_listing(display, view_entries(files, dirs))


def many_dirs() -> list[tuple[str, int]]:
    """1,453 objects: hidden `.cache/` (150) first in key order, then 20 directories of 60 objects.

    Each `dNN/` has 2 files of its own, `notes/` and `logs/` subdirectories (deeper levels
    included), a `node_modules/` and a `.hidden/` inside. Root: a.md, z.md, node_modules/ (100).
    """
    keys = [(f".cache/c{i:03d}.bin", 10) for i in range(150)]
    keys += [("a.md", 1536), ("z.md", 2048)]
    keys += [(f"node_modules/pkg/f{i:03d}.js", 5) for i in range(100)]
    for d in range(20):
        top = f"d{d:02d}/"
        keys += [(top + "README.md", 100 + d), (top + "plan.md", 4096 + d)]
        keys += [(top + f"notes/n{i:02d}.md", i + d) for i in range(30)]
        keys += [(top + f"logs/2024/l{i:02d}.log", 2000 + i) for i in range(20)]
        keys += [(top + f"node_modules/m{i}.js", 1) for i in range(4)]
        keys += [(top + f".hidden/h{i}.md", 1) for i in range(4)]
    keys.append(("d15/empty/", 0))  # a console "folder" marker in a directory past the first page
    return keys


@pytest.fixture
def warm_tool(make_tool: Any) -> Any:
    tool = make_tool()
    tool.memory.recover()  # the once-per-instance crash-recovery LIST, not part of the view
    return tool


def test_view_of_many_directories_lists_level_by_level(s3: Any, warm_tool: Any) -> None:
    keys = many_dirs()
    seed(s3, keys)
    expected = expected_view(s3, ROOT, "/memories")
    spy = ListSpy(s3)

    out = ok(warm_tool, command="view", path="/memories")

    assert out == expected
    # First page (1,000 keys in key order): .cache (150), a.md, d00..d13 (14 x 60 = 840, ending at
    # 991), then 9 keys of d14. d00..d13 are complete in it; d14..d19 are listed one level each.
    # Hidden `.cache/` and `node_modules/` are never listed, nor anything below the shown levels.
    assert spy.requests[:2] == [(ROOT, None), (ROOT, "/")]
    assert sorted(spy.requests[2:]) == [(f"{ROOT}d{d:02d}/", "/") for d in range(14, 20)]  # in parallel
    assert len(spy.requests) == 1 + 1 + 6
    lines = out.split("\n")
    assert lines[:5] == [
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:",
        "4.0K\t/memories",
        "1.5K\t/memories/a.md",
        "4.0K\t/memories/d00/",
        "100B\t/memories/d00/README.md",
    ]
    assert "4.0K\t/memories/d00/logs/" in lines
    assert "4.0K\t/memories/d15/empty/" in lines
    assert not any("node_modules" in line or "/." in line for line in lines[1:])
    assert not any(line.endswith(".log") for line in lines)  # three levels down: not shown
    assert len(lines) == 2 + 2 + 20 * 5 + 1  # header, root, a.md, z.md, 5 per dNN, d15/empty/


def test_first_page_inside_one_directory_lists_every_shown_directory(s3: Any, warm_tool: Any) -> None:
    # The first page ends inside `aaa/`, so no directory is known to be complete: exactly
    # 1 (first page) + 1 (root, by delimiter) + 6 (shown top-level directories) requests.
    keys = [(f"aaa/sub{i % 3}/f{i:04d}.md", i % 50) for i in range(1000)]
    keys += [(f"{name}/x.md", 7) for name in ("bbb", "ccc", "ddd", "eee", "fff")]
    keys += [(".trash/old.md", 1), ("node_modules/p/i.js", 1), ("top.md", 3)]
    seed(s3, keys)
    expected = expected_view(s3, ROOT, "/memories")
    spy = ListSpy(s3)

    out = ok(warm_tool, command="view", path="/memories")

    assert out == expected
    assert spy.requests[:2] == [(ROOT, None), (ROOT, "/")]
    assert sorted(spy.requests[2:]) == [(f"{ROOT}{d}/", "/") for d in ("aaa", "bbb", "ccc", "ddd", "eee", "fff")]
    assert out.split("\n")[1:7] == [
        "4.0K\t/memories",
        "4.0K\t/memories/aaa/",
        "4.0K\t/memories/aaa/sub0/",
        "4.0K\t/memories/aaa/sub1/",
        "4.0K\t/memories/aaa/sub2/",
        "4.0K\t/memories/bbb/",
    ]


def test_small_agent_is_one_request(s3: Any, warm_tool: Any) -> None:
    seed(s3, [(f"d{d}/f{i}.md", 10) for d in range(5) for i in range(40)])
    expected = expected_view(s3, ROOT, "/memories")
    spy = ListSpy(s3)
    assert ok(warm_tool, command="view", path="/memories") == expected
    assert spy.requests == [(ROOT, None)]


def test_view_of_a_large_subdirectory(s3: Any, warm_tool: Any) -> None:
    keys = [(f"big/s{i % 4}/f{i:04d}.md", 20) for i in range(1010)] + [("big/readme.md", 9), ("other/x.md", 1)]
    seed(s3, keys)
    expected = expected_view(s3, ROOT + "big/", "/memories/big")
    spy = ListSpy(s3)
    assert ok(warm_tool, command="view", path="/memories/big") == expected
    prefix = ROOT + "big/"
    # s0..s2 end before the first page's last key (in s3), so only s3 is listed again.
    assert spy.requests == [(prefix, None), (prefix, "/"), (prefix + "s3/", "/")]


@pytest.mark.parametrize(
    ("dir_prefix", "last_key", "expected"),
    [
        ("r/d00/", "r/d01/x", True),
        ("r/d01/", "r/d01/x", False),  # more keys of d01 may follow the last one
        ("r/d0/", "r/d0-x", False),  # "-" sorts before "/": every r/d0/ key comes after r/d0-x
        ("r/d/", "r/d0", True),  # "0" sorts after "/"
        ("r/z/", "r/a/b", False),
        ("r/\u00e9/", "r/z", False),  # UTF-8 byte order is code point order: é after z
        ("r/a/", "r/\u00e9", True),
    ],
)
def test_complete_before(dir_prefix: str, last_key: str, expected: bool) -> None:
    assert complete_before(dir_prefix, last_key) is expected
