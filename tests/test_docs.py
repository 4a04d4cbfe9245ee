"""The documentation names what the code has: every setting, every command, no stale file."""

from __future__ import annotations

import re
from pathlib import Path

from s3memory.cli import COMMANDS
from s3memory.config import Settings

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


def test_docs_name_only_files_that_exist() -> None:
    for doc in [
        REPO / "README.md",
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
