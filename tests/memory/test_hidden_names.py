"""Hidden file names through the tool: what S3 holds, what the model sees, and the mode checks.

An agent in the encrypted-names mode must store no segment of any path in clear, show the model
exactly what a plain agent shows, refuse tools of the other mode, and keep the key-length limit.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

import pytest

from s3memory import S3MemoryTool
from s3memory.core import keyring
from s3memory.core.names import PLAIN, NameCipher
from s3memory.core.paths import MemoryPath
from s3memory.memory import intents
from s3memory.storage.keys import encryption_context
from tests.support import BUCKET, CallCounter, called, err, keystore_names, listed_keys, memory_keys, ok

ROOT = "agents/agent-42/"
KEYSTORE = ROOT + ".s3memory/keys/"
TOKEN = re.compile(r"[A-Za-z0-9_-]{23,}")


def mismatch(code: str) -> str:
    return (
        f"Error: This memory stores its file names in another way than this tool is set up for ({code}); "
        "nothing was changed. An operator must fix the configuration."
    )


def outcome(tool: S3MemoryTool, command: dict[str, Any]) -> str:
    """What the model sees: the result, or the error text (marked, so both can be compared)."""
    succeeded, answer = called(tool, command)
    return str(answer) if succeeded else f"ERROR {answer}"


def create(path: str, text: str) -> dict[str, Any]:
    return {"command": "create", "path": path, "file_text": text}


def view(path: str) -> dict[str, Any]:
    return {"command": "view", "path": path}


# Names whose encrypted forms sort in another order than the names (checked in the test).
ORDERED = [f"entry-{c}.md" for c in "abcdefghijkl"]

SESSION: list[dict[str, Any]] = [
    view("/memories"),
    create("/memories/patients/jane_doe_hiv.md", "Jane Doe\nHIV positive since 2019\n"),
    create("/memories/patients/year-2024/visits-march.md", "3 visits\n"),
    create("/memories/patients/year-2024/résumé-日本語.md", "unicode name\n"),
    create("/memories/projects/alpha-plan/overview.md", "the plan\n"),
    create("/memories/projects/alpha-plan/.hidden-notes/secret.md", "hidden\n"),
    create("/memories/projects/.envrc", "export X=1\n"),
    create("/memories/tooling/node_modules/left-pad/index.js", "module.exports = 1;\n"),
    create("/memories/tooling/.cache-dir/entries.txt", "cached\n"),
    create("/memories/tooling/build-notes.md", "make\n"),
    *[create(f"/memories/ordering/{name}", name) for name in ORDERED],
    {"command": "str_replace", "path": "/memories/patients/jane_doe_hiv.md", "old_str": "positive", "new_str": "+"},
    {"command": "insert", "path": "/memories/patients/jane_doe_hiv.md", "insert_line": 1, "insert_text": "Ward 7"},
    view("/memories/patients/jane_doe_hiv.md"),
    view("/memories/projects"),
    view("/memories/tooling"),
    view("/memories/ordering"),
    {"command": "rename", "old_path": "/memories/patients/year-2024/visits-march.md",
     "new_path": "/memories/patients/year-2024/visits-april.md"},
    {"command": "rename", "old_path": "/memories/projects/alpha-plan", "new_path": "/memories/archive-2023/plan-old"},
    {"command": "delete", "path": "/memories/projects"},
    # errors the model may meet on the way
    view("/memories/projects"),
    create("/memories/patients/jane_doe_hiv.md", "again"),
    {"command": "rename", "old_path": "/memories/tooling", "new_path": "/memories/patients"},
    {"command": "str_replace", "path": "/memories/tooling/build-notes.md", "old_str": "absent", "new_str": "x"},
    {"command": "create", "path": "/memories/patients/jane_doe_hiv.md/below", "file_text": "x"},
    # every level, after the changes
    view("/memories"),
    view("/memories/patients"),
    view("/memories/patients/"),
    view("/memories/patients/year-2024"),
    view("/memories/archive-2023"),
    view("/memories/archive-2023/plan-old"),
    view("/memories/archive-2023/plan-old/.hidden-notes"),
    view("/memories/tooling/node_modules"),
    view("/memories/ordering"),
    view("/memories/patients/jane_doe_hiv.md"),
    view("/memories/patients/year-2024/visits-april.md"),
    view("/memories/patients/year-2024/résumé-日本語.md"),
    view("/memories/archive-2023/plan-old/overview.md"),
    view("/memories/archive-2023/plan-old/.hidden-notes/secret.md"),
    view("/memories/ordering/entry-c.md"),
]  # fmt: skip

FINAL_FILES = sorted(
    [
        "/memories/patients/jane_doe_hiv.md",
        "/memories/patients/year-2024/visits-april.md",
        "/memories/patients/year-2024/résumé-日本語.md",
        "/memories/archive-2023/plan-old/overview.md",
        "/memories/archive-2023/plan-old/.hidden-notes/secret.md",
        "/memories/tooling/node_modules/left-pad/index.js",
        "/memories/tooling/.cache-dir/entries.txt",
        "/memories/tooling/build-notes.md",
        *[f"/memories/ordering/{name}" for name in ORDERED],
    ]
)


def session_segments() -> set[str]:
    """Every segment of every path the session names."""
    found: set[str] = set()
    for command in SESSION:
        for field in ("path", "old_path", "new_path"):
            if field in command:
                found.update(s for s in command[field].split("/") if s and s != "memories")
    return found


def last(command: dict[str, Any]) -> int:
    """The index of the last `command` of the session."""
    return max(i for i, c in enumerate(SESSION) if c == command)


def run(tool: S3MemoryTool) -> list[str]:
    return [outcome(tool, command) for command in SESSION]


# --- what S3 holds ---------------------------------------------------------------------------


def test_no_segment_of_any_path_is_stored_in_clear(make_tool: Callable[..., S3MemoryTool], s3: Any) -> None:
    tool = make_tool(names="encrypted")
    outputs = run(tool)
    assert [o for o in outputs if o.startswith("ERROR ")] == [
        "ERROR The path /memories/projects does not exist. Please provide a valid path.",
        "ERROR Error: File /memories/patients/jane_doe_hiv.md already exists",
        "ERROR Error: The destination /memories/patients already exists",
        "ERROR No replacement was performed, old_str `absent` did not appear verbatim in "
        "/memories/tooling/build-notes.md.",
        "ERROR Error: Cannot create /memories/patients/jane_doe_hiv.md/below: "
        "/memories/patients/jane_doe_hiv.md is a file",
    ]
    keys = listed_keys(s3)
    segments = session_segments()
    assert {
        "patients",
        "jane_doe_hiv.md",
        "résumé-日本語.md",
        "node_modules",
        ".hidden-notes",
        "entry-a.md",
    } <= segments
    leaks = sorted((segment, key) for segment in segments for key in keys if segment in key)
    assert leaks == []
    assert all(key.startswith(ROOT) for key in keys), keys  # the prefix and the agent id stay in clear
    stored = memory_keys(s3, ROOT)
    assert len(stored) == len(FINAL_FILES)
    not_tokens = [key for key in stored if not all(TOKEN.fullmatch(s) for s in key[len(ROOT) :].split("/"))]
    assert not_tokens == []
    space = tool.memory.vault.space
    assert sorted(str(space.path_of(key)) for key in stored) == FINAL_FILES
    bookkeeping = [k for k in keys if k.startswith(ROOT + ".s3memory/") and not k.startswith(KEYSTORE)]
    assert bookkeeping == []  # no intent record left behind


def test_the_model_sees_what_a_plain_agent_shows(make_tool: Callable[..., S3MemoryTool], s3: Any) -> None:
    hidden = make_tool(names="encrypted")
    plain = make_tool("agent-plain", names="plain")
    hidden_outputs = run(hidden)
    plain_outputs = run(plain)
    differing = [(c, h, p) for c, h, p in zip(SESSION, hidden_outputs, plain_outputs, strict=True) if h != p]
    assert differing == []
    # The order of a listing is the names' order, not the stored tokens' order.
    space = hidden.memory.vault.space
    folder = space.dir_prefix(MemoryPath(("ordering",)))
    tokens = [k[len(folder) :] for k in memory_keys(s3, ROOT) if k.startswith(folder)]
    in_key_order = [space.below(MemoryPath(("ordering",)), (t,)) for t in tokens]
    assert sorted(tokens) == tokens  # S3's order: the tokens'
    assert in_key_order != [(name,) for name in ORDERED]  # which is not the names' order
    assert sorted(in_key_order) == [(name,) for name in ORDERED]
    assert hidden_outputs[SESSION.index(view("/memories/ordering"))] == (
        "Here're the files and directories up to 2 levels deep in /memories/ordering, excluding hidden items and "
        "node_modules:\n"
        "4.0K\t/memories/ordering\n" + "\n".join(f"10B\t/memories/ordering/{name}" for name in ORDERED)
    )
    assert hidden_outputs[SESSION.index(view("/memories/tooling"))] == (
        "Here're the files and directories up to 2 levels deep in /memories/tooling, excluding hidden items and "
        "node_modules:\n"
        "4.0K\t/memories/tooling\n"
        "5B\t/memories/tooling/build-notes.md"
    )
    assert hidden_outputs[last(view("/memories"))] == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories\n"
        "4.0K\t/memories/archive-2023/\n"
        "4.0K\t/memories/archive-2023/plan-old/\n"
        "4.0K\t/memories/ordering/\n"
        + "".join(f"10B\t/memories/ordering/{name}\n" for name in ORDERED)
        + "4.0K\t/memories/patients/\n"
        "33B\t/memories/patients/jane_doe_hiv.md\n"
        "4.0K\t/memories/patients/year-2024/\n"
        "4.0K\t/memories/tooling/\n"
        "5B\t/memories/tooling/build-notes.md"
    )


# --- the name mode is the agent's, and a tool of the other mode is refused -------------------

REFUSED_COMMANDS: list[dict[str, Any]] = [
    view("/memories"),
    create("/memories/new.md", "x"),
    view("/memories/notes/a.md"),
    {"command": "str_replace", "path": "/memories/notes/a.md", "old_str": "a", "new_str": "b"},
    {"command": "insert", "path": "/memories/notes/a.md", "insert_line": 0, "insert_text": "x"},
    {"command": "delete", "path": "/memories/notes"},
    {"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/moved"},
]


def refusals(make_tool: Callable[..., S3MemoryTool], names: str) -> list[str]:
    """Each command by a fresh tool (a warm one keeps the keystore listing for 300 s)."""
    return [outcome(make_tool(names=names), command) for command in REFUSED_COMMANDS]


def test_a_plain_tool_is_refused_by_an_agent_with_hidden_names(make_tool: Callable[..., S3MemoryTool], s3: Any) -> None:
    ok(make_tool(names="encrypted"), command="create", path="/memories/notes/a.md", file_text="a")
    before = listed_keys(s3)
    assert refusals(make_tool, "plain") == ["ERROR " + mismatch("NamesEncrypted")] * len(REFUSED_COMMANDS)
    assert listed_keys(s3) == before


def test_a_tool_with_hidden_names_is_refused_by_a_plain_agent(make_tool: Callable[..., S3MemoryTool], s3: Any) -> None:
    ok(make_tool(names="plain"), command="create", path="/memories/notes/a.md", file_text="a")
    before = listed_keys(s3)
    assert [n for n in keystore_names(before, ROOT) if n.startswith("names.")] == []  # plain: no mode recorded
    assert refusals(make_tool, "encrypted") == ["ERROR " + mismatch("NamesPlain")] * len(REFUSED_COMMANDS)
    assert listed_keys(s3) == before  # no mode entry, no name key


def test_an_agent_without_a_mode_entry_that_has_a_key_or_files_is_plain(
    make_tool: Callable[..., S3MemoryTool], s3: Any
) -> None:
    """Agents of plain tools (also those written before name modes existed) have no entry: plain."""
    ok(make_tool(names="plain"), command="create", path="/memories/notes/a.md", file_text="a")
    before = listed_keys(s3)
    assert outcome(make_tool(names="encrypted"), view("/memories")) == "ERROR " + mismatch("NamesPlain")
    assert outcome(make_tool(names="encrypted"), create("/memories/b.md", "b")) == "ERROR " + mismatch("NamesPlain")
    assert listed_keys(s3) == before
    # Files without any keystore (e.g. put there by hand): plain as well.
    s3.put_object(Bucket=BUCKET, Key="agents/agent-7/legacy.md", Body=b"x")
    assert outcome(make_tool("agent-7", names="encrypted"), view("/memories")) == "ERROR " + mismatch("NamesPlain")
    assert listed_keys(s3) == sorted([*before, "agents/agent-7/legacy.md"])


@pytest.mark.parametrize("with_entry", [True, False], ids=["claim-and-entry", "claim-only"])
@pytest.mark.parametrize(("first", "state"), [("plain", "to-encrypted"), ("encrypted", "to-plain")])
def test_both_modes_are_refused_while_a_migration_is_under_way(
    make_tool: Callable[..., S3MemoryTool], s3: Any, first: str, state: str, with_entry: bool
) -> None:
    tool = make_tool(names=first)
    ok(tool, command="create", path="/memories/notes/a.md", file_text="a")
    keystore = tool.memory.vault.keystore
    keystore.name_key()  # migrate makes it before its first claim
    assert keystore.claim_names(2, state) == (2, state)  # as `s3memory migrate` claims it: tagged
    (entry,) = [k for k in listed_keys(s3) if k.startswith(KEYSTORE + f"names.00000002.{state}.")]
    if not with_entry:  # without it (its writer stopped in between), tools read the claim
        s3.delete_object(Bucket=BUCKET, Key=entry)
    before = listed_keys(s3)
    expected = ["ERROR " + mismatch("NamesMigrating")] * len(REFUSED_COMMANDS)
    assert refusals(make_tool, "plain") == expected
    assert refusals(make_tool, "encrypted") == expected
    # Nothing changed, except that the first tool to read the lone claim wrote its entry.
    assert listed_keys(s3) == sorted([*before, *([] if with_entry else [entry])])


def test_a_plain_tool_that_saw_the_agent_empty_is_refused_at_its_first_write(
    make_tool: Callable[..., S3MemoryTool], s3: Any
) -> None:
    plain = make_tool(names="plain")
    assert outcome(plain, view("/memories")).endswith("4.0K\t/memories")  # cached: no key, no mode
    hidden = make_tool(names="encrypted")
    ok(hidden, command="create", path="/memories/a.md", file_text="a")
    assert outcome(plain, create("/memories/b.md", "b")) == "ERROR " + mismatch("NamesEncrypted")
    names = keystore_names(listed_keys(s3), ROOT)
    assert [n for n in names if n.startswith("names.")] == ["names.00000001.encrypted"]
    assert len(memory_keys(s3, ROOT)) == 1
    assert ROOT + "b.md" not in listed_keys(s3)


def first_writes_at_once(tools: dict[str, S3MemoryTool]) -> dict[str, str]:
    """Each tool's first write (`/memories/from-{mode}.md`), all started at the same moment."""
    barrier = threading.Barrier(len(tools))
    results: dict[str, str] = {}

    def first_write(mode: str) -> None:
        barrier.wait()
        results[mode] = outcome(tools[mode], create(f"/memories/from-{mode}.md", mode))

    threads = [threading.Thread(target=first_write, args=(mode,)) for mode in tools]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_tools_of_both_modes_racing_an_agents_first_write_leave_one_mode(
    make_tool: Callable[..., S3MemoryTool], s3: Any
) -> None:
    for round_ in range(6):
        agent = f"race-{round_}"
        root = f"agents/{agent}/"
        tools = {mode: make_tool(agent, names=mode) for mode in ("plain", "encrypted")}
        results = first_writes_at_once(tools)
        keys = listed_keys(s3)
        modes = [n for n in keystore_names(keys, root) if n.startswith("names.")]
        assert modes in ([], ["names.00000001.encrypted"]), (round_, modes, results)  # plain records none
        winner = "encrypted" if modes else "plain"
        claim = s3.get_object(Bucket=BUCKET, Key=root + ".s3memory/keys/00000001")["Body"].read()
        assert keyring.parse_claim(claim, 1).names == ("encrypted" if modes else "")
        loser = "plain" if winner == "encrypted" else "encrypted"
        assert results == {
            winner: f"File created successfully at: /memories/from-{winner}.md",
            loser: "ERROR " + mismatch("NamesEncrypted" if winner == "encrypted" else "NamesPlain"),
        }, round_
        stored = memory_keys(s3, root)
        assert len(stored) == 1, stored
        if winner == "plain":
            assert stored == [root + "from-plain.md"]
            # The losing tool makes no name key: it would make the plain agent's missing mode look removed.
            assert "00000000" not in keystore_names(keys, root)
        else:
            assert tools["encrypted"].memory.vault.space.path_of(stored[0]) == MemoryPath(("from-encrypted.md",))
            assert TOKEN.fullmatch(stored[0][len(root) :])


