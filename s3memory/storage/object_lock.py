"""S3 Object Lock as the operator commands see it: the bucket's profile, and one version's hold.

A bucket with Object Lock (the Terraform module's `compliance_profile`) refuses to delete or
overwrite a *version* before its retention date (and while a legal hold is on it), in governance
mode unless the request carries the bypass header (s3memory never sends it), in compliance mode
for anyone. A plain DELETE still works: it only adds a delete marker. So the commands that erase
versions (`purge`, `redact`, `shred`'s second step) must know before they start; the ones that
only write new versions or delete markers (`prune`, `restore`, the tools) go on as before.

`bucket_lock` reads the configuration once (GetObjectLockConfiguration); `version_hold` reads
one version's retention and legal hold (one HeadObject with VersionId).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from s3memory.errors import AccessDenied, StorageError

from .errors_table import call

# GetObjectLockConfiguration's answer for a bucket created without Object Lock.
NOT_LOCKED_CODES = frozenset({"ObjectLockConfigurationNotFoundError", "NoSuchObjectLockConfiguration"})


@dataclass(frozen=True)
class LockProfile:
    """A bucket's Object Lock configuration. `known` is False when it could not be read (the
    answer was AccessDenied: the caller lacks s3:GetBucketObjectLockConfiguration)."""

    enabled: bool
    mode: str = ""  # "GOVERNANCE" or "COMPLIANCE": the default retention's mode ("" for none)
    days: int = 0
    years: int = 0
    known: bool = True

    @property
    def retention(self) -> str:
        """The default retention in words ("30 days", "7 years", "" for none)."""
        if self.years:
            return f"{self.years} year" + ("s" if self.years != 1 else "")
        if self.days:
            return f"{self.days} day" + ("s" if self.days != 1 else "")
        return ""

    def describe(self) -> str:
        """One phrase for reports: "Object Lock on (COMPLIANCE mode, default retention 30 days)"."""
        if not self.known:
            return "Object Lock unknown (s3:GetBucketObjectLockConfiguration denied)"
        if not self.enabled:
            return "no Object Lock"
        if not self.mode:
            return "Object Lock on (no default retention: only versions given a retention or legal hold are locked)"
        return f"Object Lock on ({self.mode} mode, default retention {self.retention})"

    def to_json(self) -> dict[str, Any]:
        return {"known": self.known, "enabled": self.enabled, "mode": self.mode or None,
                "days": self.days or None, "years": self.years or None}  # fmt: skip


NO_LOCK = LockProfile(False)


def bucket_lock(s3: Any, bucket: str) -> LockProfile:
    """The bucket's Object Lock profile (one GetObjectLockConfiguration). A bucket without one
    answers ObjectLockConfigurationNotFoundError; AccessDenied gives `known=False`; anything else
    (no such bucket, throttling) is raised as ours."""
    try:
        resp = call("GetObjectLockConfiguration", s3.get_object_lock_configuration, Bucket=bucket)
    except AccessDenied:
        return LockProfile(False, known=False)
    except StorageError as err:
        if err.code in NOT_LOCKED_CODES:
            return NO_LOCK
        raise
    configuration = resp.get("ObjectLockConfiguration", {})
    if configuration.get("ObjectLockEnabled") != "Enabled":
        return NO_LOCK
    default = configuration.get("Rule", {}).get("DefaultRetention", {})
    days, years = int(default.get("Days") or 0), int(default.get("Years") or 0)
    return LockProfile(True, str(default.get("Mode", "")), days, years)


@dataclass(frozen=True)
class Hold:
    """What keeps one version from being deleted now: its retention date (in the future) and mode,
    and whether a legal hold is on it."""

    until: datetime | None
    mode: str
    legal_hold: bool

    def describe(self) -> str:
        parts = []
        if self.until is not None:
            parts.append(f"retained until {self.until.astimezone(timezone.utc):%Y-%m-%d %H:%M:%S} UTC ({self.mode})")
        if self.legal_hold:
            parts.append("under legal hold")
        return " and ".join(parts)


def version_hold(s3: Any, bucket: str, key: str, version_id: str, now: datetime) -> Hold | None:
    """The hold on one version at `now` (one HeadObject with VersionId), None if it may be deleted.
    A delete marker has none (S3 never locks one); a version deleted meanwhile has none either."""
    request: dict[str, Any] = {"Bucket": bucket, "Key": key}
    if version_id != "null":
        request["VersionId"] = version_id
    try:
        resp = call("HeadObject", s3.head_object, **request)
    except StorageError as err:
        if err.code in ("NoSuchKey", "NoSuchVersion", "404", "NotFound", "405", "MethodNotAllowed"):
            return None
        raise
    until = resp.get("ObjectLockRetainUntilDate")
    if isinstance(until, datetime) and until.tzinfo is None:
        until = until.replace(tzinfo=timezone.utc)
    retained = isinstance(until, datetime) and until > now
    legal = resp.get("ObjectLockLegalHoldStatus") == "ON"
    if not (retained or legal):
        return None
    return Hold(until if retained else None, str(resp.get("ObjectLockMode", "")), legal)
