"""Every string of the contract (docs/contract.md), asserted literally through `S3MemoryTool.call` on moto.

Every test runs twice: with plain names and with hidden (encrypted) names. The model must see
exactly the same strings in both; only what is stored differs, and `bucket_keys` shows the
stored keys of an agent with hidden names as the plain keys their decrypted paths stand for.
"""

from __future__ import annotations

import pytest
from anthropic.lib.tools import ToolError

from s3memory import Limits
from s3memory.core import keyring, paths
from s3memory.core.paths import MemoryPath
from tests.support import BUCKET, assert_one_branch_key, err, keystore_names, ok, without_keystore

NAME_MODES = ["plain", "encrypted"]


@pytest.fixture(params=NAME_MODES)
def make_tool(make_tool, request):
    """The conftest factory, with `names=` the mode of this run (unless a test passes its own)."""
    mode = request.param

    def factory(*args, **kwargs):
        kwargs.setdefault("names", mode)
        return make_tool(*args, **kwargs)

    return factory


def encrypted_names(tool) -> bool:
    return tool.memory.vault.names.need == "encrypted"


def stored(tool, raw: str) -> str:
    """The decrypted text of a file, read through the vault (one GET, authenticated)."""
    return tool.memory.vault.read(tool.memory.vault.parse(raw))[0]


def all_bucket_keys(s3) -> list[str]:
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET)
    return sorted(obj["Key"] for page in pages for obj in page.get("Contents", []))


def bucket_keys(s3, tool) -> list[str]:
    """The stored keys of memory files: every key but the agents' keystores (`.s3memory/keys/`).

    With hidden names, each key is shown as the key its decrypted path has in plain names; every
    such key must decrypt, and none may be stored as that plain key."""
    keys = without_keystore(all_bucket_keys(s3))
    if not encrypted_names(tool):
        return keys
    space = tool.memory.vault.space
    shown = []
    for key in keys:
        path = space.path_of(key)
        assert path is not None, key
        plain = paths.object_key(space.root, path)
        assert plain != key or space.is_bookkeeping(key), key
        shown.append(plain)
    return sorted(shown)


# What an agent's first write leaves in its keystore with hidden names: the mode entry, the
# name key (generation 0) and the branch key (generation 1), each key a claim and an index entry.
ENCRYPTED_MODE_ENTRY = "names.00000001.encrypted"


def assert_keystore_of_first_write(s3, tool) -> None:
    root = tool.memory.vault.space.root
    if not encrypted_names(tool):
        assert_one_branch_key(all_bucket_keys(s3), root)
        return
    names = keystore_names(all_bucket_keys(s3), root)
    assert len(names) == 5, names
    assert (names[0], names[2], names[4]) == ("00000000", "00000001", ENCRYPTED_MODE_ENTRY), names
    records = [keyring.parse_index(names[1]), keyring.parse_index(names[3])]
    assert [None if r is None else r.generation for r in records] == [0, 1], names


def create(tool, path: str, text: str = "") -> None:
    assert ok(tool, command="create", path=path, file_text=text) == f"File created successfully at: {path}"


TWENTY = "".join(f"line{i}\n" for i in range(1, 21))

# --- view: directories -----------------------------------------------------------------


def test_view_documentation_example(tool):
    create(tool, "/memories/customer_service_guidelines.xml", "x" * 1536)
    create(tool, "/memories/refund_policies.xml", "y" * 2048)
    assert ok(tool, command="view", path="/memories") == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories\n"
        "1.5K\t/memories/customer_service_guidelines.xml\n"
        "2.0K\t/memories/refund_policies.xml"
    )


def test_view_root_of_brand_new_agent(tool, s3):
    assert all_bucket_keys(s3) == []
    expected = (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories"
    )
    assert ok(tool, command="view", path="/memories") == expected
    assert ok(tool, command="view", path="/memories/") == expected
    # Only a write creates the agent's keystore (and, with hidden names, records its name mode).
    assert all_bucket_keys(s3) == []


def _tree(tool):
    create(tool, "/memories/b.txt", "abc")
    create(tool, "/memories/B.txt", "")
    create(tool, "/memories/a-b.txt", "é" * 600)  # 1,200 bytes
    create(tool, "/memories/a/x.md", "x" * 1536)
    create(tool, "/memories/a/sub/y.txt", "hello")
    create(tool, "/memories/a/sub/deep/far.txt", "far")
    create(tool, "/memories/a/.hidden/secret.txt", "s")
    create(tool, "/memories/a/.dotfile", "d")
    create(tool, "/memories/a/node_modules/x.js", "js")
    create(tool, "/memories/.git/config", "cfg")
    create(tool, "/memories/.env", "e")
    create(tool, "/memories/node_modules/pkg/index.js", "js")


