"""AgentKeyspace: the one place that maps an agent's memory paths to S3 keys and back."""

from __future__ import annotations

import pytest

from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError, InvalidPath
from s3memory.storage.keyspace import AgentKeyspace


def test_layout() -> None:
    space = AgentKeyspace("agents/", "ann")
    path = MemoryPath(("notes", "a.md"))
    assert space.root == "agents/ann/"
    assert space.key(path) == "agents/ann/notes/a.md"
    assert space.dir_prefix(path.parent) == "agents/ann/notes/"
    assert space.dir_prefix(MemoryPath()) == "agents/ann/"
    assert space.path_of("agents/ann/notes/a.md") == path
    assert space.path_of("agents/ann2/notes/a.md") is None
    assert space.path_of("agents/ann/a//b") is None


def test_bookkeeping_is_recognised_by_segment() -> None:
    space = AgentKeyspace("", "ann")
    assert space.is_bookkeeping("ann/.s3memory/intents/0123")
    assert not space.is_bookkeeping("ann/.s3memoryX/a.md")
    assert not space.is_bookkeeping("ann/notes/.s3memory/a.md")
    assert not space.is_bookkeeping("ann2/.s3memory/intents/0123")


def test_memory_path_and_display_of_stored_keys() -> None:
    space = AgentKeyspace("agents/", "ann")
    assert space.memory_path("agents/ann/.s3memory/intents/x") == MemoryPath((".s3memory", "intents", "x"))
    with pytest.raises(CommandError) as refused:
        space.memory_path("agents/ann/a//b")
    assert refused.value.message == "not a valid memory path"
    assert space.shown("agents/ann/a.md") == "/memories/a.md"
    assert space.shown("agents/ann/a//b\n") == "agents/ann/a//b\\n"


def test_parse_enforces_the_key_length_for_this_prefix() -> None:
    space = AgentKeyspace("p" * 700 + "/", "ann")
    with pytest.raises(InvalidPath) as refused:
        space.parse("/memories/" + "x" * 250 + "/" + "y" * 100)
    assert refused.value.message.endswith("it is too long to store (keys are limited to 1,024 bytes)")
    assert space.parse("/memories/short.md") == MemoryPath(("short.md",))


@pytest.mark.parametrize(("prefix", "agent"), [("agents", "ann"), ("agents/", "../x"), ("/agents/", "ann")])
def test_bad_prefix_or_agent_is_refused_when_built(prefix: str, agent: str) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - the message is each validator's own
        AgentKeyspace(prefix, agent)
