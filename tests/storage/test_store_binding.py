"""Shared stores as owners: ids, where they live, what their ciphertext is bound to, who wrote.

A store is laid out as an agent is, under `{prefix}_stores/<store-id>/`, and binds its owner label
`_stores/<store-id>` wherever an agent binds its id: an object (with its whole keystore) copied
from a store to an agent, from an agent to a store, or between two stores, fails its integrity check.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from s3memory import KmsKeys, LocalKeys
from s3memory.admin.agents import agent_ids, list_stores, store_ids
from s3memory.core import paths
from s3memory.core.options import AgentOptions, MemoryOptions
from s3memory.errors import CommandError
from s3memory.memory.engine import Memory
from s3memory.memory.open import open_memory
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.session import open_vault
from s3memory.storage.store import ObjectStore
from tests.support import BUCKET, LOCAL_KEY, listed_keys
from tests.support.views import NoProgress

AGENT_ID_ERROR = (
    "agent_id must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a letter or digit"
)
STORE_ID_ERROR = (
    "store id must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a letter or digit"
)


@pytest.mark.parametrize("bad", ["", "_x", "-x", ".x", "a/b", "a b", "x" * 129, "é", None, 7])
def test_store_ids_follow_the_agent_id_rules(bad: object) -> None:
    with pytest.raises(ValueError, match="store id must be") as caught:
        paths.validate_store_id(bad)
    assert str(caught.value) == STORE_ID_ERROR
    with pytest.raises(ValueError, match="store id must be") as caught:
        paths.store_owner(bad)  # type: ignore[arg-type]
    assert str(caught.value) == STORE_ID_ERROR


def test_owner_label_and_root() -> None:
    assert paths.validate_store_id("support-guidelines") == "support-guidelines"
    assert paths.store_owner("support-guidelines") == "_stores/support-guidelines"
    assert paths.store_owner("x" * 128) == "_stores/" + "x" * 128
    space = AgentKeyspace("agents/", paths.store_owner("team.notes_1"))
    assert space.root == "agents/_stores/team.notes_1/"
    assert space.keystore_prefix == "agents/_stores/team.notes_1/.s3memory/keys/"
    assert paths.store_of("_stores/team") == "team"
    assert paths.store_of("agent-42") is None


@pytest.mark.parametrize("bad", ["_stores/", "_stores/_x", "_stores/a/b", "_stores", "_other/x"])
def test_keyspace_refuses_what_is_neither_an_agent_nor_a_store(bad: str) -> None:
    expected = STORE_ID_ERROR if bad.startswith("_stores/") else AGENT_ID_ERROR
    with pytest.raises(ValueError, match="id must be") as caught:
        AgentKeyspace("agents/", bad)
    assert str(caught.value) == expected


@pytest.fixture(params=["local", "kms"])
def keys(request: pytest.FixtureRequest, kms: Any) -> Any:
    if request.param == "kms":
        return KmsKeys(request.getfixturevalue("kms_key"), kms_client=kms)
    return LocalKeys(LOCAL_KEY)


@pytest.fixture
def memories(s3: Any, keys: Any) -> Iterator[Any]:
    """memories(owner, keys=...) → a `Memory` of agent id or owner label `owner` under `agents/`."""
    pools: list[Any] = []

    def factory(owner: str, *, fresh: Any = None, writer: str | None = None) -> Memory:
        options = AgentOptions(prefix="agents/")
        memory, pool = open_memory(BUCKET, owner, fresh or keys, options, MemoryOptions(max_workers=4), s3_client=s3,
                                   writer=writer)  # fmt: skip
        pools.append(pool)
        return memory

    yield factory
    for pool in pools:
        pool.shutdown(wait=True)


def _copy_root(s3: Any, source: str, destination: str) -> None:
    for key in listed_keys(s3, prefix=source):
        s3.copy_object(Bucket=BUCKET, Key=destination + key[len(source) :], CopySource={"Bucket": BUCKET, "Key": key})


def _fresh(keys: Any, kms: Any, request: pytest.FixtureRequest) -> Any:
    """The same key source with empty caches (a reader in another process)."""
    if isinstance(keys, KmsKeys):
        return KmsKeys(request.getfixturevalue("kms_key"), kms_client=kms)
    return LocalKeys(LOCAL_KEY)


MOVES = {
    "store-to-agent": ("_stores/guidelines", "agent-42"),
    "agent-to-store": ("agent-42", "_stores/guidelines"),
    "store-to-store": ("_stores/guidelines", "_stores/other"),
}


@pytest.mark.parametrize("move", list(MOVES))
def test_an_object_moved_to_another_owner_fails_its_integrity_check(
    move: str, s3: Any, kms: Any, keys: Any, memories: Any, request: pytest.FixtureRequest
) -> None:
    source, destination = MOVES[move]
    assert memories(source).create("/memories/refunds.md", "Refund within 30 days.\n") == (
        "File created successfully at: /memories/refunds.md"
    )
    # The whole root moves, keystore included: only the binding to the owner can tell.
    _copy_root(s3, f"agents/{source}/", f"agents/{destination}/")
    assert memories(source, fresh=_fresh(keys, kms, request)).view("/memories/refunds.md", None) == (
        "Here's the content of /memories/refunds.md with line numbers:\n     1\tRefund within 30 days."
    )
    with pytest.raises(CommandError) as caught:
        memories(destination, fresh=_fresh(keys, kms, request)).view("/memories/refunds.md", None)
    assert caught.value.message == "Error: The file /memories/refunds.md failed its integrity check and cannot be read"


def test_a_store_lives_under_its_own_root_and_binds_its_label_in_kms(
    s3: Any, kms: Any, memories: Any, request: Any
) -> None:
    keys = KmsKeys(request.getfixturevalue("kms_key"), kms_client=kms)
    contexts: list[dict[str, str]] = []
    kms.meta.events.register(
        "provide-client-params.kms.GenerateDataKey", lambda params, **_: contexts.append(params["EncryptionContext"])
    )
    memories("_stores/guidelines", fresh=keys).create("/memories/a.md", "x\n")
    assert [c["s3memory:agent"] for c in contexts] == ["_stores/guidelines"]
    stored = listed_keys(s3, prefix="agents/")
    assert "agents/_stores/guidelines/a.md" in stored
    assert all(key.startswith("agents/_stores/guidelines/") for key in stored)


def test_agents_listing_ignores_stores_and_stores_listing_ignores_agents(s3: Any, memories: Any) -> None:
    memories("agent-42").create("/memories/a.md", "12345")
    memories("_stores/guidelines").create("/memories/refunds.md", "123")
    memories("_stores/guidelines").create("/memories/tone.md", "1234567")
    memories("_stores/team-notes").create("/memories/n.md", "1")
    s3.put_object(Bucket=BUCKET, Key="agents/_stores/not a store!/x", Body=b"")
    store = ObjectStore(s3, BUCKET)
    assert agent_ids(store, "agents/") == ["agent-42"]
    assert store_ids(store, "agents/") == ["guidelines", "team-notes"]
    with Pool(2) as pool:
        usage = list_stores(store, "agents/", pool, NoProgress())
    assert [(u.agent, u.objects, u.bytes) for u in usage] == [("guidelines", 2, 10), ("team-notes", 1, 1)]


def test_a_write_to_a_store_records_the_writing_agent(s3: Any, memories: Any) -> None:
    from s3memory.core.envelope import Header

    store = memories("_stores/guidelines", writer="agent-42")
    store.create("/memories/refunds.md", "Refund within 30 days.\n")
    path = store.vault.parse("/memories/refunds.md")
    obj = store.vault.store.get(store.vault.key(path))
    record = store.vault.attribution_of(path, Header.from_metadata(obj.metadata))
    assert record is not None
    assert (record.agent, record.command, record.actor) == ("agent-42", "create", "")
    vault = open_vault(ObjectStore(s3, BUCKET), LocalKeys(LOCAL_KEY), "agent-42", AgentOptions(prefix="agents/"))
    assert vault.writer is None  # an agent's own writes record no agent: the owner is the agent


def test_s3memory_agents_lists_no_store(env: Any, memories: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.cli import run

    memories("agent-42").create("/memories/a.md", "12345")
    memories("_stores/guidelines").create("/memories/refunds.md", "123")
    code, out, _ = run(capsys, "agents", "--json", "--quiet")
    assert code == 0
    assert json.loads(out) == [{"agent": "agent-42", "objects": 1, "bytes": 5}]
