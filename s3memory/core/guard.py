"""Sensitive-data guard: scan content (and its path) before it is written. Pure.

The documentation advises not to rely on the model's restraint alone: a prompt-injected model
can be talked into writing credentials into memory, where they would outlive the conversation.
The default guard refuses obvious secrets; `redact` replaces each with `[REDACTED <kind>]`;
`off` writes everything. An error names the kind of secret and the line, never the secret.

Detectors are chosen for a low false-positive rate: each secret has a recognizable shape
(a fixed prefix, a label, PEM armour, the JWT layout), and a card number must start with a card
network's prefix, have that network's length and pass the Luhn check. It must also look like a
card: grouped in a card layout (4111 1111 1111 1111, 3782 822463 10005), or, written as one
unbroken run of digits, preceded within a few characters by a card word ("card", "Visa", "cc",
"exp", ...), so order numbers and other long identifiers that pass Luhn by chance are left alone.
Patterns are linear (no nested quantifiers), so a 1 MiB file scans in milliseconds.

Overlapping secrets: matches that overlap or touch (a bearer token whose body holds an AWS access
key id) are merged, and the whole union is reported and redacted once, so no part of any match
stays in clear. The merged finding takes the kind of its outermost match: the one that starts
first, the longest of those, then the detector listed first in `DETECTORS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from s3memory.errors import CommandError

from .cards import DIGIT_RUN, card_spans

GuardMode = Literal["block", "redact", "off"]
REDACTED = "[REDACTED {kind}]"


class Guard(Protocol):
    def scan(self, text: str, display: str) -> str:
        """Return the text to write (maybe redacted) or raise `CommandError`."""
        ...


@dataclass(frozen=True)
class Finding:
    kind: str
    line: int
    start: int  # span of the secret itself (a label or "Bearer " before it is kept when redacting)
    end: int


# --- payment cards ----------------------------------------------------------------------


def _token_ok(token: str) -> bool:
    """A bearer token looks random: it has a digit, or mixes cases without being hyphenated prose."""
    return any(c.isdigit() for c in token) or (token != token.lower() and token != token.upper() and "-" not in token)


# A token starts only where a run of token characters starts, so a long run is scanned once
# (with `\b`, every "-" inside a run would start another scan of it: quadratic time).
_RUN_START = r"(?<![A-Za-z0-9_-])"


@dataclass(frozen=True)
class Detector:
    """One kind of secret. `hints`: lower-case literals, one of which any match contains (a fast
    pre-filter); `check`: an extra test of the secret. Group "s", if present, is the secret itself."""

    kind: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...] = ()
    check: Callable[[str], bool] | None = None
    split: Callable[[re.Match[str]], list[tuple[int, int]]] | None = None  # secrets inside one match

    def spans(self, m: re.Match[str]) -> list[tuple[int, int]]:
        if self.split is not None:
            return self.split(m)
        group = "s" if "s" in self.pattern.groupindex else 0
        if self.check is not None and not self.check(m.group(group)):
            return []
        return [m.span(group)]


DETECTORS: tuple[Detector, ...] = (
    Detector(
        "PEM private key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY-----|\Z)"
        ),
        ("private key-----",),
    ),
    Detector(
        "PGP private key",
        re.compile(r"-----BEGIN PGP PRIVATE KEY BLOCK-----[\s\S]*?(?:-----END PGP PRIVATE KEY BLOCK-----|\Z)"),
        ("pgp private key block",),
    ),
    Detector(
        "AWS access key id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"), ("akia", "asia", "abia", "acca")
    ),
    Detector(
        "AWS secret access key",
        re.compile(
            r"(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key|aws_?secret)[\"'\s:=]{1,5}"
            r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
        ),
        ("secret",),
    ),
    Detector("Anthropic API key", re.compile(_RUN_START + r"sk-ant-[A-Za-z0-9_-]{20,}"), ("sk-ant-",)),
    Detector(
        "OpenAI API key",
        re.compile(_RUN_START + r"sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]*T3BlbkFJ[A-Za-z0-9_-]{8,}"),
        ("t3blbkfj",),
    ),
    Detector("Stripe secret key", re.compile(_RUN_START + r"[sr]k_live_[A-Za-z0-9]{16,}"), ("k_live_",)),
    Detector(
        "GitHub token",
        re.compile(_RUN_START + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Detector("Slack token", re.compile(_RUN_START + r"xox[abposr]-[A-Za-z0-9-]{10,}"), ("xox",)),
    Detector("Google API key", re.compile(_RUN_START + r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"), ("aiza",)),
    Detector(
        "JSON web token",
        re.compile(_RUN_START + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        ("eyj",),
    ),
    Detector("bearer token", re.compile(r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/-]{20,}=*)"), ("bearer",), _token_ok),
    Detector(
        "basic auth credentials",
        re.compile(r"(?i)\bauthorization:\s*basic\s+(?P<s>[A-Za-z0-9+/]{8,}={0,2})"),
        ("authorization",),
    ),
    Detector(
        "password in a URL",
        re.compile(r"(?<![A-Za-z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]{0,30}://[^\s/:@]{0,256}:(?P<s>[^\s/@]{1,256})@"),
        ("://",),
    ),
    Detector("payment card number", DIGIT_RUN, split=card_spans),
)


def _matches(text: str) -> list[Finding]:
    """Every match of every detector (lines not counted yet), outermost first: by start, the
    longest first, then in detector order (the sort is stable)."""
    found: list[Finding] = []
    lowered = text.lower()
    for detector in DETECTORS:
        if detector.hints and not any(hint in lowered for hint in detector.hints):
            continue
        for m in detector.pattern.finditer(text):
            found.extend(Finding(detector.kind, 0, start, end) for start, end in detector.spans(m))
    found.sort(key=lambda f: (f.start, -f.end))
    return found


def merge_overlaps(findings: list[Finding]) -> list[Finding]:
    """Merge findings that overlap or touch into one spanning their union, named after the first
    of them; `findings` must be sorted outermost first (see `_matches`)."""
    merged: list[Finding] = []
    for f in findings:
        if merged and f.start <= merged[-1].end:
            if f.end > merged[-1].end:
                merged[-1] = replace(merged[-1], end=f.end)
        else:
            merged.append(f)
    return merged


def _number_lines(text: str, findings: list[Finding]) -> list[Finding]:
    """The findings (in text order) with their 1-based line numbers, in one pass over the text."""
    numbered: list[Finding] = []
    line, pos = 1, 0
    for f in findings:
        line += text.count("\n", pos, f.start)
        pos = f.start
        numbered.append(replace(f, line=line))
    return numbered


def find_secrets(text: str) -> list[Finding]:
    """Every secret found, in text order; overlapping or touching matches are merged into one
    finding (see the module docstring), so the findings are disjoint."""
    return _number_lines(text, merge_overlaps(_matches(text)))


def _a(kind: str) -> str:
    return ("an " if kind[0].lower() in "aeiou" else "a ") + kind


def blocked_message(display: str, finding: Finding) -> str:
    return (
        f"Error: Cannot write {display}: the content contains what looks like {_a(finding.kind)} "
        f"on line {finding.line}. Secrets must not be stored in memory; remove it and try again. "
        "Nothing was changed."
    )


def blocked_path_message(finding: Finding) -> str:
    # The path is not repeated: it is the secret.
    return (
        f"Error: Cannot write to this path: its name contains what looks like {_a(finding.kind)}. "
        "Secrets must not be stored in memory, not even in file names; choose another name. Nothing was changed."
    )


def redact(text: str, findings: list[Finding]) -> str:
    out: list[str] = []
    pos = 0
    for f in findings:
        out.append(text[pos : f.start])
        out.append(REDACTED.format(kind=f.kind))
        pos = f.end
    out.append(text[pos:])
    return "".join(out)


class SecretGuard:
    """The default guard. `mode`: "block" (default), "redact" or "off".

    The path is scanned too, in both "block" and "redact" modes: object keys are not encrypted
    (they show in listings, logs and inventories), and a name cannot be redacted silently.
    """

    def __init__(self, mode: GuardMode = "block") -> None:
        if mode not in ("block", "redact", "off"):
            raise ValueError('guard mode must be "block", "redact" or "off"')
        self.mode: GuardMode = mode

    def __repr__(self) -> str:
        return f"SecretGuard(mode={self.mode!r})"

    def scan(self, text: str, display: str) -> str:
        if self.mode == "off":
            return text
        in_path = find_secrets(display)
        if in_path:
            raise CommandError(blocked_path_message(in_path[0]))
        findings = find_secrets(text)
        if not findings:
            return text
        if self.mode == "block":
            raise CommandError(blocked_message(display, findings[0]))
        return redact(text, findings)
