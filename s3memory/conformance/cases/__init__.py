"""Every conformance case, as data, in the order the kit runs them."""

from __future__ import annotations

from s3memory.conformance.model import Case, Race

from . import edits, files, listings, moves, paths, races, text

CASES: tuple[Case | Race, ...] = (
    *paths.CASES, *listings.CASES, *files.CASES, *edits.CASES, *moves.CASES, *text.CASES, *races.CASES,
)  # fmt: skip

CONCERNS = ("paths", "root", "listings", "files", "limits", "edits", "insert", "moves", "unicode", "concurrency")
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
