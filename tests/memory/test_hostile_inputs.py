"""Every input and every stored state gives a contract error: nothing but `ToolError` leaves
`S3MemoryTool.call`, and the MCP dispatch (`commands.answer`) always answers with text.

Hostile arguments for all six commands (integers past Python's int-to-str limit, lists nested past
its recursion limit, NaN, surrogates, wrong types), and stored headers tampered field by field with
out-of-range values (generations, content times, versions, providers, attribution records).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from s3memory.core import messages
from s3memory.memory.commands import answer
from tests.support import BUCKET, called

FILE = "/memories/f.md"
KEY = "agents/agent-42/f.md"
HUGE = 10**5000  # more digits than Python formats as decimal (4,300 by default)


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


_HOSTILE_VALUES = st.one_of(
    st.sampled_from([HUGE, -HUGE, [HUGE, 1], [1, HUGE], [HUGE], nested(100_000), math.nan, math.inf, -0.0, True]),
    st.sampled_from([None, "", "\ud800", "\u202e", "\x00", "/memories/../x", {"path": FILE}, [FILE], b"bytes"]),
    st.integers(),
    st.floats(),
    st.text(max_size=20),
    st.lists(st.integers(), max_size=3),
    st.sampled_from([FILE, "/memories", "/memories/new.md", "/memories/d/x.md", "/memories/d"]),
)
_COMMANDS = st.sampled_from([*messages.COMMANDS, "VIEW", "", HUGE, None, nested(10)])
_FIELDS = (
    "path",
    "view_range",
    "file_text",
    "old_str",
    "new_str",
    "insert_line",
    "insert_text",
    "old_path",
    "new_path",
)
_INPUTS = st.builds(
    lambda command, values: {"command": command, **values},
    _COMMANDS,
    st.dictionaries(st.sampled_from(_FIELDS), _HOSTILE_VALUES, max_size=5),
)


def _called(tool: Any, arguments: object) -> str:
    succeeded, text = called(tool, arguments)
    if not succeeded:
        assert isinstance(text, str)
    return text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(arguments=_INPUTS)
def test_hostile_arguments_give_contract_answers(tool: Any, arguments: dict[str, Any]) -> None:
    _called(tool, {"command": "create", "path": FILE, "file_text": "one\ntwo\n"})
    assert isinstance(_called(tool, arguments), str)
    text, is_error = answer(tool.memory, arguments)
    assert isinstance(text, str)
    assert isinstance(is_error, bool)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"command": "insert", "path": FILE, "insert_line": HUGE, "insert_text": "x"},
            "Error: Invalid `insert_line` parameter: <a value too large to show>. "
            "It should be within the range of lines of the file: [0, 2]",
        ),
        (
            {"command": "view", "path": FILE, "view_range": [HUGE, 1]},
            "Error: Invalid `view_range` parameter: [<a value too large to show>, 1]. "
            "It should be within the range of lines of the file: [1, 2]",
        ),
        (
            {"command": "view", "path": FILE, "view_range": [2, -HUGE]},
            "Error: Invalid `view_range` parameter: [2, <a value too large to show>]. "
            "It should be within the range of lines of the file: [1, 2]",
        ),
        (
            {"command": "view", "path": FILE, "view_range": [HUGE]},
            "Error: Invalid `view_range` parameter: <a value too large to show>. "
            "It should be a list of two integers: [start, end]",
        ),
        (
            {"command": "view", "path": FILE, "view_range": nested(100_000)},
            "Error: Invalid `view_range` parameter: <a value too large to show>. "
            "It should be a list of two integers: [start, end]",
        ),
        ({"command": "view", "path": HUGE}, "Error: Invalid path <a value too large to show>: it must be a string"),
        ({"command": "delete", "path": [HUGE]}, "Error: Invalid path <a value too large to show>: it must be a string"),
        (
            {"command": "rename", "old_path": FILE, "new_path": HUGE},
            "Error: Invalid path <a value too large to show>: it must be a string",
        ),
    ],
    ids=[
        "insert_line",
        "view_range-start",
        "view_range-end",
        "view_range-one",
        "view_range-nested",
        "path",
        "list",
        "new",
    ],
)
def test_values_python_cannot_format_are_named_not_shown(tool: Any, arguments: dict[str, Any], message: str) -> None:
    _called(tool, {"command": "create", "path": FILE, "file_text": "one\ntwo\n"})
    with pytest.raises(ToolError) as refused:
        tool.call(arguments)
    assert refused.value.content == message
    assert answer(tool.memory, arguments) == (message, True)


# --- stored headers tampered with out-of-range fields -------------------------------------

_INTEGRITY = f"Error: The file {FILE} failed its integrity check and cannot be read"
_NUMBERS = ["0", "-1", "00000000", "99999999", "100000000", str(2**63 - 1), str(2**63), "9" * 30, "9" * 5000, "1e9"]


def _tampered(header: dict[str, str]) -> st.SearchStrategy[dict[str, str]]:
    branch = header["s3m-bk"].split("-")[1]
    field_values = {
        "s3m-v": st.sampled_from(["0", "1", "3", "-2", "02", "2 ", "9" * 5000]),
        "s3m-bk": st.sampled_from([f"{n}-{branch}" for n in ("00000000", "99999999", "00000002", "0000000a")])
        | st.sampled_from(_NUMBERS),
        "s3m-mt": st.sampled_from(_NUMBERS),
        "s3m-kp": st.sampled_from(["", "aws-kms", "local-0000000000000000", "x" * 65, "LOCAL"]),
        "s3m-at": st.sampled_from(["", "QUJD", "A" * 4000, "not base64"]),
        "s3m-salt": st.sampled_from(["", "QUJD", "A" * 44]),
        "s3m-cm": st.sampled_from(["", "QUJD", "A" * 44]),
    }
    changes = st.dictionaries(st.sampled_from(sorted(field_values)), st.none(), min_size=1, max_size=3)
    return changes.flatmap(
        lambda chosen: st.fixed_dictionaries({name: field_values[name] for name in chosen}).map(
            lambda values: {**header, **values}
        )
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_tampered_headers_fail_the_integrity_check(tool: Any, s3: Any, data: st.DataObject) -> None:
    _called(tool, {"command": "create", "path": FILE, "file_text": "one\ntwo\n"})
    stored = s3.get_object(Bucket=BUCKET, Key=KEY)
    header, body = stored["Metadata"], stored["Body"].read()
    metadata = data.draw(_tampered(header))
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=body, Metadata=metadata)
    if s3.head_object(Bucket=BUCKET, Key=KEY)["Metadata"] == header:  # the store normalised it back ("2 " → "2")
        s3.delete_object(Bucket=BUCKET, Key=KEY)
        assume(False)
    for arguments in (
        {"command": "view", "path": FILE},
        {"command": "str_replace", "path": FILE, "old_str": "one", "new_str": "1"},
        {"command": "insert", "path": FILE, "insert_line": 1, "insert_text": "x"},
        {"command": "rename", "old_path": FILE, "new_path": "/memories/g.md"},
    ):
        assert _called(tool, arguments) == _INTEGRITY
        assert answer(tool.memory, arguments) == (_INTEGRITY, True)
    s3.delete_object(Bucket=BUCKET, Key=KEY)


def test_every_hostile_answer_is_a_string(make_tool: Callable[..., Any]) -> None:
    """The strategy's extremes, once each, without hypothesis choosing (a fast regression check)."""
    tool = make_tool()
    for value in (HUGE, [HUGE, 1], nested(100_000)):
        for command in messages.COMMANDS:
            arguments = {"command": command, **dict.fromkeys(_FIELDS, value)}
            assert isinstance(_called(tool, arguments), str)
            assert answer(tool.memory, arguments)[1] is True


