"""The documentation names what the code has: every setting, command, module and test directory; no stale file
or link, and nothing outside the repository."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from s3memory.cli import COMMANDS
from s3memory.config import Settings
from tests.support import markdown

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]


def test_configuration_doc_lists_exactly_the_settings_fields() -> None:
    doc = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    section = doc.split("## Environment variables", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `(S3MEMORY_[A-Z_]+)` \|", section, flags=re.MULTILINE)
    assert len(documented) == len(set(documented))
    assert sorted(documented) == sorted(f"S3MEMORY_{name.upper()}" for name in Settings.model_fields)


def test_cli_doc_has_a_section_per_command() -> None:
    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.*)$", doc, flags=re.MULTILINE)
    for name in COMMANDS:
        assert any(f"`s3memory {name}`" in h for h in headings), name


def test_cli_doc_names_every_option_of_every_command() -> None:
    """Each command's `--help` options appear in its section of docs/cli.md, or in the sections
    every command shares (connection settings, exit codes and output, JSON output)."""
    from s3memory.cli import build_parser

    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    parts = re.split(r"^## ", doc, flags=re.MULTILINE)
    shared = "\n".join(p for p in parts if not p.startswith("`s3memory"))
    parser = build_parser()
    commands = next(a.choices for a in parser._actions if a.dest == "command")
    missing = []
    for name, sub in commands.items():
        section = "\n".join(p for p in parts if f"`s3memory {name}`" in p.split("\n", 1)[0])
        options = [o for a in sub._actions for o in a.option_strings if o.startswith("--") and o != "--help"]
        missing += [f"{name} {o}" for o in options if o not in section and o not in shared]
    assert not missing, f"docs/cli.md does not describe: {missing}"


def test_docs_name_only_files_that_exist() -> None:
    for doc in [
        REPO / "README.md",
        REPO / "README.pypi.md",
        REPO / "SECURITY.md",
        REPO / "FORMAT.md",
        REPO / "CONTRIBUTING.md",
        *REPO.glob("docs/*.md"),
    ]:
        for name in re.findall(
            r"(?<![\w/.])((?:s3memory|tests|bench|terraform|docs)/[\w./-]+\.(?:py|md|tf))", doc.read_text()
        ):
            assert (REPO / name).exists(), f"{doc.name} names {name}"


def test_readme_stays_short_and_shows_the_two_commands() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "make demo" in readme
    assert "make test" in readme
    assert "docs/contract.md" in readme


# --- The command list, the package map and the citations, checked against the tree ---------------------------------

PACKAGE = REPO / "s3memory"
# Directories git never tracks here (.gitignore), so never part of the project's text.
_UNTRACKED_DIRS = {".git", "__pycache__", "node_modules", "build", "dist", ".hypothesis"}


def _section(doc: str, heading: str) -> str:
    """The text under `## heading`, up to the next `## ` heading."""
    assert f"\n## {heading}\n" in doc, f"no '## {heading}' section"
    return doc.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _project_files() -> list[Path]:
    """Every file of the project as git would track it: the work tree without ignored directories."""
    found: list[Path] = []
    for root, dirs, files in os.walk(REPO):
        dirs[:] = [
            d
            for d in dirs
            if d not in _UNTRACKED_DIRS
            and not d.startswith((".venv", "export-"))
            and not d.endswith(("_cache", ".egg-info"))
        ]
        found += [Path(root, name) for name in files if name != ".git"]  # a worktree's pointer to its repository
    return sorted(found)


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None


def test_readme_lists_every_command_once() -> None:
    """README's command table has one row `| `s3memory NAME` | what it does |` per entry of `COMMANDS`."""
    section = _section((REPO / "README.md").read_text(encoding="utf-8"), "Command line")
    rows = re.findall(r"^\| `s3memory ([\w-]+)` \| (.*) \|$", section, flags=re.MULTILINE)
    listed = [name for name, _ in rows]
    problems = [f"no row for `s3memory {name}`" for name in COMMANDS if name not in listed]
    problems += [f"`s3memory {name}` is not a command of COMMANDS" for name in listed if name not in COMMANDS]
    problems += [f"two rows for `s3memory {name}`" for name in sorted({n for n in listed if listed.count(n) > 1})]
    problems += [f"`s3memory {name}` says nothing about what it does" for name, what in rows if not what.strip()]
    assert not problems, (
        "README.md's '## Command line' table needs one row `| `s3memory NAME` | what it does |` per command:\n"
        + "\n".join(problems)
    )


