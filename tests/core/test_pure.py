"""Unit tests of the pure modules: format, edit, tree and paths (no storage involved)."""

from __future__ import annotations

import pytest

from s3memory.core import edit, paths
from s3memory.core.messages import format_size
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError, InvalidPath
from tests.support.views import view_entries

# --- format.format_size ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (0, "0B"),
        (1, "1B"),
        (512, "512B"),
        (1023, "1023B"),
        (1024, "1.0K"),
        (1536, "1.5K"),
        (2048, "2.0K"),
        (4096, "4.0K"),
        (1200, "1.2K"),
        (1024 * 1024, "1.0M"),
        (1_048_575, "1.0M"),  # rounds up to the next unit, never "1024.0K"
        (1_258_291, "1.2M"),
        (1024**3, "1.0G"),
        (3 * 1024**3 // 2, "1.5G"),
        (5 * 1024**4, "5120.0G"),  # G is the largest unit
    ],
)
def test_format_size(n, expected):
    assert format_size(n) == expected


# --- edit.split_lines ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", []),
        ("a", ["a"]),
        ("a\n", ["a"]),
        ("a\nb\n", ["a", "b"]),
        ("a\nb", ["a", "b"]),
        ("\n", [""]),
        ("\n\n", ["", ""]),
        ("a\n\n", ["a", ""]),
        ("a\r\nb", ["a\r", "b"]),
        ("é\tx\n", ["é\tx"]),
    ],
)
def test_split_lines(text, lines):
    assert edit.split_lines(text) == lines


# --- edit.view_slice -------------------------------------------------------------------

FIVE = "one\ntwo\nthree\nfour\nfive\n"
D = "/memories/f.txt"


def test_view_slice_whole_file():
    s = edit.view_slice(FIVE, D)
    assert (s.first, s.lines, s.n_lines) == (1, ["one", "two", "three", "four", "five"], 5)


def test_view_slice_empty_file_has_no_lines():
    s = edit.view_slice("", D)
    assert (s.first, s.lines, s.n_lines) == (1, [], 0)


@pytest.mark.parametrize(
    ("view_range", "first", "lines"),
    [
        ([2, 3], 2, ["two", "three"]),
        ([1, 1], 1, ["one"]),
        ([5, 5], 5, ["five"]),
        ([4, -1], 4, ["four", "five"]),
        ([1, -1], 1, ["one", "two", "three", "four", "five"]),
        ([3, 99], 3, ["three", "four", "five"]),  # end beyond the last line is the last line
        ((2, 2), 2, ["two"]),
    ],
)
def test_view_slice_ranges(view_range, first, lines):
    s = edit.view_slice(FIVE, D, view_range)
    assert (s.first, s.lines, s.n_lines) == (first, lines, 5)


@pytest.mark.parametrize("view_range", [[0, 2], [-1, -1], [6, 6], [6, -1], [3, 2], [2, 0], [2, -2], [1, -5]])
def test_view_slice_invalid_range(view_range):
    start, end = view_range
    with pytest.raises(CommandError) as info:
        edit.view_slice(FIVE, D, view_range)
    assert info.value.message == (
        f"Error: Invalid `view_range` parameter: [{start}, {end}]. "
        "It should be within the range of lines of the file: [1, 5]"
    )


def test_view_slice_any_range_of_empty_file_is_invalid():
    with pytest.raises(CommandError) as info:
        edit.view_slice("", D, [1, -1])
    assert info.value.message == (
        "Error: Invalid `view_range` parameter: [1, -1]. It should be within the range of lines of the file: [1, 0]"
    )


@pytest.mark.parametrize(
    ("view_range", "shown"),
    [([1], "[1]"), ([1, 2, 3], "[1, 2, 3]"), ("1,2", "'1,2'"), ([True, 2], "[True, 2]"), ([1, "2"], "[1, '2']")],
)
def test_view_slice_malformed_range(view_range, shown):
    with pytest.raises(CommandError) as info:
        edit.view_slice(FIVE, D, view_range)
    assert info.value.message == (
        f"Error: Invalid `view_range` parameter: {shown}. It should be a list of two integers: [start, end]"
    )