# --- bookkeeping, tampering, limits and the keystore -----------------------------------------


def test_intent_records_of_hidden_names_are_keyed(make_tool: Callable[..., S3MemoryTool], s3: Any) -> None:
    tool = make_tool(names="encrypted")
    plain = make_tool("agent-plain", names="plain")
    for t in (tool, plain):
        ok(t, command="create", path="/memories/patients/jane_doe_hiv.md", file_text="j")
        ok(t, command="create", path="/memories/patients/year-2024/visits.md", file_text="v")
    put: list[str] = []
    s3.meta.events.register("before-parameter-build.s3.PutObject", lambda params, **_: put.append(params["Key"]))
    assert ok(tool, command="rename", old_path="/memories/patients", new_path="/memories/people") == (
        "Successfully renamed /memories/patients to /memories/people"
    )
    assert ok(plain, command="rename", old_path="/memories/patients", new_path="/memories/people") == (
        "Successfully renamed /memories/patients to /memories/people"
    )
    src = MemoryPath(("patients",))
    vault = tool.memory.vault
    name = intents.record_name(vault.space, src)
    plain_name = PLAIN.keyed_name("intent", "/memories/patients")
    assert re.fullmatch(r"[0-9a-f]{32}", name)
    assert name != plain_name
    assert name == vault.names.cipher().keyed_name("intent", "/memories/patients")
    assert intents.record_name(plain.memory.vault.space, src) == plain_name  # records of plain agents keep their names
    records = [k for k in put if "/.s3memory/intents/" in k]
    assert records == [ROOT + ".s3memory/intents/" + name, "agents/agent-plain/.s3memory/intents/" + plain_name]