ROOT_VIEW_OF_TREE = (
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
    "4.0K\t/memories\n"
    "0B\t/memories/B.txt\n"
    "4.0K\t/memories/a/\n"
    "4.0K\t/memories/a/sub/\n"
    "1.5K\t/memories/a/x.md\n"
    "1.2K\t/memories/a-b.txt\n"
    "3B\t/memories/b.txt"
)


def test_view_depth_two_depth_first_hidden_and_node_modules_excluded(tool):
    _tree(tool)
    assert ok(tool, command="view", path="/memories") == ROOT_VIEW_OF_TREE
    assert ok(tool, command="view", path="/memories/a") == (
        "Here're the files and directories up to 2 levels deep in /memories/a, excluding hidden items and "
        "node_modules:\n"
        "4.0K\t/memories/a\n"
        "4.0K\t/memories/a/sub/\n"
        "4.0K\t/memories/a/sub/deep/\n"
        "5B\t/memories/a/sub/y.txt\n"
        "1.5K\t/memories/a/x.md"
    )


def test_view_directory_trailing_slash_dropped(tool):
    create(tool, "/memories/notes/todo.md", "1234")
    expected = (
        "Here're the files and directories up to 2 levels deep in /memories/notes, excluding hidden items and "
        "node_modules:\n"
        "4.0K\t/memories/notes\n"
        "4B\t/memories/notes/todo.md"
    )
    assert ok(tool, command="view", path="/memories/notes/") == expected
    assert ok(tool, command="view", path="/memories/notes") == expected


def test_view_listing_beyond_one_list_page_is_identical(tool):
    """Over 1,000 keys the listing goes level by level; the text must not change."""
    _tree(tool)
    vault = tool.memory.vault
    for i in range(1000):  # hidden padding: forces a truncated first page, never shown
        vault.write(MemoryPath((".pad", f"{i:04}")), "p")
    assert ok(tool, command="view", path="/memories") == ROOT_VIEW_OF_TREE


def test_view_missing_path(tool):
    create(tool, "/memories/file.txt", "x")
    for raw, shown in [
        ("/memories/nope", "/memories/nope"),
        ("/memories/nope/", "/memories/nope"),
        ("/memories/a/b/c", "/memories/a/b/c"),
        ("/memories/file.txt/below", "/memories/file.txt/below"),
        ("/memories/file", "/memories/file"),
    ]:
        assert err(tool, command="view", path=raw) == f"The path {shown} does not exist. Please provide a valid path."


def test_view_listing_truncated_at_max_view_chars(make_tool):
    tool = make_tool(limits=Limits(max_view_chars=200))
    for name in ("a1", "a2", "a3", "a4", "a5"):
        create(tool, f"/memories/{name}", "x")
    # The header (108 characters) and the root line end at 123; each file line adds 16 (newline included):
    # a4 ends at 187 <= 200, a5 would end at 203.
    assert ok(tool, command="view", path="/memories") == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories\n"
        "1B\t/memories/a1\n"
        "1B\t/memories/a2\n"
        "1B\t/memories/a3\n"
        "1B\t/memories/a4\n"
        "[Output truncated at 200 characters. View a subdirectory of /memories to see the rest.]"
    )


# --- view: files -----------------------------------------------------------------------


def test_view_file_two_lines_with_or_without_final_newline(tool):
    create(tool, "/memories/f.txt", "a\nb\n")
    create(tool, "/memories/g.txt", "a\nb")
    assert ok(tool, command="view", path="/memories/f.txt") == (
        "Here's the content of /memories/f.txt with line numbers:\n     1\ta\n     2\tb"
    )
    assert ok(tool, command="view", path="/memories/g.txt") == (
        "Here's the content of /memories/g.txt with line numbers:\n     1\ta\n     2\tb"
    )


def test_view_empty_file_returns_header_alone(tool):
    create(tool, "/memories/empty.txt", "")
    assert ok(tool, command="view", path="/memories/empty.txt") == (
        "Here's the content of /memories/empty.txt with line numbers:"
    )


def test_view_file_numbers_are_six_wide_then_tab(tool):
    create(tool, "/memories/f.txt", "".join(f"{i}\n" for i in range(1, 12)) + "\ttabbed é\n\n")
    assert ok(tool, command="view", path="/memories/f.txt", view_range=[9, -1]) == (
        "Here's the content of /memories/f.txt with line numbers:\n"
        "     9\t9\n"
        "    10\t10\n"
        "    11\t11\n"
        "    12\t\ttabbed é\n"
        "    13\t"
    )


def test_view_file_trailing_slash_dropped(tool):
    create(tool, "/memories/f.txt", "x")
    assert ok(tool, command="view", path="/memories/f.txt/") == (
        "Here's the content of /memories/f.txt with line numbers:\n     1\tx"
    )