def test_view_slice_line_limit():
    with pytest.raises(CommandError) as info:
        edit.view_slice("\n" * 1_000_000, D)
    assert info.value.message == "File /memories/f.txt exceeds maximum line limit of 999,999 lines."
    s = edit.view_slice("\n" * 999_999, D, [999_999, -1])
    assert (s.first, s.lines, s.n_lines) == (999_999, [""], 999_999)


# --- edit.find_occurrences(...).lines----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle", "lines"),
    [
        ("foo\nbar\nbaz\nfoo\n", "foo", [1, 4]),
        ("a\na\na", "a", [1, 2, 3]),
        ("aaa", "aa", [1, 1]),  # overlapping occurrences are counted
        ("a\na\na", "a\na", [1, 2]),  # overlapping across lines
        ("x\ny\nx\ny", "x\ny", [1, 3]),
        ("abc", "z", []),
        ("", "a", []),
        ("\n\nneedle", "needle", [3]),
    ],
)
def test_occurrence_lines(text, needle, lines):
    assert edit.find_occurrences(text, needle).lines == lines


# --- edit.replace_unique ---------------------------------------------------------------

TWENTY = "".join(f"line{i}\n" for i in range(1, 21))


def _numbered(first, last):
    return [f"line{i}" for i in range(first, last + 1)]


def test_replace_unique_middle_has_four_lines_of_context():
    r = edit.replace_unique(TWENTY, "line10\n", "LINE10\n", D)
    assert r.text == TWENTY.replace("line10\n", "LINE10\n")
    assert r.snippet_first == 6
    assert r.snippet == [*_numbered(6, 9), "LINE10", *_numbered(11, 14)]


def test_replace_unique_at_file_start():
    r = edit.replace_unique(TWENTY, "line1\n", "first\n", D)
    assert r.snippet_first == 1
    assert r.snippet == ["first", *_numbered(2, 5)]


def test_replace_unique_at_file_end():
    r = edit.replace_unique(TWENTY, "line20", "last", D)
    assert r.text.endswith("line19\nlast\n")
    assert r.snippet_first == 16
    assert r.snippet == [*_numbered(16, 19), "last"]


def test_replace_unique_multiline_new_widens_snippet():
    r = edit.replace_unique(TWENTY, "line10", "A\nB\nC", D)
    assert r.snippet_first == 6
    assert r.snippet == [*_numbered(6, 9), "A", "B", "C", *_numbered(11, 14)]


def test_replace_unique_removing_lines():
    r = edit.replace_unique(TWENTY, "line10\nline11\n", "", D)
    assert r.text == "".join(f"line{i}\n" for i in range(1, 21) if i not in (10, 11))
    assert r.snippet_first == 6
    # The changed position (line 10, now holding line12) with 4 lines on each side.
    assert r.snippet == [*_numbered(6, 9), *_numbered(12, 16)]


def test_replace_unique_short_file():
    r = edit.replace_unique("a\nb", "b", "c", D)
    assert (r.text, r.snippet_first, r.snippet) == ("a\nc", 1, ["a", "c"])


def test_replace_unique_not_found_and_empty():
    for old in ("nope", ""):
        with pytest.raises(CommandError) as info:
            edit.replace_unique(TWENTY, old, "x", D)
        assert info.value.message == (
            f"No replacement was performed, old_str `{old}` did not appear verbatim in /memories/f.txt."
        )


def test_replace_unique_multiple():
    with pytest.raises(CommandError) as info:
        edit.replace_unique("foo\nbar\nbaz\nfoo\n", "foo", "x", D)
    assert info.value.message == (
        "No replacement was performed. Multiple occurrences of old_str `foo` in lines: 1, 4. Please ensure it is unique"
    )
    with pytest.raises(CommandError) as info:
        edit.replace_unique("aaa", "aa", "x", D)
    assert info.value.message == (
        "No replacement was performed. Multiple occurrences of old_str `aa` in lines: 1, 1. Please ensure it is unique"
    )