def _modules() -> dict[str, str]:
    """Every module and package of s3memory (`s3memory/x/y.py`, `s3memory/x/`) → its docstring's first paragraph."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        doc = " ".join((ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").split("\n\n")[0].split())
        if path.name == "__init__.py":
            found[path.parent.relative_to(REPO).as_posix() + "/"] = doc
        else:  # `__main__.py` too: `python -m s3memory` is how a user may run it (issue 34)
            found[path.relative_to(REPO).as_posix()] = doc
    return found


def test_package_map_has_a_row_per_module() -> None:
    """CONTRIBUTING's package map: a row `| `s3memory/pkg/` | ... |` per package, `| `s3memory/pkg/mod.py` | ... |`
    per module."""
    section = _section((REPO / "CONTRIBUTING.md").read_text(encoding="utf-8"), "Package map")
    rows = re.findall(r"^\| `(s3memory/[\w/.]*)` \| .+ \|$", section, flags=re.MULTILINE)
    modules = _modules()
    problems = [
        f"no row for {name}: add `| `{name}` | {what or 'what it is'} |` "
        + ("to the map" if name.endswith("/") else f"below the `{name.rpartition('/')[0]}/` row")
        for name, what in modules.items()
        if name not in rows
    ]
    problems += [f"the row {name} names no module of the package" for name in rows if name not in modules]
    problems += [f"two rows for {name}" for name in sorted({n for n in rows if rows.count(n) > 1})]
    assert not problems, "CONTRIBUTING.md's package map:\n" + "\n".join(problems)


def test_contributing_names_every_test_directory() -> None:
    doc = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    directories = sorted(p.name for p in (REPO / "tests").iterdir() if p.is_dir() and any(p.glob("*.py")))
    unnamed = [name for name in directories if f"`tests/{name}`" not in doc]
    assert not unnamed, f"CONTRIBUTING.md does not name the test directories {unnamed}"


def test_contributing_says_what_make_test_runs() -> None:
    """Each target `make test` runs, and each target those run by `$(MAKE) ... TARGETS` in their recipe."""
    doc = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = re.findall(r"^test: (.*)$", makefile, flags=re.MULTILINE)
    assert len(targets) == 1
    named = targets[0].split()
    for target in list(named):
        for recipe in re.findall(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", makefile, flags=re.MULTILINE):
            for line in recipe.splitlines():
                if "$(MAKE)" in line:
                    named += [word for word in line.split()[1:] if not word.startswith(("-", "$"))]
    assert {"lint", "typecheck", "tf-check", "pytest", "test-dist", "test-ministack"} <= set(named)
    row = re.findall(r"^\| `make test` \| (.*) \|$", _section(doc, "Make targets"), flags=re.MULTILINE)
    assert len(row) == 1
    unsaid = [target for target in named if f"`{target}`" not in row[0]]
    assert not unsaid, f"CONTRIBUTING.md's `make test` row does not name the targets {unsaid} it runs"


# A path outside the repository: a folder named "shared" (the repo has none), or an absolute path on the
# build machine. Written with a character class so that this file does not match itself.
_OUTSIDE = re.compile(r"(?:\.\./|(?<![\w/.-]))shared[/]|/wor[k]/")


def test_no_file_cites_a_path_outside_the_repository() -> None:
    assert not (REPO / "shared").exists()
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in _project_files()
        if (text := _text(path)) is not None
        for number, line in enumerate(text.splitlines(), 1)
        if _OUTSIDE.search(line)
    ]
    assert not found, "these lines cite a file outside the repository:\n" + "\n".join(found)


_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^```.*?^```", flags=re.MULTILINE | re.DOTALL)


def _prose(doc: Path) -> str:
    """The markdown document without its fenced code blocks (their lines kept, blank)."""
    return _FENCE.sub(lambda block: "\n" * block.group().count("\n"), doc.read_text(encoding="utf-8"))


def _anchors(doc: Path) -> set[str]:
    """The anchors GitHub gives the document's headings (`## `s3memory doctor`` → `s3memory-doctor`)."""
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", _prose(doc), flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in found:  # a repeated heading gets -1, -2, ...
            n += 1
            anchor = f"{slug}-{n}"
        found.add(anchor)
    return found


