"""`Limits` checks every field when built (issue 31, item 9): a wrong type or a value out of range
is refused at once, naming the field and its environment variable, never crashing a later command."""

from __future__ import annotations

import re
from typing import Any

import pytest

from s3memory import Limits
from tests.support import BUCKET

FIELDS = {  # field → (its variable, its smallest value, whether None is allowed)
    "max_file_bytes": ("S3MEMORY_MAX_FILE_BYTES", 1, False),
    "max_view_chars": ("S3MEMORY_MAX_VIEW_CHARS", 1, False),
    "max_agent_bytes": ("S3MEMORY_MAX_AGENT_BYTES", 1, True),
    "max_agent_files": ("S3MEMORY_MAX_AGENT_FILES", 1, True),
    "held_files": ("S3MEMORY_HELD_FILES", 0, False),
}
BAD_TYPES = [("5", "str"), (True, "bool"), (False, "bool"), (1.0, "float"), (b"5", "bytes"), ([5], "list")]


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize(("value", "kind"), BAD_TYPES)
def test_a_value_of_the_wrong_type_is_refused_naming_the_field(field: str, value: Any, kind: str) -> None:
    variable, _, optional = FIELDS[field]
    with pytest.raises(TypeError) as raised:
        Limits(**{field: value})
    expected = "a whole number or None" if optional else "a whole number"
    assert str(raised.value) == f"Limits.{field} ({variable}) must be {expected}, not {kind}"


@pytest.mark.parametrize("field", FIELDS)
def test_a_value_below_the_smallest_is_refused_naming_the_field(field: str) -> None:
    variable, lowest, _ = FIELDS[field]
    for value in (lowest - 1, -1, -10_000):
        expected = f"Limits.{field} ({variable}) must be at least {lowest}, not {value:,}"
        with pytest.raises(ValueError, match=re.escape(expected)) as raised:
            Limits(**{field: value})
        assert str(raised.value) == expected


@pytest.mark.parametrize("field", FIELDS)
def test_the_smallest_value_and_none_where_allowed_are_accepted(field: str) -> None:
    _, lowest, optional = FIELDS[field]
    assert getattr(Limits(**{field: lowest}), field) == lowest
    assert getattr(Limits(**{field: 10**12}), field) == 10**12
    if optional:
        assert getattr(Limits(**{field: None}), field) is None
    else:
        with pytest.raises(TypeError) as raised:
            Limits(**{field: None})
        assert str(raised.value).endswith("must be a whole number, not NoneType")


def test_the_defaults_pass_their_own_checks() -> None:
    assert Limits() == Limits(1024 * 1024, 100_000, None, 10_000, 256)


def test_a_bad_limit_is_refused_before_a_tool_is_built(make_tool: Any, s3: Any) -> None:
    """Issue 31 item 9: `held_files="5"` used to be accepted, and every create then raised TypeError
    out of `tool.call` after the file was stored. Now nothing is built and nothing is stored."""
    with pytest.raises(TypeError) as raised:
        make_tool(limits=Limits(held_files="5"))  # type: ignore[arg-type]
    assert str(raised.value) == "Limits.held_files (S3MEMORY_HELD_FILES) must be a whole number, not str"
    assert s3.list_objects_v2(Bucket=BUCKET).get("KeyCount", 0) == 0