# --- edit.insert_text ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "new", "result"),
    [
        ("a\nb\n", 0, "X", "X\na\nb\n"),
        ("a\nb\n", 1, "X", "a\nX\nb\n"),
        ("a\nb\n", 2, "X", "a\nb\nX\n"),
        ("a\nb\n", 1, "X\n", "a\nX\nb\n"),
        ("a\nb\n", 1, "X\nY", "a\nX\nY\nb\n"),
        ("a\nb", 2, "X", "a\nb\nX\n"),  # the last line gets its newline first
        ("a\nb", 1, "X", "a\nX\nb"),
        ("a\nb", 0, "X", "X\na\nb"),
        ("", 0, "X", "X\n"),
        ("", 0, "", "\n"),
        ("\n", 1, "X", "\nX\n"),
    ],
)
def test_insert_text(text, line, new, result):
    assert edit.insert_text(text, line, new) == result


@pytest.mark.parametrize(("line", "shown"), [(-1, "-1"), (3, "3"), (True, "True"), ("1", "1"), (None, "None")])
def test_insert_text_out_of_range(line, shown):
    with pytest.raises(CommandError) as info:
        edit.insert_text("a\nb\n", line, "X")
    assert info.value.message == (
        f"Error: Invalid `insert_line` parameter: {shown}. It should be within the range of lines of the file: [0, 2]"
    )


# --- tree.view_entries -----------------------------------------------------------------


def test_view_entries_depth_first_sorted_by_name():
    files = [
        (("b.txt",), 3),
        (("a-b.txt",), 1536),
        (("B.txt",), 0),
        (("a", "x.md"), 2048),
        (("a", "sub", "y.txt"), 5),
        (("a", "sub", "deep", "far.txt"), 5),
        (("c", "only", "z"), 1),
    ]
    assert view_entries(files) == [
        ("0B", "B.txt"),
        ("4.0K", "a/"),
        ("4.0K", "a/sub/"),
        ("2.0K", "a/x.md"),
        ("1.5K", "a-b.txt"),  # "a" sorts before "a-b.txt": each level is sorted by name
        ("3B", "b.txt"),
        ("4.0K", "c/"),
        ("4.0K", "c/only/"),
    ]


def test_view_entries_hidden_and_node_modules_dropped_with_contents():
    files = [
        ((".git", "config"), 10),
        ((".env",), 10),
        (("node_modules", "pkg", "index.js"), 10),
        (("a", ".cache", "x"), 10),
        (("a", "node_modules"), 10),
        (("a", "ok"), 10),
        (("a", "b", ".hidden"), 10),
        (("node_modules_not",), 10),
    ]
    dirs = [(".hiddendir",), ("a", ".d"), ("a", "node_modules")]
    assert view_entries(files, dirs) == [
        ("4.0K", "a/"),
        ("4.0K", "a/b/"),
        ("10B", "a/ok"),
        ("10B", "node_modules_not"),
    ]


def test_view_entries_known_directories_without_contents():
    assert view_entries([], [("a", "b"), ("a",), ("z", "y", "x")]) == [
        ("4.0K", "a/"),
        ("4.0K", "a/b/"),
        ("4.0K", "z/"),
        ("4.0K", "z/y/"),
    ]


def test_view_entries_empty():
    assert view_entries([]) == []


# --- paths.parse -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "segments"),
    [
        ("/memories", ()),
        ("/memories/", ()),
        ("/memories/a", ("a",)),
        ("/memories/a/", ("a",)),
        ("/memories/a/b.txt", ("a", "b.txt")),
        ("/memories/notes with spaces.md", ("notes with spaces.md",)),
        ("/memories/日本語/ノート.md", ("日本語", "ノート.md")),
        ("/memories/émoji 🎉", ("émoji 🎉",)),
        ("/memories/.hidden", (".hidden",)),
        ("/memories/a/.s3memory", ("a", ".s3memory")),  # reserved only as the first segment
        ("/memories/...", ("...",)),
        ("/memories/..a", ("..a",)),
        ("/memories/100%", ("100%",)),
        ("/memories/50%off", ("50%off",)),  # "%of" is not a percent-encoding
        ("/memories/" + "a" * 255, ("a" * 255,)),
        ("/memories/" + "é" * 127 + "a", ("é" * 127 + "a",)),  # 255 bytes
    ],
)
def test_parse_accepts(raw, segments):
    p = paths.parse(raw)
    assert p == MemoryPath(segments)
    assert p.display == "/memories" + "".join("/" + s for s in segments)


