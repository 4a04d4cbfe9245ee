"""Links and file names in markdown text, for the docs tests and the built artifacts' long description."""

from __future__ import annotations

import re

_FENCE = re.compile(r"^```.*?^```", flags=re.MULTILINE | re.DOTALL)
# [text](target "title"), ![alt](target), [text]: target (a reference definition), href="..." / src="..."
_TARGETS = (
    re.compile(r"\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)"),
    re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?", flags=re.MULTILINE),
    re.compile(r"\b(?:href|src)\s*=\s*[\"']([^\"']*)[\"']", flags=re.IGNORECASE),
)
# A document the text names as plain text: docs/x.md, SECURITY.md-style names, LICENSE.
_DOCUMENT = re.compile(r"(?<![\w/.-])((?:docs/[\w.-]+\.md)|(?:[A-Z][A-Z_]+\.md)|LICENSE)(?![\w/-])")


def prose(text: str) -> str:
    """The markdown text without its fenced code blocks (their lines kept, blank)."""
    return _FENCE.sub(lambda block: "\n" * block.group().count("\n"), text)


def link_targets(text: str) -> list[str]:
    """Every link and image target of the text outside code blocks, in order of the patterns."""
    body = prose(text)
    return [target for pattern in _TARGETS for target in pattern.findall(body)]


def non_absolute_links(text: str) -> list[str]:
    """The targets that a page shown anywhere but in the repository cannot follow: all but https:// URLs
    (relative paths, bare anchors, empty targets)."""
    return [target for target in link_targets(text) if not target.startswith("https://")]


def documents_named(text: str) -> list[str]:
    """The files the text names as plain text (`docs/cli.md`, `SECURITY.md`, `LICENSE`), outside code blocks."""
    return sorted(set(_DOCUMENT.findall(prose(text))))
