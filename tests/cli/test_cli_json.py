"""`--json` on every command that reports: one JSON document on stdout, with exactly the keys
docs/cli.md documents for it (read from the doc's "JSON output" list, not copied here)."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from s3memory.cli import build_parser
from tests.support import BUCKET, ok, stock
from tests.support.cli import CliClients, run

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
REPORTING = {  # the commands issue 23 names, those that had --json before, cat (issue 34) and conformance
    "export", "import", "purge", "prune", "restore", "redact", "migrate", "rotate", "rewrap", "shred", "history",
    "doctor", "ls", "cat", "agents", "stores", "verify", "reseal", "retire", "conformance",
}  # fmt: skip

# --- the documented schemas --------------------------------------------------------------

Schema = Any  # {key: Schema | None}, ("map", Schema | None), ("list", Schema | None), or None (a value)
_TOKEN = re.compile(r'\s*("[^"]*"|[{}\[\]:,]|[^\s{}\[\]:,]+)')


def parse_schema(text: str, aliases: dict[str, str] | None = None) -> Schema:
    """`{"a", "b": [{"c"}], NAME: n}` → {"a": None, "b": ("list", {"c": None})}; an unquoted key: any key."""
    for name, definition in (aliases or {}).items():
        text = re.sub(rf"\b{name}\b", definition, text)
    tokens = [t for t in _TOKEN.findall(text) if t]
    pos = 0

    def take() -> str:
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def value() -> Schema:
        token = take()
        if token == "[":
            inner = None if tokens[pos] == "]" else value()
            assert take() == "]", text
            return ("list", inner)
        if token != "{":
            return None  # a literal, a type or a placeholder: any value
        keys: dict[str, Schema] = {}
        mapping: Schema = None
        is_map = False
        while tokens[pos] != "}":
            key = take()
            sub = value() if tokens[pos] == ":" and take() == ":" else None
            if key.startswith('"'):
                keys[key.strip('"')] = sub
            else:
                is_map, mapping = True, sub
            if tokens[pos] == ",":
                take()
        take()
        return ("map", mapping) if is_map else keys

    schema = value()
    assert pos == len(tokens), f"trailing text in {text!r}"
    return schema


def documented() -> dict[str, list[Schema]]:
    """Each command of the doc's JSON list → its schemas (`ls` has one for a directory and one for a file)."""
    doc = DOC.read_text(encoding="utf-8")
    section = doc.split("<!-- json-schemas:", 1)[1].split("<!-- /json-schemas -->", 1)[0]
    aliases = dict(re.findall(r"`([A-Z]+)` is `(\{[^`]*\})`", doc.split("<!-- json-schemas:", 1)[0]))
    found: dict[str, list[Schema]] = {}
    for command, text in re.findall(r"^- `([a-z]+)`[^:`]*: `([^`]+)`", section, flags=re.MULTILINE):
        found.setdefault(command, []).append(parse_schema(text, aliases))
    return found


def mismatches(schema: Schema, data: Any, where: str = "") -> list[str]:
    """How `data` differs from `schema` in its keys (values are not checked; null matches anything)."""
    if schema is None or data is None:
        return []
    if isinstance(schema, dict):
        if not isinstance(data, dict):
            return [f"{where or 'the document'}: not an object"]
        if set(data) != set(schema):
            return [f"{where or 'the document'}: keys {sorted(data)}, documented {sorted(schema)}"]
        return [m for key, sub in schema.items() for m in mismatches(sub, data[key], f"{where}.{key}")]
    kind, inner = schema
    if kind == "map":
        return [m for key, item in data.items() for m in mismatches(inner, item, f"{where}.{key}")]
    if not isinstance(data, list):
        return [f"{where}: not a list"]
    return [m for i, item in enumerate(data) for m in mismatches(inner, item, f"{where}[{i}]")]


def test_the_schema_parser_reads_keys_lists_and_maps() -> None:
    text = '{"a", "b": [PROBLEM], "c": {NAME: true|false}, "d": "directory", "e": [TEXT]}'
    assert parse_schema(text, {"PROBLEM": '{"agent", "path"}'}) == {
        "a": None,
        "b": ("list", {"agent": None, "path": None}),
        "c": ("map", None),
        "d": None,
        "e": ("list", None),
    }
    schema = parse_schema('{"a", "b": [{"c"}]}')
    assert mismatches(schema, {"a": 1, "b": [{"c": 2}]}) == []
    assert mismatches(schema, {"a": 1, "b": [{"c": 2, "x": 3}]}) == [".b[0]: keys ['c', 'x'], documented ['c']"]
    assert mismatches(schema, {"b": []}) == ["the document: keys ['b'], documented ['a', 'b']"]