FIVE = "one\ntwo\nthree\nfour\nfive\n"


VALID_RANGES = [
    ([2, 3], "     2\ttwo\n     3\tthree"),
    ([4, -1], "     4\tfour\n     5\tfive"),
    ([1, -1], "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive"),
    ([5, 5], "     5\tfive"),
    ([4, 100], "     4\tfour\n     5\tfive"),  # end beyond the last line: clamped
]


def test_view_range_valid(tool):
    create(tool, "/memories/five.txt", FIVE)
    for view_range, body in VALID_RANGES:
        assert ok(tool, command="view", path="/memories/five.txt", view_range=view_range) == (
            "Here's the content of /memories/five.txt with line numbers:\n" + body
        ), view_range


INVALID_RANGES = [[0, 2], [0, -1], [-1, 3], [6, 6], [6, -1], [100, 200], [3, 2], [2, 1], [2, 0], [2, -2]]


def test_view_range_invalid(tool):
    create(tool, "/memories/five.txt", FIVE)
    for start, end in INVALID_RANGES:
        assert err(tool, command="view", path="/memories/five.txt", view_range=[start, end]) == (
            f"Error: Invalid `view_range` parameter: [{start}, {end}]. "
            "It should be within the range of lines of the file: [1, 5]"
        )


def test_view_range_on_empty_file(tool):
    create(tool, "/memories/empty.txt", "")
    assert err(tool, command="view", path="/memories/empty.txt", view_range=[1, -1]) == (
        "Error: Invalid `view_range` parameter: [1, -1]. It should be within the range of lines of the file: [1, 0]"
    )


def test_view_range_malformed(tool):
    create(tool, "/memories/five.txt", FIVE)
    assert err(tool, command="view", path="/memories/five.txt", view_range=[1]) == (
        "Error: Invalid `view_range` parameter: [1]. It should be a list of two integers: [start, end]"
    )


def test_view_line_limit(tool):
    create(tool, "/memories/big.txt", "\n" * 1_000_000)  # 1,000,000 empty lines, 1,000,000 bytes
    assert err(tool, command="view", path="/memories/big.txt") == (
        "File /memories/big.txt exceeds maximum line limit of 999,999 lines."
    )
    assert err(tool, command="view", path="/memories/big.txt", view_range=[1, 1]) == (
        "File /memories/big.txt exceeds maximum line limit of 999,999 lines."
    )
    create(tool, "/memories/max.txt", "\n" * 999_999)
    assert ok(tool, command="view", path="/memories/max.txt", view_range=[999_998, -1]) == (
        "Here's the content of /memories/max.txt with line numbers:\n999998\t\n999999\t"
    )


def _twenty_char_lines(n: int) -> str:
    """Lines that are exactly 20 characters once numbered (6 + tab + 13)."""
    return "".join(f"line-{i:02}-xxxxx\n" for i in range(1, n + 1))


def test_view_file_truncated_at_max_view_chars(make_tool):
    tool = make_tool(limits=Limits(max_view_chars=160))
    create(tool, "/memories/t.txt", _twenty_char_lines(10))
    # The header and its newline take 57 characters; 4 numbered lines joined by newlines take
    # 83 more (140 <= 160); a fifth would make 161 > 160.
    assert ok(tool, command="view", path="/memories/t.txt") == (
        "Here's the content of /memories/t.txt with line numbers:\n"
        "     1\tline-01-xxxxx\n"
        "     2\tline-02-xxxxx\n"
        "     3\tline-03-xxxxx\n"
        "     4\tline-04-xxxxx\n"
        "[Output truncated at 160 characters. Use view_range [5, 10] to read the rest of /memories/t.txt.]"
    )
    assert ok(tool, command="view", path="/memories/t.txt", view_range=[3, -1]) == (
        "Here's the content of /memories/t.txt with line numbers:\n"
        "     3\tline-03-xxxxx\n"
        "     4\tline-04-xxxxx\n"
        "     5\tline-05-xxxxx\n"
        "     6\tline-06-xxxxx\n"
        "[Output truncated at 160 characters. Use view_range [7, 10] to read the rest of /memories/t.txt.]"
    )
    # A range that ends early: the hint points to the end of the requested range.
    assert ok(tool, command="view", path="/memories/t.txt", view_range=[2, 8]) == (
        "Here's the content of /memories/t.txt with line numbers:\n"
        "     2\tline-02-xxxxx\n"
        "     3\tline-03-xxxxx\n"
        "     4\tline-04-xxxxx\n"
        "     5\tline-05-xxxxx\n"
        "[Output truncated at 160 characters. Use view_range [6, 8] to read the rest of /memories/t.txt.]"
    )