def test_every_relative_markdown_link_points_at_a_file_of_the_repository() -> None:
    """Every relative link of every markdown file: inside the repository, to a file that exists, and to a heading
    of it when it names one."""
    broken: list[str] = []
    for doc in [p for p in _project_files() if p.suffix == ".md"]:
        for number, line in enumerate(_prose(doc).splitlines(), 1):
            for target in _LINK.findall(line):
                if re.match(r"[a-z][a-z0-9+.-]*:", target):
                    continue  # a URL
                name, _, anchor = target.partition("#")
                resolved = (doc.parent / name).resolve() if name else doc
                where = f"{doc.relative_to(REPO)}:{number}: {target}"
                if not resolved.is_relative_to(REPO):
                    broken.append(f"{where} leaves the repository")
                elif not resolved.exists():
                    broken.append(f"{where} does not exist")
                elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                    broken.append(f"{where}: {resolved.name} has no heading with that anchor")
    assert not broken, "broken relative links:\n" + "\n".join(broken)


_PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)


def _user_docs() -> list[Path]:
    return sorted(
        [
            REPO / "README.md",
            INDEX_PAGE,
            REPO / "SECURITY.md",
            *(REPO / "docs").glob("*.md"),
            *(REPO / "terraform").rglob("*.md"),
        ]
    )


def test_python_snippets_in_the_docs_define_every_name_they_use() -> None:
    """A reader copies a snippet as it is: it parses, and uses no undefined name (`keys`, `os`: issue 34, item 11). Each
    block is checked on its own with ruff's F821, as a reader's file would be."""
    ruff = Path(sys.executable).with_name("ruff")
    problems = []
    for doc in _user_docs():
        for block in _PYTHON_BLOCK.findall(doc.read_text(encoding="utf-8")):
            try:
                ast.parse(block)
            except SyntaxError as err:  # ruff reports it under no rule code, which the filter below would drop
                problems.append(f"{doc.relative_to(REPO)}: a python block does not parse: {err}")
                continue
            proc = subprocess.run(
                [str(ruff), "check", "--isolated", "--select", "F821", "--output-format", "concise", "--stdin-filename",
                 "snippet.py", "-"], input=block, capture_output=True, text=True, check=False,
            )  # fmt: skip
            problems += [f"{doc.relative_to(REPO)}: {line}" for line in proc.stdout.splitlines() if "F821" in line]
    assert not problems, "\n".join(problems)


def test_the_docs_cite_no_file_the_repository_lacks() -> None:
    """`memory-tool-spec.md` was cited but never shipped (issue 34, item 11): every specification
    (`*spec*.md`) a user doc names in backticks exists in the repository (other `*.md` names there
    are memory files of the examples)."""
    present = {p.name for p in REPO.rglob("*.md") if ".venv" not in p.parts}
    missing = [
        f"{doc.relative_to(REPO)}: {name}"
        for doc in _user_docs()
        for name in re.findall(r"`([\w.-]*spec[\w.-]*\.md)`", doc.read_text(encoding="utf-8"))
        if name not in present
    ]
    assert not missing, missing


# --- The package index's page (issue 34, item 10) --------------------------------------------------------------------


