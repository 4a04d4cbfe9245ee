"""Limits and defaults, defined once. Pure.

`Settings`, the tool classes, the key caches and the CLI all take their defaults from here, so
a documented default and the one in force cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_FILE_BYTES = 1024 * 1024
DEFAULT_MAX_VIEW_CHARS = 100_000
MIN_VIEW_CHARS = 1000
# How long a process reuses an unwrapped key and a keystore listing (`S3MEMORY_KEY_CACHE_SECONDS`).
DEFAULT_KEY_CACHE_SECONDS = 300.0
# The writers' fence: a tool re-reads its agent's keystore listing before a write when the one it
# holds is older than this, so it sees a purge, shred or migration begun since (one LIST per
# window, none on a write within it). Operator commands that end what writers may do announce it
# in the keystore, then wait `DEFAULT_FENCE_WAIT_SECONDS` (`S3MEMORY_FENCE_SECONDS`: the window
# and a margin for a write in flight) before they destroy or move anything.
WRITE_FENCE_SECONDS = 60.0
DEFAULT_FENCE_WAIT_SECONDS = 90.0
# Branch keys (format 2): a new one becomes active when the active one is this many days old.
DEFAULT_KEY_ROTATION_DAYS = 30.0
# Files per agent unless configured otherwise: bounds what a listing of one agent can cost.
DEFAULT_MAX_AGENT_FILES = 10_000
DEFAULT_MAX_WORKERS = 16
MAX_WORKERS = 256
# The model `s3memory chat`, the Lambda example and the docs use unless told otherwise. Defined
# here only; `claude-sonnet-4-5` reaches end of life on 2026-11-30 per the installed SDK.
DEFAULT_MODEL = "claude-sonnet-5-5"
# botocore's own retries of one S3/KMS request (throttling, 5xx, connection errors).
DEFAULT_MAX_ATTEMPTS = 5


# Files a tool holds (text and ETag) after reading or writing them, so that an edit or delete of
# one skips its read (memory.recent); 0 holds none.
DEFAULT_HELD_FILES = 256


# Each field of `Limits`: its smallest value, and whether None (no limit) is allowed. Each is also
# the environment variable S3MEMORY_<FIELD> (config.Settings), which the errors name; that variable
# asks for a view of at least MIN_VIEW_CHARS, `Limits` itself for one character (a view is cut
# to fit any size, header and first line kept).
_BOUNDS: dict[str, tuple[int, bool]] = {
    "max_file_bytes": (1, False),
    "max_view_chars": (1, False),
    "max_agent_bytes": (1, True),
    "max_agent_files": (1, True),
    "held_files": (0, False),
}


@dataclass(frozen=True)
class Limits:
    """What one command may cost: file size, view size, the agent's optional quotas, and how many
    files the tool holds between commands (`held_files`, 0: none). Checked when built: each is an
    int (not a bool, a float or a string) of at least its smallest value; the quotas may be None."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_view_chars: int = DEFAULT_MAX_VIEW_CHARS
    max_agent_bytes: int | None = None
    max_agent_files: int | None = DEFAULT_MAX_AGENT_FILES
    held_files: int = DEFAULT_HELD_FILES

    def __post_init__(self) -> None:
        for name, (lowest, optional) in _BOUNDS.items():
            value = getattr(self, name)
            if value is None and optional:
                continue
            where = f"Limits.{name} (S3MEMORY_{name.upper()})"
            if isinstance(value, bool) or not isinstance(value, int):
                kind = "a whole number or None" if optional else "a whole number"
                raise TypeError(f"{where} must be {kind}, not {type(value).__name__}")
            if value < lowest:
                raise ValueError(f"{where} must be at least {lowest:,}, not {value:,}")