def test_every_command_that_reports_takes_json_and_has_one_documented_schema() -> None:
    parser = build_parser()
    commands = next(a.choices for a in parser._actions if a.dest == "command")
    with_json = {name for name, sub in commands.items() if any("--json" in a.option_strings for a in sub._actions)}
    assert with_json == REPORTING
    schemas = documented()
    assert sorted(schemas) == sorted(REPORTING)
    assert {name: len(found) for name, found in schemas.items() if len(found) > 1} == {"ls": 2}


# --- what the commands print ---------------------------------------------------------------


def json_of(capsys: Any, *argv: str, code: int = 0) -> Any:
    """Run a command with --json (and --yes where it asks); its stdout must be one JSON document."""
    parser = build_parser()
    sub = next(a.choices for a in parser._actions if a.dest == "command")[argv[0]]
    flags = [f for f in ("--yes", "-q") if any(f in a.option_strings for a in sub._actions)]
    got, out, err = run(capsys, *argv, *flags, "--json")
    assert got == code, err
    return json.loads(out)


def check(command: str, data: Any) -> None:
    found = [mismatches(schema, data) for schema in documented()[command]]
    assert any(not m for m in found), f"{command} --json differs from docs/cli.md: {found}"


@pytest.fixture
def ann(versioned: Any, make_tool: Any) -> Any:
    tool = stock(make_tool("ann"), {"notes.md": "one\n", "d/a.md": "two\n"})
    ok(tool, command="str_replace", path="/memories/notes.md", old_str="one", new_str="uno")
    return tool


def test_inspecting_commands(capsys: Any, ann: Any) -> None:
    check("ls", data := json_of(capsys, "ls", "--agent", "ann"))
    assert [e["path"] for e in data["entries"]] == ["/memories/d", "/memories/d/a.md", "/memories/notes.md"]
    check("ls", json_of(capsys, "ls", "--agent", "ann", "/memories/notes.md"))
    check("agents", json_of(capsys, "agents"))
    check("verify", data := json_of(capsys, "verify", "--agent", "ann"))
    assert data["branch_keys"]
    assert data["problems"] == []
    check("history", data := json_of(capsys, "history", "--agent", "ann"))
    assert len(data) == 3


def test_export_and_import(capsys: Any, ann: Any, tmp_path: Path) -> None:
    check("export", data := json_of(capsys, "export", "--agent", "ann", "--to", str(tmp_path / "out")))
    assert (data["files"], data["written"]) == (2, True)
    check("import", data := json_of(capsys, "import", "--agent", "bob", str(tmp_path / "out")))
    assert sorted(w["path"] for w in data["written"]) == ["/memories/d/a.md", "/memories/notes.md"]
    check("import", data := json_of(capsys, "import", "--agent", "bob", str(tmp_path / "out")))
    assert (data["written"], sorted(data["skipped"])) == ([], ["/memories/d/a.md", "/memories/notes.md"])


def test_restore_and_redact(capsys: Any, ann: Any) -> None:
    # --at takes whole seconds, and a store may keep milliseconds (MiniStack): a time in the second
    # of the last write would be before it, and the restore would write a version of its own.
    time.sleep(1.1)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    check("restore", json_of(capsys, "restore", "--agent", "ann", "--at", now, "--dry-run"))
    check("restore", json_of(capsys, "restore", "--agent", "ann", "--at", now, "/memories/d"))
    (version,) = [v["version"] for v in json_of(capsys, "history", "--agent", "ann", "/memories/d/a.md")]
    check("redact", data := json_of(capsys, "redact", "--agent", "ann", "/memories/d/a.md", "--version", version))
    assert data["deleted"] == [version]
    check("redact", json_of(capsys, "redact", "--agent", "ann", "/memories/notes.md", "--all-versions", "--dry-run"))