def test_a_segment_copied_into_another_folder_is_neither_shown_nor_readable(
    make_tool: Callable[..., S3MemoryTool], s3: Any
) -> None:
    tool = make_tool(names="encrypted")
    ok(tool, command="create", path="/memories/patients/jane_doe_hiv.md", file_text="secret")
    ok(tool, command="create", path="/memories/public/readme.md", file_text="hello")
    ok(tool, command="create", path="/memories/top.md", file_text="top")
    space = tool.memory.vault.space
    source = space.key(MemoryPath(("patients", "jane_doe_hiv.md")))
    token = source.rsplit("/", 1)[1]
    public = space.dir_prefix(MemoryPath(("public",)))
    s3.copy_object(Bucket=BUCKET, Key=public + token, CopySource={"Bucket": BUCKET, "Key": source})
    top = space.key(MemoryPath(("top.md",)))  # a top-level segment copied one level down
    s3.copy_object(Bucket=BUCKET, Key=public + top.rsplit("/", 1)[1], CopySource={"Bucket": BUCKET, "Key": top})
    assert space.path_of(public + token) is None
    fresh = make_tool(names="encrypted")
    for t in (tool, fresh):
        assert ok(t, command="view", path="/memories/public") == (
            "Here're the files and directories up to 2 levels deep in /memories/public, excluding hidden items and "
            "node_modules:\n"
            "4.0K\t/memories/public\n"
            "5B\t/memories/public/readme.md"
        )
        assert ok(t, command="view", path="/memories") == (
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and "
            "node_modules:\n"
            "4.0K\t/memories\n"
            "4.0K\t/memories/patients/\n"
            "6B\t/memories/patients/jane_doe_hiv.md\n"
            "4.0K\t/memories/public/\n"
            "5B\t/memories/public/readme.md\n"
            "3B\t/memories/top.md"
        )
        for path in ("/memories/public/jane_doe_hiv.md", "/memories/public/top.md"):
            assert err(t, command="view", path=path) == f"The path {path} does not exist. Please provide a valid path."
    assert ok(fresh, command="view", path="/memories/patients/jane_doe_hiv.md") == (
        "Here's the content of /memories/patients/jane_doe_hiv.md with line numbers:\n     1\tsecret"
    )