def test_view_file_exactly_at_max_view_chars_is_not_truncated(make_tool):
    tool = make_tool(limits=Limits(max_view_chars=161))  # header 56 + newline + 5 lines of 20 + 4 newlines
    create(tool, "/memories/t.txt", _twenty_char_lines(5))
    assert ok(tool, command="view", path="/memories/t.txt") == "\n".join(
        ["Here's the content of /memories/t.txt with line numbers:"]
        + [f"     {i}\tline-0{i}-xxxxx" for i in range(1, 6)]
    )


# --- create ----------------------------------------------------------------------------


def test_create_success_and_parents_implicit(tool, s3):
    assert ok(tool, command="create", path="/memories/p/q/r.txt", file_text="r") == (
        "File created successfully at: /memories/p/q/r.txt"
    )
    assert bucket_keys(s3, tool) == ["agents/agent-42/p/q/r.txt"]
    assert_keystore_of_first_write(s3, tool)  # the first write made the keystore
    assert ok(tool, command="view", path="/memories/p") == (
        "Here're the files and directories up to 2 levels deep in /memories/p, excluding hidden items and "
        "node_modules:\n"
        "4.0K\t/memories/p\n"
        "4.0K\t/memories/p/q/\n"
        "1B\t/memories/p/q/r.txt"
    )


def test_create_trailing_slash_dropped(tool):
    assert ok(tool, command="create", path="/memories/n.md/", file_text="x") == (
        "File created successfully at: /memories/n.md"
    )
    assert stored(tool, "/memories/n.md") == "x"


EXACT_TEXTS = ["no trailing newline", "two\nlines\n", "", "\n", "crlf\r\nkept\r\n", "é 日本語 🎉\u2028 done", "\ttab"]


def test_create_stores_text_byte_for_byte(tool):
    for i, text in enumerate(EXACT_TEXTS):
        create(tool, f"/memories/exact{i}.txt", text)
    for i, text in enumerate(EXACT_TEXTS):
        assert stored(tool, f"/memories/exact{i}.txt").encode("utf-8") == text.encode("utf-8")


def test_create_existing_file(tool):
    create(tool, "/memories/f.txt", "original")
    assert err(tool, command="create", path="/memories/f.txt", file_text="new") == (
        "Error: File /memories/f.txt already exists"
    )
    assert stored(tool, "/memories/f.txt") == "original"


def test_create_existing_directory(tool):
    create(tool, "/memories/dir/f.txt", "x")
    assert err(tool, command="create", path="/memories/dir", file_text="x") == (
        "Error: File /memories/dir already exists"
    )
    assert err(tool, command="create", path="/memories/dir/", file_text="x") == (
        "Error: File /memories/dir already exists"
    )
    assert err(tool, command="create", path="/memories", file_text="x") == "Error: File /memories already exists"


def test_create_parent_is_a_file(tool, s3):
    create(tool, "/memories/f.txt", "x")
    assert err(tool, command="create", path="/memories/f.txt/new", file_text="y") == (
        "Error: Cannot create /memories/f.txt/new: /memories/f.txt is a file"
    )
    assert err(tool, command="create", path="/memories/f.txt/a/b/c", file_text="y") == (
        "Error: Cannot create /memories/f.txt/a/b/c: /memories/f.txt is a file"
    )
    create(tool, "/memories/d/g.txt", "x")
    assert err(tool, command="create", path="/memories/d/g.txt/h/i", file_text="y") == (
        "Error: Cannot create /memories/d/g.txt/h/i: /memories/d/g.txt is a file"
    )
    assert bucket_keys(s3, tool) == ["agents/agent-42/d/g.txt", "agents/agent-42/f.txt"]


# --- str_replace -----------------------------------------------------------------------


def test_str_replace_success_snippet(tool):
    create(tool, "/memories/f.txt", TWENTY)
    assert ok(tool, command="str_replace", path="/memories/f.txt", old_str="line10\n", new_str="TEN\n") == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     6\tline6\n"
        "     7\tline7\n"
        "     8\tline8\n"
        "     9\tline9\n"
        "    10\tTEN\n"
        "    11\tline11\n"
        "    12\tline12\n"
        "    13\tline13\n"
        "    14\tline14"
    )
    assert stored(tool, "/memories/f.txt") == TWENTY.replace("line10\n", "TEN\n")