def _rejected(raw, **kwargs):
    with pytest.raises(InvalidPath) as info:
        paths.parse(raw, **kwargs)
    return info.value.message


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("/memoriesX/a", "Error: Invalid path /memoriesX/a: it must start with /memories"),
        ("/memoriesX", "Error: Invalid path /memoriesX: it must start with /memories"),
        ("/memorie", "Error: Invalid path /memorie: it must start with /memories"),
        ("memories/a", "Error: Invalid path memories/a: it must start with /memories"),
        ("/etc/passwd", "Error: Invalid path /etc/passwd: it must start with /memories"),
        ("", "Error: Invalid path : it must start with /memories"),
        ("/", "Error: Invalid path /: it must start with /memories"),
        ("/MEMORIES/a", "Error: Invalid path /MEMORIES/a: it must start with /memories"),
        ("/memories/../x", "Error: Invalid path /memories/../x: it contains '..'"),
        ("/memories/..", "Error: Invalid path /memories/..: it contains '..'"),
        ("/memories/a/../../b", "Error: Invalid path /memories/a/../../b: it contains '..'"),
        ("/memories/./a", "Error: Invalid path /memories/./a: it contains '.'"),
        ("/memories/a/.", "Error: Invalid path /memories/a/.: it contains '.'"),
        ("/memories//a", "Error: Invalid path /memories//a: it contains an empty segment"),
        ("/memories/a//", "Error: Invalid path /memories/a//: it contains an empty segment"),
        ("/memories//", "Error: Invalid path /memories//: it contains an empty segment"),
        ("/memories/a\\b", "Error: Invalid path /memories/a\\\\b: it contains a backslash"),
        ("/memories\\..\\x", "Error: Invalid path /memories\\\\..\\\\x: it contains a backslash"),
        ("/memories/%2e%2e/x", "Error: Invalid path /memories/%2e%2e/x: it contains a percent-encoded sequence"),
        ("/memories/%2E", "Error: Invalid path /memories/%2E: it contains a percent-encoded sequence"),
        ("/memories/a%2Fb", "Error: Invalid path /memories/a%2Fb: it contains a percent-encoded sequence"),
        ("/memories/a%2fb", "Error: Invalid path /memories/a%2fb: it contains a percent-encoded sequence"),
        ("/memories/a%5cb", "Error: Invalid path /memories/a%5cb: it contains a percent-encoded sequence"),
        ("/memories/a%5Cb", "Error: Invalid path /memories/a%5Cb: it contains a percent-encoded sequence"),
        ("/memories/%41", "Error: Invalid path /memories/%41: it contains a percent-encoded sequence"),
        ("/memories%2F..", "Error: Invalid path /memories%2F..: it contains a percent-encoded sequence"),
        ("/memories/.s3memory", "Error: Invalid path /memories/.s3memory: the name .s3memory is reserved"),
        (
            "/memories/.s3memory/intents/x",
            "Error: Invalid path /memories/.s3memory/intents/x: the name .s3memory is reserved",
        ),
        ("/memories/a\nb", "Error: Invalid path /memories/a\\nb: it contains a control character"),
        ("/memories/a\ud800b", "Error: Invalid path /memories/a\\ud800b: it contains an unpaired surrogate"),
        ("/memories/\udfff", "Error: Invalid path /memories/\\udfff: it contains an unpaired surrogate"),
    ],
)
def test_parse_rejects(raw, message):
    assert _rejected(raw) == message


@pytest.mark.parametrize("code", [*range(0x20), 0x7F])
def test_parse_rejects_every_control_character_escaped(code):
    ch = chr(code)
    message = _rejected(f"/memories/a{ch}b")
    assert message == f"Error: Invalid path /memories/a{repr(ch)[1:-1]}b: it contains a control character"
    assert ch not in message