TOO_LONG = "it is too long to store (keys are limited to 1,024 bytes)"
# Below `agents/agent-42/` (16 bytes): 2 x 362 + 282 encrypted key bytes and 2 separators = 1,024.
AT_LIMIT = "/memories/" + "x" * 255 + "/" + "x" * 255 + "/" + "y" * 195
OVER_LIMIT = AT_LIMIT + "y"  # 1,025 bytes encrypted, 724 plain


def test_a_path_too_long_only_once_encrypted_is_refused_before_any_request(
    make_tool: Callable[..., S3MemoryTool], s3: Any, counter: CallCounter
) -> None:
    tool = make_tool(names="encrypted")
    counter.reset()
    message = f"Error: Invalid path {OVER_LIMIT}: {TOO_LONG}"
    assert err(tool, command="create", path=OVER_LIMIT, file_text="x") == message
    assert err(tool, command="view", path=OVER_LIMIT) == message
    assert err(tool, command="rename", old_path="/memories/a.md", new_path=OVER_LIMIT) == message
    assert counter.calls == []
    assert listed_keys(s3) == []
    # The same path fits with plain names (another agent, same root length) ...
    ok(make_tool("agent-43", names="plain"), command="create", path=OVER_LIMIT, file_text="x")
    # ... and the longest path that fits encrypted is stored, its key exactly 1,024 bytes.
    ok(tool, command="create", path=AT_LIMIT, file_text="at the limit")
    assert [len(k.encode()) for k in memory_keys(s3, ROOT)] == [1024]
    assert ok(tool, command="view", path=AT_LIMIT).endswith("     1\tat the limit")