def test_str_replace_snippet_at_start_and_end(tool):
    create(tool, "/memories/f.txt", TWENTY)
    assert ok(tool, command="str_replace", path="/memories/f.txt", old_str="line1\n", new_str="ONE\n") == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\tONE\n"
        "     2\tline2\n"
        "     3\tline3\n"
        "     4\tline4\n"
        "     5\tline5"
    )
    assert ok(tool, command="str_replace", path="/memories/f.txt", old_str="line20", new_str="A\nB") == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "    16\tline16\n"
        "    17\tline17\n"
        "    18\tline18\n"
        "    19\tline19\n"
        "    20\tA\n"
        "    21\tB"
    )
    assert stored(tool, "/memories/f.txt") == "ONE\n" + "".join(f"line{i}\n" for i in range(2, 20)) + "A\nB\n"


def test_str_replace_keeps_missing_final_newline(tool):
    create(tool, "/memories/f.txt", "alpha beta")
    assert ok(tool, command="str_replace", path="/memories/f.txt", old_str="beta", new_str="gamma") == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\talpha gamma"
    )
    assert stored(tool, "/memories/f.txt") == "alpha gamma"


def test_str_replace_not_found(tool):
    create(tool, "/memories/f.txt", TWENTY)
    assert err(tool, command="str_replace", path="/memories/f.txt", old_str="line99", new_str="x") == (
        "No replacement was performed, old_str `line99` did not appear verbatim in /memories/f.txt."
    )
    assert err(tool, command="str_replace", path="/memories/f.txt/", old_str="LINE1", new_str="x") == (
        "No replacement was performed, old_str `LINE1` did not appear verbatim in /memories/f.txt."
    )
    assert stored(tool, "/memories/f.txt") == TWENTY


def test_str_replace_empty_old_str_is_not_found(tool):
    create(tool, "/memories/f.txt", "abc")
    assert err(tool, command="str_replace", path="/memories/f.txt", old_str="", new_str="x") == (
        "No replacement was performed, old_str `` did not appear verbatim in /memories/f.txt."
    )
    assert stored(tool, "/memories/f.txt") == "abc"


def test_str_replace_multiple_occurrences(tool):
    create(tool, "/memories/f.txt", "foo\nbar\nbaz\nfoo\n")
    assert err(tool, command="str_replace", path="/memories/f.txt", old_str="foo", new_str="x") == (
        "No replacement was performed. Multiple occurrences of old_str `foo` in lines: 1, 4. Please ensure it is unique"
    )
    create(tool, "/memories/g.txt", "aaa\n")
    assert err(tool, command="str_replace", path="/memories/g.txt", old_str="aa", new_str="x") == (
        "No replacement was performed. Multiple occurrences of old_str `aa` in lines: 1, 1. Please ensure it is unique"
    )
    assert stored(tool, "/memories/f.txt") == "foo\nbar\nbaz\nfoo\n"


def test_str_replace_missing_path_or_directory(tool):
    create(tool, "/memories/dir/f.txt", "x")
    for raw, shown in [
        ("/memories/nope.txt", "/memories/nope.txt"),
        ("/memories/dir", "/memories/dir"),
        ("/memories/dir/", "/memories/dir"),
        ("/memories", "/memories"),
    ]:
        assert err(tool, command="str_replace", path=raw, old_str="x", new_str="y") == (
            f"Error: The path {shown} does not exist. Please provide a valid path."
        )


# --- insert ----------------------------------------------------------------------------


INSERTS = [
    ("a\nb\n", 0, "X", "X\na\nb\n"),
    ("a\nb\n", 1, "X", "a\nX\nb\n"),
    ("a\nb\n", 2, "X", "a\nb\nX\n"),
    ("a\nb\n", 2, "X\n", "a\nb\nX\n"),
    ("a\nb\n", 1, "X\nY", "a\nX\nY\nb\n"),
    ("a\nb", 2, "X", "a\nb\nX\n"),  # a file without a final newline gets one first
    ("a\nb", 1, "X", "a\nX\nb"),
    ("", 0, "first", "first\n"),
]


def test_insert(tool):
    for i, (text, line, insert, result) in enumerate(INSERTS):
        path = f"/memories/f{i}.txt"
        create(tool, path, text)
        assert ok(tool, command="insert", path=path, insert_line=line, insert_text=insert) == (
            f"The file {path} has been edited."
        )
        assert stored(tool, path) == result, (text, line, insert)


def test_insert_out_of_range(tool):
    create(tool, "/memories/f.txt", "a\nb\n")
    for line in (-1, 3, 100):
        assert err(tool, command="insert", path="/memories/f.txt", insert_line=line, insert_text="X") == (
            f"Error: Invalid `insert_line` parameter: {line}. "
            "It should be within the range of lines of the file: [0, 2]"
        )
    assert stored(tool, "/memories/f.txt") == "a\nb\n"


def test_insert_out_of_range_on_empty_file(tool):
    create(tool, "/memories/e.txt", "")
    assert err(tool, command="insert", path="/memories/e.txt", insert_line=1, insert_text="X") == (
        "Error: Invalid `insert_line` parameter: 1. It should be within the range of lines of the file: [0, 0]"
    )