def test_parse_control_escapes_are_repr_style():
    assert _rejected("/memories/\x00") == "Error: Invalid path /memories/\\x00: it contains a control character"
    assert _rejected("/memories/\t") == "Error: Invalid path /memories/\\t: it contains a control character"
    assert _rejected("/memories/\r\n") == "Error: Invalid path /memories/\\r\\n: it contains a control character"
    assert _rejected("/memories/\x7f") == "Error: Invalid path /memories/\\x7f: it contains a control character"


def test_parse_segment_length_limit_in_bytes():
    assert _rejected("/memories/" + "a" * 256) == (
        f"Error: Invalid path /memories/{'a' * 256}: a segment is longer than 255 bytes"
    )
    assert _rejected("/memories/x/" + "é" * 128) == (  # 128 characters, 256 bytes
        f"Error: Invalid path /memories/x/{'é' * 128}: a segment is longer than 255 bytes"
    )


def test_parse_key_length_limit():
    root = "agents/agent-42/"  # 16 bytes
    body = "/".join(["a" * 255, "b" * 255, "c" * 255, "d" * 230])  # 998 bytes
    fits = "/memories/" + body + "/" + "e" * 9  # key: 16 + 998 + 1 + 9 = 1,024 bytes
    p = paths.parse(fits, key_root=root)
    assert len(paths.object_key(root, p).encode()) == 1024
    too_long = fits + "e"
    assert _rejected(too_long, key_root=root) == (
        f"Error: Invalid path {too_long}: it is too long to store (keys are limited to 1,024 bytes)"
    )
    # Multi-byte characters count in bytes: a 639-character key of 1,274 bytes.
    wide = "/memories/" + "/".join(["é" * 127] * 5)
    assert _rejected(wide) == (f"Error: Invalid path {wide}: it is too long to store (keys are limited to 1,024 bytes)")


def test_parse_reserved_allowed_for_bookkeeping():
    assert paths.parse("/memories/.s3memory/intents/x", reserved_ok=True) == MemoryPath((".s3memory", "intents", "x"))


def test_parse_rejects_non_strings():
    with pytest.raises(InvalidPath) as info:
        paths.parse(None)
    assert info.value.message == "Error: Invalid path None: it must be a string"
    assert isinstance(info.value, ValueError)


# --- paths: keys -----------------------------------------------------------------------

ROOT = "agents/agent-42/"


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("/memories/a.txt", "agents/agent-42/a.txt"),
        ("/memories/a/b/c.md", "agents/agent-42/a/b/c.md"),
        ("/memories/日本/x y", "agents/agent-42/日本/x y"),
        ("/memories/.hidden", "agents/agent-42/.hidden"),
    ],
)
def test_object_key_round_trip(raw, key):
    p = paths.parse(raw, key_root=ROOT)
    assert paths.object_key(ROOT, p) == key
    assert paths.path_of_key(ROOT, key) == p
    assert paths.path_of_key(ROOT, key).display == raw


def test_dir_prefix():
    assert paths.dir_prefix(ROOT, MemoryPath()) == "agents/agent-42/"
    assert paths.dir_prefix(ROOT, MemoryPath(("a", "b"))) == "agents/agent-42/a/b/"


@pytest.mark.parametrize(
    "key",
    [
        "agents/agent-42/",
        "agents/agent-42",
        "agents/agent-420/a",
        "agents/other/a",
        "a.txt",
        "agents/agent-42/a//b",
        "agents/agent-42/a/",
        "agents/agent-42/../x",
        "agents/agent-42/./x",
    ],
)
def test_path_of_key_rejects_foreign_and_malformed_keys(key):
    assert paths.path_of_key(ROOT, key) is None


def test_agent_root_is_slash_terminated():
    assert paths.agent_root("agents/", "victim-1") == "agents/victim-1/"
    assert not "agents/victim-10/x".startswith(paths.agent_root("agents/", "victim-1"))
