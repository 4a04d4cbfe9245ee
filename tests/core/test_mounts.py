"""Mount configuration (the API's, S3MEMORY_MOUNTS', --mount's) and the pure parts of routing."""

from __future__ import annotations

import pytest

import s3memory
from s3memory.core import mounts
from s3memory.core.mounts import Mount
from s3memory.core.options import MemoryOptions, split_options
from s3memory.core.paths import MemoryPath
from s3memory.core.tree import Entry

STORE_ID = "store id must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a letter or digit"


def test_mount_is_exported_from_the_package_root_with_its_defaults() -> None:
    assert s3memory.Mount is Mount
    assert "Mount" in s3memory.__all__
    assert Mount("support-guidelines") == Mount("support-guidelines", read_only=True)
    assert Mount("team-notes", read_only=False).read_only is False


@pytest.mark.parametrize("bad", ["", "_stores", "a/b", "-x", "x" * 129])
def test_a_mount_store_id_follows_the_agent_id_rules(bad: str) -> None:
    with pytest.raises(ValueError, match="store id") as caught:
        Mount(bad)
    assert str(caught.value) == STORE_ID


def test_read_only_is_keyword_only_and_a_bool() -> None:
    with pytest.raises(TypeError, match="positional"):
        Mount("s", False)  # type: ignore[misc]
    with pytest.raises(TypeError, match="read_only") as caught:
        Mount("s", read_only="no")  # type: ignore[arg-type]
    assert str(caught.value) == "read_only must be True or False"


@pytest.mark.parametrize("name", ["", ".s3memory", "_x", "a/b", "a b", "x" * 129])
def test_mount_names_follow_the_agent_id_rules(name: str) -> None:
    with pytest.raises(ValueError, match="mount name") as caught:
        MemoryOptions(mounts={name: Mount("s")})
    assert str(caught.value) == (
        f"mount name {name!r} must be 1-128 characters of letters, digits, '.', '_' or '-', "
        "starting with a letter or digit"
    )


def test_mounts_must_be_a_dict_of_mounts() -> None:
    with pytest.raises(TypeError, match="mounts") as caught:
        MemoryOptions(mounts=["guidelines"])  # type: ignore[arg-type]
    assert str(caught.value) == (
        'mounts must be a dict of mount names to Mount(...), e.g. {"guidelines": Mount("support")}'
    )
    with pytest.raises(TypeError, match="mounts") as caught:
        MemoryOptions(mounts={"g": "support"})  # type: ignore[dict-item]
    assert str(caught.value) == "mounts['g'] must be Mount(store, read_only=...)"


def test_mounts_is_an_option_keyword() -> None:
    _, memory = split_options({"mounts": {"guidelines": Mount("support-guidelines")}})
    assert memory.mounts == {"guidelines": Mount("support-guidelines")}
    assert split_options({"mounts": None})[1].mounts == {}


def test_the_environment_form() -> None:
    assert mounts.parse_env("guidelines=support-guidelines:ro, notes=team-notes:rw,faq=faq") == {
        "guidelines": Mount("support-guidelines"),
        "notes": Mount("team-notes", read_only=False),
        "faq": Mount("faq"),
    }
    assert mounts.parse_env("") == {}
    assert mounts.parse_env(" , ") == {}


def test_create_marks_a_store_meant_to_start_empty() -> None:
    assert mounts.parse_env("a=s1:create,b=s2:ro:create,c=s3:rw:create,d=s4:rw") == {
        "a": Mount("s1", create=True),
        "b": Mount("s2", create=True),
        "c": Mount("s3", read_only=False, create=True),
        "d": Mount("s4", read_only=False),
    }
    with pytest.raises(TypeError, match="create must be True or False"):
        Mount("s1", create="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("guidelines", "mount 'guidelines' must be NAME=STORE, NAME=STORE:ro or NAME=STORE:rw, "
                       "optionally followed by :create"),
        ("g=s:x:y:z", "mount 'g=s:x:y:z' must be NAME=STORE, NAME=STORE:ro or NAME=STORE:rw, "
                       "optionally followed by :create"),
        ("g=s:x:y", "mount 'g=s:x:y': the mode after ':' must be ro, rw or create"),
        ("g=s:ro:y", "mount 'g=s:ro:y': only :create may follow the mode"),
        ("g=s:wr", "mount 'g=s:wr': the mode after ':' must be ro, rw or create"),
        ("g=_s", STORE_ID),
        ("=s", "mount name '' must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a "
               "letter or digit"),
        ("g=a,g=b", "mount name 'g' is given twice"),
    ],
)  # fmt: skip
def test_the_environment_form_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"mount|store id") as caught:
        mounts.parse_env(text)
    assert str(caught.value) == message


def test_a_path_lies_in_a_mount_by_its_first_segment() -> None:
    names = {"guidelines", "notes"}
    assert mounts.split(MemoryPath(("guidelines", "a.md")), names) == ("guidelines", MemoryPath(("a.md",)))
    assert mounts.split(MemoryPath(("guidelines",)), names) == ("guidelines", MemoryPath())
    assert mounts.split(MemoryPath(("guidelines2", "a.md")), names) is None
    assert mounts.split(MemoryPath(), names) is None
    assert mounts.inner_raw("/memories/guidelines/a/", "guidelines") == "/memories/a/"
    assert mounts.inner_raw("/memories/guidelines", "guidelines") == "/memories"


def test_a_stores_answer_is_shown_with_the_mounted_paths() -> None:
    outer = mounts.outer_text
    assert outer("Error: Cannot create /memories/a/b: /memories/a is a file", "g") == (
        "Error: Cannot create /memories/g/a/b: /memories/g/a is a file"
    )
    assert outer("Error: File /memories already exists", "g") == "Error: File /memories/g already exists"
    assert outer("Error: File /memoriesX already exists", "g") == "Error: File /memoriesX already exists"
    echoed = "No replacement was performed, old_str `/memories/x` did not appear verbatim in /memories/a.md."
    assert outer(echoed, "g") == (
        "No replacement was performed, old_str `/memories/x` did not appear verbatim in /memories/g/a.md."
    )
    many = "No replacement was performed. Multiple occurrences of old_str `/memories` in lines: 1, 2. Please ensure"
    assert outer(many, "g") == many
    argument = "Error: Invalid `insert_line` parameter: '/memories'. It should be within the range"
    assert outer(argument, "g") == argument


def test_the_root_listing_holds_the_first_level_of_each_mount_and_mounts_shadow() -> None:
    own = [Entry("a.md", 3), Entry("g/", None), Entry("g/old.md", 1), Entry("z/", None), Entry("z/y.md", 2)]
    inside = [Entry("r.md", 5), Entry("tone/", None), Entry("tone/v.md", 9)]
    assert mounts.root_entries(own, {"g": inside, "h": []}) == [
        Entry("a.md", 3),
        Entry("g/", None),
        Entry("g/r.md", 5),
        Entry("g/tone/", None),
        Entry("h/", None),
        Entry("z/", None),
        Entry("z/y.md", 2),
    ]
    assert mounts.shadowed(own, ["g", "h", "y.md"]) == ["g"]