def test_insert_missing_path_or_directory(tool):
    create(tool, "/memories/dir/f.txt", "x")
    for raw, shown in [
        ("/memories/nope.txt", "/memories/nope.txt"),
        ("/memories/dir", "/memories/dir"),
        ("/memories/dir/", "/memories/dir"),
        ("/memories", "/memories"),
    ]:
        assert err(tool, command="insert", path=raw, insert_line=0, insert_text="y") == (
            f"Error: The path {shown} does not exist"
        )


# --- delete ----------------------------------------------------------------------------


def test_delete_file(tool, s3):
    create(tool, "/memories/f.txt", "x")
    create(tool, "/memories/g.txt", "y")
    assert ok(tool, command="delete", path="/memories/f.txt") == "Successfully deleted /memories/f.txt"
    assert bucket_keys(s3, tool) == ["agents/agent-42/g.txt"]
    assert err(tool, command="view", path="/memories/f.txt") == (
        "The path /memories/f.txt does not exist. Please provide a valid path."
    )


def test_delete_directory_recursively(tool, s3):
    for path in ("/memories/d/a.txt", "/memories/d/sub/b.txt", "/memories/d/sub/deeper/c.txt", "/memories/d/.h"):
        create(tool, path, "x")
    create(tool, "/memories/d2/keep.txt", "k")  # shares the name prefix "d"
    create(tool, "/memories/d.txt", "k")
    assert ok(tool, command="delete", path="/memories/d/") == "Successfully deleted /memories/d"
    assert bucket_keys(s3, tool) == ["agents/agent-42/d.txt", "agents/agent-42/d2/keep.txt"]
    assert err(tool, command="view", path="/memories/d") == (
        "The path /memories/d does not exist. Please provide a valid path."
    )


def test_delete_missing(tool):
    assert err(tool, command="delete", path="/memories/nope") == "Error: The path /memories/nope does not exist"
    assert err(tool, command="delete", path="/memories/nope/") == "Error: The path /memories/nope does not exist"


def test_delete_root(tool, s3):
    create(tool, "/memories/f.txt", "x")
    for raw in ("/memories", "/memories/"):
        assert err(tool, command="delete", path=raw) == "Error: Cannot delete the /memories directory itself"
    assert bucket_keys(s3, tool) == ["agents/agent-42/f.txt"]


# --- rename ----------------------------------------------------------------------------


def test_rename_file(tool, s3):
    create(tool, "/memories/a.txt", "alpha\nno newline")
    assert ok(tool, command="rename", old_path="/memories/a.txt", new_path="/memories/b.txt") == (
        "Successfully renamed /memories/a.txt to /memories/b.txt"
    )
    assert bucket_keys(s3, tool) == ["agents/agent-42/b.txt"]
    assert stored(tool, "/memories/b.txt") == "alpha\nno newline"


def test_rename_directory_with_nested_content(tool, s3):
    files = {
        "/memories/d/a.txt": "a\n",
        "/memories/d/sub/b.md": "unicode é 日本語, no newline",
        "/memories/d/sub/deeper/c": "",
        "/memories/d/.hidden": "h\r\n",
    }
    for path, text in files.items():
        create(tool, path, text)
    create(tool, "/memories/d2/keep.txt", "k")
    assert ok(tool, command="rename", old_path="/memories/d", new_path="/memories/new/place") == (
        "Successfully renamed /memories/d to /memories/new/place"
    )
    assert bucket_keys(s3, tool) == [
        "agents/agent-42/d2/keep.txt",
        "agents/agent-42/new/place/.hidden",
        "agents/agent-42/new/place/a.txt",
        "agents/agent-42/new/place/sub/b.md",
        "agents/agent-42/new/place/sub/deeper/c",
    ]
    for path, text in files.items():
        moved = path.replace("/memories/d/", "/memories/new/place/")
        assert stored(tool, moved).encode("utf-8") == text.encode("utf-8")
    assert stored(tool, "/memories/d2/keep.txt") == "k"
    assert err(tool, command="view", path="/memories/d") == (
        "The path /memories/d does not exist. Please provide a valid path."
    )


def test_rename_parents_created_implicitly(tool):
    create(tool, "/memories/a.txt", "a")
    assert ok(tool, command="rename", old_path="/memories/a.txt", new_path="/memories/x/y/z.txt") == (
        "Successfully renamed /memories/a.txt to /memories/x/y/z.txt"
    )
    assert ok(tool, command="view", path="/memories") == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories\n"
        "4.0K\t/memories/x/\n"
        "4.0K\t/memories/x/y/"
    )


def test_rename_missing_source(tool):
    assert err(tool, command="rename", old_path="/memories/nope", new_path="/memories/b") == (
        "Error: The path /memories/nope does not exist"
    )


