"""Property tests: no path, however hostile, leads outside `/memories` or the agent's S3 prefix."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from s3memory.core import paths
from s3memory.errors import InvalidPath
from tests.support import BUCKET, assert_one_branch_key, called, ok, without_keystore

ROOT = "agents/victim-1/"
# What the messages and keys must never contain raw: C0 controls, DEL, C1 controls, line separators.
LINE_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")

# --- hostile path strategy -------------------------------------------------------------

_ATOMS = [
    "..", ".", "", "...", "%2e", "%2E%2e", "%2e%2E%2f%5C", "%2f", "%2F", "%5c", "%5C", "%00", "%", "%zz", "\\",
    "..\\..", "..%2f..", "victim-10", "victim-1", "agents", "other", "secret.txt", "memories", "memoriesX",
    ".s3memory", "node_modules", "a", "b.txt", " ", "~", "*", "?", "#", ":", "é", "日本", "\u202e", "\ufeff",
]  # fmt: skip
_CONTROLS = st.characters(min_codepoint=0, max_codepoint=0x1F) | st.sampled_from(["\x7f", "\x85", "\u2028", "\u2029"])
_SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
_SEGMENTS = st.one_of(
    st.sampled_from(_ATOMS),
    st.text(max_size=6),
    st.text(alphabet=st.sampled_from("./\\%2eEfF5cC"), max_size=8),
    st.builds(lambda a, c, b: a + c + b, st.sampled_from(_ATOMS), _CONTROLS | _SURROGATES, st.sampled_from(_ATOMS)),
    st.integers(250, 300).map(lambda n: "x" * n),
    st.integers(120, 130).map(lambda n: "é" * n),
)
_PREFIXES = [
    "/memories/", "/memories", "/memories//", "memories/", "/memoriesX/", "/memories-other/", "/", "", "../",
    "/memories/../", "/memories/./", "//memories/", "\\memories\\", "/memories%2f", "/MEMORIES/", "/etc/",
    "/memories/../victim-10/", "/memories/../../", "~/memories/",
]  # fmt: skip
_SEPARATORS = ["/", "/", "/", "//", "\\", "/./", "/../", "%2f", "%2F", "%5c"]


@st.composite
def hostile_paths(draw: st.DrawFn) -> str:
    prefix = draw(st.sampled_from(_PREFIXES))
    segments = draw(st.lists(_SEGMENTS, max_size=6))
    path = prefix
    for i, seg in enumerate(segments):
        path += (draw(st.sampled_from(_SEPARATORS)) if i else "") + seg
    return path + draw(st.sampled_from(["", "", "/", "//", "/..", "/."]))


# Plausible paths, so that rename and delete meet existing files and directories too, and
# plausible paths with one hostile segment, which a lax validator would let through to S3.
_NAMES = ["a", "b.txt", "d", "victim-10", "agents", "other", "secret.txt"]
_TWISTS = ["..", "../..", ".", "", "%2e%2e", "%2F", "..\\..", "a\\b", "\x00", "\n", "\ud800", ".s3memory", "x" * 256]
_valid_paths = st.lists(st.sampled_from(_NAMES), max_size=3).map(
    lambda segs: "/memories" + "".join("/" + s for s in segs)
)


@st.composite
def near_valid_paths(draw: st.DrawFn) -> str:
    segments = draw(st.lists(st.sampled_from(_NAMES), max_size=3))
    segments.insert(draw(st.integers(0, len(segments))), draw(st.sampled_from(_TWISTS)))
    return "/memories/" + "/".join(segments)


_any_path = st.one_of(hostile_paths(), _valid_paths, near_valid_paths())


# --- (1) pure: parse either refuses cleanly or yields a key inside the root --------------


def _parse(raw: str) -> tuple[paths.MemoryPath | None, InvalidPath | None]:
    """parse() may only succeed or raise InvalidPath; any other exception fails the test."""
    try:
        return paths.parse(raw, key_root=ROOT), None
    except InvalidPath as exc:
        return None, exc


@settings(max_examples=1000, deadline=None)
@given(st.one_of(hostile_paths(), near_valid_paths()))
def test_parse_refuses_cleanly_or_stays_inside_the_root(raw):
    p, refused = _parse(raw)
    if refused is not None:
        message = refused.message
        assert message.startswith("Error: Invalid path ")
        assert LINE_BREAKING.search(message) is None
        assert message.isprintable()
        assert str(refused) == message
        return
    assert p is not None
    key = paths.object_key(ROOT, p)
    assert key.startswith(ROOT)
    assert len(key.encode("utf-8")) <= 1024
    assert p.segments == () or key[len(ROOT) :].split("/") == list(p.segments)
    for seg in p.segments:
        assert seg not in ("", ".", "..")
        assert "\\" not in seg
        assert len(seg.encode("utf-8")) <= 255
    assert LINE_BREAKING.search(key) is None
    assert p.segments[:1] != (".s3memory",)
    assert raw in (p.display, p.display + "/")
    assert paths.parse(p.display, key_root=ROOT) == p
    if not p.is_root:
        assert paths.path_of_key(ROOT, key) == p


# --- (2) end to end on moto: hostile commands never touch another key -------------------

_text = st.text(alphabet=st.sampled_from(["a", "b", " ", "\n", ".", "é", "\ud800"]), max_size=12)
_calls = st.lists(
    st.one_of(
        st.builds(lambda p, t: {"command": "create", "path": p, "file_text": t}, _any_path, _text),
        st.builds(lambda p: {"command": "view", "path": p}, _any_path),
        st.builds(lambda p: {"command": "delete", "path": p}, _any_path),
        st.builds(lambda a, b: {"command": "rename", "old_path": a, "new_path": b}, _any_path, _any_path),
        st.builds(lambda p: {"command": "str_replace", "path": p, "old_str": "a", "new_str": "b"}, _any_path),
        st.builds(lambda p: {"command": "insert", "path": p, "insert_line": 0, "insert_text": "z"}, _any_path),
    ),
    min_size=1,
    max_size=6,
)

NEIGHBOURS = {
    "secret.txt": b"bucket root secret",
    "agents/other": b"another object next to the agents",
    "agents/victim-1": b"an object named like the agent, without the slash",
    "agents/victim-1.bak/x": b"a sibling prefix",
    "agents/memories/x": b"memories outside the agent",
    "memories/x": b"memories at the bucket root",
}


def _all_objects(s3) -> dict[str, tuple[bytes, str]]:
    found: dict[str, tuple[bytes, str]] = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        for obj in page.get("Contents", []):
            body = s3.get_object(Bucket=BUCKET, Key=obj["Key"])["Body"].read()
            found[obj["Key"]] = (body, obj["ETag"])
    return found


def _clear_victim(s3) -> None:
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=ROOT).get("Contents", [])
    if listed:
        s3.delete_objects(Bucket=BUCKET, Delete={"Objects": [{"Key": o["Key"]} for o in listed]})


def test_hostile_commands_stay_inside_the_agent_prefix(make_tool, s3):
    neighbour = make_tool("victim-10")
    ok(neighbour, command="create", path="/memories/x.txt", file_text="the neighbour's memory")
    ok(neighbour, command="create", path="/memories/d/y.txt", file_text="nested neighbour memory")
    for key, body in NEIGHBOURS.items():
        s3.put_object(Bucket=BUCKET, Key=key, Body=body)
    before = _all_objects(s3)
    assert set(without_keystore(before)) == {*NEIGHBOURS, "agents/victim-10/x.txt", "agents/victim-10/d/y.txt"}
    assert_one_branch_key(before, "agents/victim-10/")  # the neighbour's keystore: outside the victim too
    victim = make_tool("victim-1")

    @settings(max_examples=60, deadline=None)
    @given(_calls)
    def run(calls):
        _clear_victim(s3)
        ok(victim, command="create", path="/memories/a", file_text="a file")
        ok(victim, command="create", path="/memories/d/b.txt", file_text="a nested file")
        for call in calls:
            succeeded, text = called(victim, call)  # settled: no intent record goes between the LIST and GETs below
            assert isinstance(text, str)
            if not succeeded:
                assert text.startswith(("Error:", "The path ", "No replacement", "File ")), text
        after = _all_objects(s3)
        outside = {key: value for key, value in after.items() if not key.startswith(ROOT)}
        assert outside == before
        for key in after:
            if key.startswith(ROOT):
                path = paths.path_of_key(ROOT, key)
                assert path is not None
                assert paths.parse(path.display, key_root=ROOT, reserved_ok=True) == path

    run()
