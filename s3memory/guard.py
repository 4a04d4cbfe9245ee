"""Sensitive-data guard: scan content before it is written. Pure.

The documentation advises not to rely on the model's restraint alone. The default guard
refuses obvious secrets; `redact` replaces them instead; `off` writes everything. An error
names the kind of secret and the line, never the secret itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from .errors import CommandError

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
    start: int
    end: int


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card_ok(match: str) -> bool:
    digits = re.sub(r"[ -]", "", match)
    return 13 <= len(digits) <= 19 and len(set(digits)) > 1 and _luhn_ok(digits)


# kind → (pattern, extra check). Patterns are anchored on word boundaries so ordinary prose,
# hashes and ids do not trip them.
_DETECTORS: list[tuple[str, re.Pattern[str], Callable[[str], bool] | None]] = [
    (
        "PEM private key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)"
        ),
        None,
    ),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"), None),
    (
        "AWS secret access key",
        re.compile(
            r"(?i)(?:aws_?secret_?access_?key|secret_?access_?key|aws_?secret)[\"'\s:=]{1,5}[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"
        ),
        None,
    ),
    ("JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), None),
    ("bearer token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{20,}"), None),
    ("payment card number", re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])"), _card_ok),
]


def find_secrets(text: str) -> list[Finding]:
    found: list[Finding] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern, check in _DETECTORS:
        for m in pattern.finditer(text):
            if check is not None and not check(m.group(0)):
                continue
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            taken.append((m.start(), m.end()))
            found.append(Finding(kind, text.count("\n", 0, m.start()) + 1, m.start(), m.end()))
    return sorted(found, key=lambda f: f.start)


class SecretGuard:
    """The default guard. `mode`: "block" (default), "redact" or "off"."""

    def __init__(self, mode: GuardMode = "block") -> None:
        if mode not in ("block", "redact", "off"):
            raise ValueError('guard mode must be "block", "redact" or "off"')
        self.mode: GuardMode = mode

    def scan(self, text: str, display: str) -> str:
        if self.mode == "off":
            return text
        findings = find_secrets(text)
        if not findings:
            return text
        if self.mode == "block":
            first = findings[0]
            raise CommandError(
                f"Error: Cannot write {display}: the content contains what looks like a {first.kind} "
                f"on line {first.line}. Secrets must not be stored in memory; remove it and try again. "
                "Nothing was changed."
            )
        out: list[str] = []
        pos = 0
        for f in findings:
            out.append(text[pos : f.start])
            out.append(REDACTED.format(kind=f.kind))
            pos = f.end
        out.append(text[pos:])
        return "".join(out)