def test_rename_existing_destination(tool, s3):
    create(tool, "/memories/a.txt", "a")
    create(tool, "/memories/b.txt", "b")
    create(tool, "/memories/dir/c.txt", "c")
    create(tool, "/memories/dir2/e.txt", "e")
    cases = [
        ("/memories/a.txt", "/memories/b.txt", "/memories/b.txt"),
        ("/memories/a.txt", "/memories/dir", "/memories/dir"),
        ("/memories/a.txt", "/memories/dir/", "/memories/dir"),
        ("/memories/a.txt", "/memories", "/memories"),
        ("/memories/a.txt", "/memories/a.txt", "/memories/a.txt"),
        ("/memories/dir", "/memories/b.txt", "/memories/b.txt"),
        ("/memories/dir", "/memories/dir2", "/memories/dir2"),
        ("/memories/dir", "/memories/dir", "/memories/dir"),
    ]
    for old, new, shown in cases:
        assert err(tool, command="rename", old_path=old, new_path=new) == (
            f"Error: The destination {shown} already exists"
        )
    assert bucket_keys(s3, tool) == [
        "agents/agent-42/a.txt",
        "agents/agent-42/b.txt",
        "agents/agent-42/dir/c.txt",
        "agents/agent-42/dir2/e.txt",
    ]
    assert [stored(tool, p) for p in ("/memories/a.txt", "/memories/b.txt")] == ["a", "b"]


def test_rename_root(tool):
    for raw in ("/memories", "/memories/"):
        assert err(tool, command="rename", old_path=raw, new_path="/memories/x") == (
            "Error: Cannot rename the /memories directory itself"
        )


def test_rename_directory_into_itself(tool, s3):
    create(tool, "/memories/d/f.txt", "x")
    for new in ("/memories/d/sub", "/memories/d/a/b"):
        assert err(tool, command="rename", old_path="/memories/d", new_path=new) == (
            "Error: Cannot move /memories/d into itself"
        )
    assert err(tool, command="rename", old_path="/memories/d/", new_path="/memories/d/x") == (
        "Error: Cannot move /memories/d into itself"
    )
    assert bucket_keys(s3, tool) == ["agents/agent-42/d/f.txt"]


def test_rename_destination_parent_is_a_file(tool, s3):
    create(tool, "/memories/a.txt", "a")
    create(tool, "/memories/f.txt", "f")
    create(tool, "/memories/dir/c.txt", "c")
    assert err(tool, command="rename", old_path="/memories/a.txt", new_path="/memories/f.txt/a.txt") == (
        "Error: Cannot create /memories/f.txt/a.txt: /memories/f.txt is a file"
    )
    assert err(tool, command="rename", old_path="/memories/dir", new_path="/memories/f.txt/x/y") == (
        "Error: Cannot create /memories/f.txt/x/y: /memories/f.txt is a file"
    )
    assert bucket_keys(s3, tool) == ["agents/agent-42/a.txt", "agents/agent-42/dir/c.txt", "agents/agent-42/f.txt"]


# --- invalid paths, for every command, before any storage call --------------------------

BAD_PATHS = [
    ("/memoriesX/a", "/memoriesX/a", "it must start with /memories"),
    ("memories/a", "memories/a", "it must start with /memories"),
    ("/memories/../agents/other", "/memories/../agents/other", "it contains '..'"),
    ("/memories/./a", "/memories/./a", "it contains '.'"),
    ("/memories//a", "/memories//a", "it contains an empty segment"),
    ("/memories/a\\b", "/memories/a\\\\b", "it contains a backslash"),
    ("/memories/%2e%2e/x", "/memories/%2e%2e/x", "it contains a percent-encoded sequence"),
    ("/memories/a\nb", "/memories/a\\nb", "it contains a control character"),
    ("/memories/a\x00", "/memories/a\\x00", "it contains a control character"),
    ("/memories/a\ud800", "/memories/a\\ud800", "it contains an unpaired surrogate"),
    ("/memories/.s3memory/x", "/memories/.s3memory/x", "the name .s3memory is reserved"),
    ("/memories/" + "s" * 256, "/memories/" + "s" * 256, "a segment is longer than 255 bytes"),
]


def _commands(raw: str) -> list[dict[str, object]]:
    return [
        {"command": "view", "path": raw},
        {"command": "view", "path": raw, "view_range": [1, 2]},
        {"command": "create", "path": raw, "file_text": "x"},
        {"command": "str_replace", "path": raw, "old_str": "a", "new_str": "b"},
        {"command": "insert", "path": raw, "insert_line": 0, "insert_text": "x"},
        {"command": "delete", "path": raw},
        {"command": "rename", "old_path": raw, "new_path": "/memories/ok"},
        {"command": "rename", "old_path": "/memories/ok", "new_path": raw},
    ]