def test_key_and_name_plans_print_what_they_would_do(capsys: Any, ann: Any) -> None:
    data = json_of(capsys, "rotate", "--agent", "ann", "--dry-run")
    check("rotate", data)
    assert data["dry_run"] is True
    assert [(r["agent"], r["active"], r["created"]) for r in data["rotated"]] == [("ann", None, False)]
    assert data["rotated"][0]["previous"] is not None  # ann's first write made a key
    check("reseal", data := json_of(capsys, "reseal", "--agent", "ann", "--dry-run"))
    assert (data["dry_run"], data["resealed"], data["already"]) == (True, 0, 2)
    check("migrate", data := json_of(capsys, "migrate", "--agent", "ann", "--names", "encrypted", "--dry-run"))
    assert (data["dry_run"], data["moved"], data["already"], data["finished"]) == (True, 2, 0, False)
    check("retire", data := json_of(capsys, "retire", "--agent", "ann", "--dry-run"))
    assert (data["dry_run"], data["generation"], data["retired"]) == (True, 0, False)


def test_keys_and_names(capsys: Any, ann: Any) -> None:
    check("rotate", data := json_of(capsys, "rotate", "--agent", "ann"))
    assert [r["agent"] for r in data["rotated"]] == ["ann"]
    check("reseal", json_of(capsys, "reseal", "--agent", "ann"))
    check("migrate", data := json_of(capsys, "migrate", "--agent", "ann", "--names", "encrypted"))
    assert data["finished"] is True


def test_erasing_commands(capsys: Any, ann: Any, make_tool: Any) -> None:
    check("prune", json_of(capsys, "prune", "--agent", "ann", "--older-than", "1d", "--dry-run"))
    check("purge", data := json_of(capsys, "purge", "--agent", "ann", "--dry-run"))
    assert data["deleted"]
    check("shred", data := json_of(capsys, "shred", "--agent", "ann"))
    assert len(data["branch_keys"]) == 2  # the branch key's claim and its index entry
    assert data["deleted"]
    assert data["remaining"] == 0
    stock(make_tool("cat"), {"x.md": "x\n"})
    check("purge", data := json_of(capsys, "purge", "--agent", "cat"))
    assert {d["path"] for d in data["deleted"]} >= {"/memories/x.md"}
    # Nothing left: a second purge is a typo's case now (exit 1, one line on stderr, no JSON document).
    code, out, err = run(capsys, "purge", "--agent", "cat", "--yes", "-q", "--json")
    assert (code, out) == (1, "")
    assert err.startswith("s3memory: error: agent cat has no objects under s3://")


def test_prune_lists_what_it_deletes(capsys: Any, ann: Any, monkeypatch: Any) -> None:
    import s3memory.cli.erase as erase

    class Later(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return datetime.now(tz).replace(year=datetime.now(tz).year + 1)

    monkeypatch.setattr(erase, "datetime", Later)
    check("prune", data := json_of(capsys, "prune", "--agent", "ann", "--older-than", "1d"))
    assert sorted(d["path"] for d in data["deleted"]) == ["/memories/d/a.md", "/memories/notes.md"]


@pytest.mark.moto_only  # MiniStack has no KMS ReEncrypt
def test_rewrap_and_doctor(capsys: Any, env: Any, make_tool: Any, kms: Any, cli_clients: CliClients) -> None:
    ok(make_tool("kim", use_kms=True), command="create", path="/memories/a.md", file_text="a\n")
    cli_clients.kms = kms
    destination = kms.create_key(Description="s3memory destination")["KeyMetadata"]["KeyId"]
    check("rewrap", data := json_of(capsys, "rewrap", "--to-key", destination, "--agent", "kim", "--dry-run"))
    assert (data["dry_run"], data["rewrapped"], data["already"], data["kms_calls"]) == (True, 1, None, 0)
    check("rewrap", data := json_of(capsys, "rewrap", "--to-key", destination, "--agent", "kim"))
    assert data["dry_run"] is False
    assert (data["rewrapped"], data["objects"]) == (1, None)
    check("rewrap", data := json_of(capsys, "rewrap", "--to-key", destination, "--objects"))
    assert data["objects"] == {"rewrapped": 0, "already": 0}
    check("doctor", data := json_of(capsys, "doctor"))
    assert data["checksums"] is True
    assert env.list_objects_v2(Bucket=BUCKET, Prefix="agents/.s3memory-doctor/").get("KeyCount") == 0
