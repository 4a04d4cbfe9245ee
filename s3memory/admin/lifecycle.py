"""Lifecycle rules that reach the agents' branch keys: expiry, and transitions to an archive class.

Branch keys (`{prefix}{agent}/.s3memory/keys/`) are written once and never rewritten, so a rule
that expires current objects by age deletes them, and one that moves them to an archive class
(S3 Glacier Flexible Retrieval, Deep Archive) makes them unreadable until each object is restored;
either way no file sealed under them can be decrypted. Noncurrent-version rules are harmless: they
touch only a replaced claim's old version.
"""

from __future__ import annotations

from typing import Any

# Storage classes whose objects cannot be read without a restore (Glacier Instant Retrieval can).
ARCHIVE_CLASSES = frozenset({"GLACIER", "DEEP_ARCHIVE"})


def _scope(rule: dict[str, Any]) -> dict[str, Any]:
    scope: dict[str, Any] = rule.get("Filter", {"Prefix": rule.get("Prefix", "")})
    return scope.get("And", scope)  # type: ignore[no-any-return]


def covers_keystores(rule: dict[str, Any], prefix: str) -> bool:
    """True if enabled lifecycle `rule` may apply to an object under an agent's keystore
    (untagged objects of any size: tag filters exclude them, size filters may not)."""
    if rule.get("Status") != "Enabled":
        return False
    scope = _scope(rule)
    if "Tag" in scope or scope.get("Tags"):
        return False
    rule_prefix = str(scope.get("Prefix", ""))
    if prefix.startswith(rule_prefix):
        return True
    if not rule_prefix.startswith(prefix):
        return False
    _, slash, tail = rule_prefix[len(prefix) :].partition("/")
    folder = ".s3memory/keys/"
    return not slash or folder.startswith(tail) or tail.startswith(folder)


def expires_keystores(rule: dict[str, Any], prefix: str) -> bool:
    """True if lifecycle `rule` expires current objects that may be under an agent's keystore."""
    expiration = rule.get("Expiration", {})
    return ("Days" in expiration or "Date" in expiration) and covers_keystores(rule, prefix)


def archives_keystores(rule: dict[str, Any], prefix: str) -> str | None:
    """The archive class that lifecycle `rule` moves keystore objects to, or None. Judged whatever
    S3's default minimum transition size (128 KB, above every keystore object): a size filter in
    the rule, or the bucket's `TransitionDefaultMinimumObjectSize`, lifts it without a change here."""
    transitions = [*rule.get("Transitions", []), *([rule["Transition"]] if "Transition" in rule else [])]
    archive = [str(t.get("StorageClass")) for t in transitions if t.get("StorageClass") in ARCHIVE_CLASSES]
    return archive[0] if archive and covers_keystores(rule, prefix) else None


def keystore_risks(configuration: dict[str, Any], prefix: str) -> list[str]:
    """What the rules of a `GetBucketLifecycleConfiguration` answer would do to the branch keys, one note per rule."""
    notes = []
    for rule in configuration.get("Rules", []):
        name = str(rule.get("ID") or "(no id)")
        if expires_keystores(rule, prefix):
            notes.append(f"lifecycle rule {name} expires objects under the agents' keystores")
        elif archive := archives_keystores(rule, prefix):
            notes.append(f"lifecycle rule {name} moves objects under the agents' keystores to {archive}")
    return notes