def test_invalid_path_every_command_no_storage_call(tool, counter):
    counter.reset()
    for raw, shown, reason in BAD_PATHS:
        for command in _commands(raw):
            assert err(tool, **command) == f"Error: Invalid path {shown}: {reason}", command
    assert counter.calls == []
    ok(tool, command="view", path="/memories")  # the counter does see storage calls
    # The listing answers the pending-change check too. With hidden names, a new agent's first
    # command also looks for plain files below its root (once per tool).
    expected = {"s3:ListObjectsV2": 2} if encrypted_names(tool) else {"s3:ListObjectsV2": 1}
    assert counter.by_op() == expected


def test_invalid_key_length_shown_in_full(tool, counter):
    raw = "/memories/" + "/".join(["k" * 250] * 5)  # segments fit, the key does not
    counter.reset()
    assert err(tool, command="create", path=raw, file_text="x") == (
        f"Error: Invalid path {raw}: it is too long to store (keys are limited to 1,024 bytes)"
    )
    assert counter.calls == []


def test_unpaired_surrogate_in_text_is_refused(tool, s3):
    """JSON can carry a lone "\\ud800"; it cannot be stored as UTF-8 and must not raise raw."""
    create(tool, "/memories/f.txt", "abc")
    lone = "x\udc00"
    assert err(tool, command="create", path="/memories/g.txt", file_text=lone) == (
        "Error: Invalid `file_text` parameter: it must be valid Unicode text (no unpaired surrogates)"
    )
    assert err(tool, command="str_replace", path="/memories/f.txt", old_str="abc", new_str=lone) == (
        "Error: Invalid `new_str` parameter: it must be valid Unicode text (no unpaired surrogates)"
    )
    assert err(tool, command="str_replace", path="/memories/f.txt", old_str=lone, new_str="x") == (
        "Error: Invalid `old_str` parameter: it must be valid Unicode text (no unpaired surrogates)"
    )
    assert err(tool, command="insert", path="/memories/f.txt", insert_line=0, insert_text=lone) == (
        "Error: Invalid `insert_text` parameter: it must be valid Unicode text (no unpaired surrogates)"
    )
    assert bucket_keys(s3, tool) == ["agents/agent-42/f.txt"]
    assert stored(tool, "/memories/f.txt") == "abc"


# --- limits and unknown commands -------------------------------------------------------


def test_file_size_limit(make_tool):
    tool = make_tool(limits=Limits(max_file_bytes=10))
    assert err(tool, command="create", path="/memories/f.txt", file_text="x" * 11) == (
        "Error: Cannot write /memories/f.txt: the file would be 11 bytes, over the limit of 10 bytes. "
        "Nothing was changed."
    )
    assert err(tool, command="create", path="/memories/u.txt", file_text="é" * 6) == (
        "Error: Cannot write /memories/u.txt: the file would be 12 bytes, over the limit of 10 bytes. "
        "Nothing was changed."
    )
    create(tool, "/memories/f.txt", "x" * 10)
    assert err(tool, command="str_replace", path="/memories/f.txt", old_str="x" * 10, new_str="y" * 11) == (
        "Error: Cannot write /memories/f.txt: the file would be 11 bytes, over the limit of 10 bytes. "
        "Nothing was changed."
    )
    assert err(tool, command="insert", path="/memories/f.txt", insert_line=1, insert_text="") == (
        "Error: Cannot write /memories/f.txt: the file would be 12 bytes, over the limit of 10 bytes. "
        "Nothing was changed."
    )
    assert stored(tool, "/memories/f.txt") == "x" * 10


def test_file_size_limit_thousands_separators(make_tool):
    tool = make_tool(limits=Limits(max_file_bytes=1_000_000))
    assert err(tool, command="create", path="/memories/f.txt", file_text="x" * 1_000_001) == (
        "Error: Cannot write /memories/f.txt: the file would be 1,000,001 bytes, over the limit of 1,000,000 bytes. "
        "Nothing was changed."
    )


def test_unknown_command(tool, counter):
    counter.reset()
    for command in ("frob", "VIEW", "clear_all_memory"):
        assert err(tool, command=command, path="/memories") == (
            f"Error: Unknown memory command '{command}'; use one of: view, create, str_replace, insert, delete, rename"
        )
    assert counter.calls == []


def test_missing_command(tool, counter):
    counter.reset()
    with pytest.raises(ToolError) as caught:
        tool.call({"path": "/memories"})
    assert caught.value.content == (
        "Error: Missing `command` parameter; use one of: view, create, str_replace, insert, delete, rename"
    )
    assert counter.calls == []