def test_the_keystore_gains_the_mode_entry_and_the_name_key(
    make_tool: Callable[..., S3MemoryTool], s3: Any, kms: Any
) -> None:
    tool = make_tool(names="encrypted", use_kms=True)
    for command in SESSION:
        outcome(tool, command)
    names = keystore_names(listed_keys(s3), ROOT)
    assert len(names) == 5, names
    assert (names[0], names[2], names[4]) == ("00000000", "00000001", "names.00000001.encrypted")
    name_key, branch = keyring.parse_index(names[1]), keyring.parse_index(names[3])
    assert name_key is not None
    assert branch is not None
    assert (name_key.generation, branch.generation) == (0, 1)
    assert name_key.provider == branch.provider == "aws-kms"
    claim = s3.get_object(Bucket=BUCKET, Key=KEYSTORE + "00000000")["Body"].read()
    assert keyring.parse_claim(claim, 0) == name_key
    # Wrapped by KMS like a branch key, bound to the agent and its id; it is the key the names use.
    context = encryption_context("agent-42", name_key.branch_id)
    plaintext = kms.decrypt(CiphertextBlob=name_key.wrapped, EncryptionContext=context)["Plaintext"]
    assert plaintext == tool.memory.vault.keystore.name_key().plaintext
    cipher = NameCipher(plaintext, "agent-42")
    assert sorted(str(MemoryPath(cipher.decode(k[len(ROOT) :].split("/")) or ())) for k in memory_keys(s3, ROOT)) == (
        FINAL_FILES
    )
    with pytest.raises(kms.exceptions.ClientError):
        kms.decrypt(CiphertextBlob=name_key.wrapped, EncryptionContext=encryption_context("agent-42", branch.branch_id))


def test_views_of_a_new_agent_create_no_name_key(
    make_tool: Callable[..., S3MemoryTool], s3: Any, counter: CallCounter
) -> None:
    """Views store nothing: the mode is recorded with the first write, the name key when a name is stored."""
    tool = make_tool(names="encrypted", use_kms=True)
    counter.reset()
    for _ in range(3):
        ok(tool, command="view", path="/memories")
    assert ok(make_tool(names="encrypted", use_kms=True), command="view", path="/memories").endswith("4.0K\t/memories")
    assert listed_keys(s3) == []
    assert counter.count("kms") == 0