# --- names that look like something else ----------------------------------------------------

INVISIBLE = [
    "\u202e",
    "\u202a",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200b",
    "\u200d",
    "\u200e",
    "\u2060",
    "\ufeff",
]


@pytest.mark.parametrize("char", INVISIBLE, ids=[f"U+{ord(c):04X}" for c in INVISIBLE])
def test_names_with_bidi_or_zero_width_characters_are_refused(tool: Any, char: str) -> None:
    path = f"/memories/report{char}gpj.exe"
    shown = path.replace(char, f"\\u{ord(char):04x}")
    message = f"Error: Invalid path {shown}: it contains an invisible or bidirectional formatting character"
    for arguments in (
        {"command": "create", "path": path, "file_text": "x"},
        {"command": "view", "path": path},
        {"command": "rename", "old_path": FILE, "new_path": path},
    ):
        assert _called(tool, arguments) == message


def test_stored_names_that_a_path_may_not_hold_are_listed_escaped(tool: Any, s3: Any) -> None:
    """Planted by a bucket writer (or older than the rule), they neither reorder nor break the listing."""
    _called(tool, {"command": "create", "path": FILE, "file_text": "one\n"})
    body, metadata = s3.get_object(Bucket=BUCKET, Key=KEY)["Body"].read(), s3.head_object(Bucket=BUCKET, Key=KEY)
    for planted in ("agents/agent-42/\u202egpj.exe", "agents/agent-42/a\nb.md", "agents/agent-42/\ufeffbom.md"):
        s3.put_object(Bucket=BUCKET, Key=planted, Body=body, Metadata=metadata["Metadata"])
    listing = _called(tool, {"command": "view", "path": "/memories"})
    assert listing.split("\n")[1:] == [
        "4.0K\t/memories",
        "4B\t/memories/a\\nb.md",
        "4B\t/memories/f.md",
        "4B\t/memories/\\u202egpj.exe",
        "4B\t/memories/\\ufeffbom.md",
    ]