def _project() -> dict[str, Any]:
    return dict(tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"])


INDEX_PAGE = REPO / "README.pypi.md"
# The project has no public home yet. A Project-URL must name a page that exists: add it here and to
# pyproject.toml's [project.urls] together, the day it does.
PUBLIC_URLS: dict[str, str] = {}


def test_the_long_description_is_the_package_index_page() -> None:
    assert _project()["readme"] == INDEX_PAGE.name
    assert _project().get("urls", {}) == PUBLIC_URLS


def test_the_package_index_page_has_no_relative_link() -> None:
    """README.md's links into the repository (`docs/cli.md`, `SECURITY.md#...`) break on the package index;
    its page links only to absolute https:// URLs and names the sdist's documents as plain text."""
    text = INDEX_PAGE.read_text(encoding="utf-8")
    assert markdown.non_absolute_links(text) == []
    assert markdown.non_absolute_links("see [the CLI](docs/cli.md), ![x](a.png), [y](#top)") == [
        "docs/cli.md", "a.png", "#top",
    ]  # fmt: skip


def test_the_package_index_page_names_only_documents_the_sdist_carries() -> None:
    """Every document it names exists and MANIFEST.in includes it (tests/dist checks the built sdist)."""
    named = markdown.documents_named(INDEX_PAGE.read_text(encoding="utf-8"))
    assert {"docs/contract.md", "docs/cli.md", "SECURITY.md", "FORMAT.md", "CHANGELOG.md", "LICENSE"} <= set(named)
    assert [name for name in named if not (REPO / name).is_file()] == []
    lines = (REPO / "MANIFEST.in").read_text(encoding="utf-8").splitlines()
    manifest = [word for line in lines if line.startswith("include ") for word in line.split()[1:]]
    included = [name for name in named if name != "LICENSE" and name not in manifest]  # LICENSE: license-files
    assert [name for name in included if not (name.startswith("docs/") and "docs/*.md" in manifest)] == []


def test_the_package_index_page_shows_the_readmes_snippet_and_commands() -> None:
    """The two readmes cannot drift apart: the same tool-runner snippet, the same command table."""
    readme, page = (REPO / "README.md").read_text(encoding="utf-8"), INDEX_PAGE.read_text(encoding="utf-8")
    assert _PYTHON_BLOCK.findall(page) == _PYTHON_BLOCK.findall(readme)
    row = re.compile(r"^\| `s3memory [\w-]+` \| .* \|$", flags=re.MULTILINE)
    assert row.findall(_section(page, "Command line")) == row.findall(_section(readme, "Command line"))


def test_the_dev_toolchain_is_no_published_extra() -> None:
    assert sorted(_project()["optional-dependencies"]) == ["demo", "mcp", "otel"]


_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


def test_the_docs_count_the_header_entries_format_md_lists() -> None:
    """FORMAT.md's table of the object header is the count the prose gives: its five required and two optional
    entries, and the demo's object (written by the tool: every entry) in docs/cli.md (it said "five-entry" of a
    seven-entry header: issue 34, item 11)."""
    fmt = (REPO / "FORMAT.md").read_text(encoding="utf-8")
    section = fmt.split("\n### The object header (format 2)\n", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| `(s3m-[a-z]+)` \| (.*) \|$", section, flags=re.MULTILINE)
    optional = [name for name, what in rows if what.startswith("optional")]
    assert len(rows) > len(optional) > 0, rows
    counted = re.match(r"(\w+) S3 user-metadata entries and (\w+) optional ones", section.strip())
    assert counted, section.strip()[:120]
    assert (_NUMBERS[counted[1].lower()], _NUMBERS[counted[2]]) == (len(rows) - len(optional), len(optional))
    cli = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert [_NUMBERS[word] for word in re.findall(r"(\w+)-entry envelope header", cli)] == [len(rows)]


def test_docs_and_examples_take_the_public_api_from_the_package() -> None:
    """A name `s3memory` exports is imported from `s3memory`, never from the module that defines it (the Lambda
    example cited `s3memory.storage.sts.assume_agent_session`: issue 34, item 11)."""
    import s3memory

    public = "|".join(sorted(s3memory.__all__))
    internal = re.compile(rf"\bs3memory(?:\.\w+)+\.({public})\b|\bfrom s3memory(?:\.\w+)+ import [^\n]*\b({public})\b")
    examples = [p for p in (REPO / "terraform" / "examples").rglob("*.py") if ".terraform" not in p.parts]
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in [*_user_docs(), *examples, *(REPO / "examples").rglob("*.py")]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if internal.search(line)
    ]
    assert not found, "import these from `s3memory` instead:\n" + "\n".join(found)


def test_a_generated_secret_is_kept_where_the_reader_can_use_it_again() -> None:
    """`docker run -e S3MEMORY_MCP_TOKEN="$(openssl rand -hex 32)"` made a bearer token no client knew (issue 34,
    item 11): a secret generated in an example is assigned to a variable (`export NAME=$(...)`), then used."""
    generated = re.compile(r"\$\((?:openssl rand|python3? -c [^)]*urandom)")
    kept = re.compile(r"^\s*(?:#\s*)?(?:export\s+)?[A-Z][A-Z0-9_]*=\"?\$\(")
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in [REPO / "Dockerfile", *_user_docs()]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if generated.search(line) and not kept.match(line)
    ]
    assert not found, "\n".join(found)
