"""Each job's work on one agent (or store), calling the admin library with the worker's clients:
the outcome and counts of its result, never a path, a content or a secret.

A failure the admin library reports per object (a `Problem`) fails the agent with a reason code
and a count; an exception fails it with the exception's code (see `reason_of`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from s3memory.admin.branch_keys import rewrap_keys, rotate
from s3memory.admin.prune import prune
from s3memory.admin.purge import purge
from s3memory.admin.reseal import reseal
from s3memory.admin.rewrap import RewrapReport, rewrap
from s3memory.admin.shred import shred
from s3memory.admin.verify import verify
from s3memory.errors import S3MemoryError, StorageError
from s3memory.storage.concurrency import submit
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.keystore import Keystore
from s3memory.storage.kms import KmsKeys

from .jobs import cutoff_of
from .runtime import Runtime

# Reason codes of an agent whose work ran but left objects it could not handle.
PROBLEMS = "objects_failed"
REMAINING = "versions_remaining"


@dataclass
class Done:
    outcome: str  # ok, dry_run or failed
    counts: dict[str, int] = field(default_factory=dict)
    reason: str = ""


class _Quiet:
    """A tracker that draws nothing (a worker reports per agent, not per object)."""

    def start(self, total: int) -> None:
        pass

    def advance(self, nbytes: int = 0) -> None:
        pass


QUIET = _Quiet()


def reason_of(err: BaseException) -> str:
    """A code for the result: the S3 or KMS error code, else the error's class name (no message:
    messages may hold paths)."""
    code = getattr(err, "code", "") if isinstance(err, S3MemoryError) else ""
    return str(code) if code and str(code).replace("_", "").isalnum() else type(err).__name__


def _ended(counts: dict[str, int], problems: int, *, dry_run: bool = False) -> Done:
    if problems:
        return Done("failed", {**counts, "failed": problems}, PROBLEMS)
    return Done("dry_run" if dry_run else "ok", counts)


def do_prune(rt: Runtime, owner: str, options: Mapping[str, Any]) -> Done:
    dry_run = bool(options.get("dry_run"))
    by_access = bool(options.get("not_accessed_for"))
    cutoff = cutoff_of(options)
    # The files' LIST goes out with the keystore's (the name mode): the agent's root is the same in
    # every mode, and what is listed is judged (bookkeeping, shown paths) once the mode is known.
    root = AgentKeyspace(rt.prefix, owner).root
    listing = submit(rt.pool.executor, lambda: list(rt.store.list_all(root)))
    space = rt.space(owner)
    report = prune(rt.store, space, rt.pool, cutoff, QUIET, dry_run=dry_run, by_access=by_access,
                   listing=listing.result())  # fmt: skip
    files = len(report.candidates)
    counts = {"would_delete" if dry_run else "deleted": files, "bytes": sum(c.size for c in report.candidates)}
    return _ended(counts, len(report.problems), dry_run=dry_run)


def do_verify(rt: Runtime, owner: str, options: Mapping[str, Any]) -> Done:
    report = verify([rt.vault(owner)], rt.pool, QUIET)
    counts = {"verified": report.checked, "bookkeeping": report.bookkeeping, "bytes": report.nbytes,
              "branch_keys": len(report.branch_keys),
              "unreferenced_branch_keys": sum(not b.objects and not b.active for b in report.branch_keys)}  # fmt: skip
    counts.update({f"format_{v}": n for v, n in sorted(report.formats.items())})
    return _ended(counts, len(report.problems))


def do_rotate(rt: Runtime, owner: str, options: Mapping[str, Any]) -> Done:
    done, problems = rotate([rt.vault(owner, writing=True).keystore], QUIET)
    created = sum(r.created for _, r in done)
    return _ended({"rotated": len(done), "created": created, "voided": sum(len(r.voided) for _, r in done)},
                  len(problems))  # fmt: skip


def do_rewrap(rt: Runtime, owner: str, options: Mapping[str, Any]) -> Done:
    destination = str(options["to_key"])
    keys = KmsKeys(destination, kms_client=rt.kms)
    source = getattr(rt.settings, "kms_key_id", None)
    space = rt.space(owner) if options.get("objects") else AgentKeyspace(rt.prefix, owner)
    report = rewrap_keys([Keystore(rt.keystore, keys, space)], keys, destination, QUIET, source=source)
    objects = RewrapReport()
    if options.get("objects"):
        objects = rewrap(rt.store, [space], keys, destination, rt.pool, QUIET, source=source)
    counts = {"rewrapped": report.rewrapped, "already": report.already, "name_keys": report.name_keys,
              "objects_rewrapped": objects.rewrapped, "objects_already": objects.already,
              "kms_calls": report.kms_calls + objects.kms_calls}  # fmt: skip
    return _ended(counts, len(report.problems) + len(objects.problems))


def do_reseal(rt: Runtime, owner: str, options: Mapping[str, Any]) -> Done:
    report = reseal(rt.vault(owner, writing=True), rt.pool, QUIET)
    return _ended({"resealed": report.resealed, "already": report.already}, len(report.problems))


def _erased(counts: dict[str, int], problems: int, remaining: int) -> Done:
    if remaining and not problems:
        return Done("failed", {**counts, "remaining": remaining}, REMAINING)
    return _ended({**counts, "remaining": remaining} if remaining else counts, problems)


def _nothing_stored(rt: Runtime, owner: str) -> bool:
    """No version of anything under the owner's root (nor its keystore elsewhere): nothing to erase."""
    root = AgentKeyspace(rt.prefix, owner).root
    stores = {id(s): s for s in (rt.store, rt.keystore)}.values()
    return not any(next(iter(s.iter_versions(root)), []) for s in stores)


def _nothing() -> Done:
    return Done("ok", {"deleted": 0}, "nothing_stored")


def do_purge(rt: Runtime, owner: str, options: Mapping[str, Any]) -> Done:
    if _nothing_stored(rt, owner):
        return _nothing()
    space = rt.space(owner)
    report = purge(rt.store, space, rt.pool, QUIET, keystore=rt.keystore, wait=rt.settings.fence_seconds)
    markers = sum(v.delete_marker for v in report.deleted)
    counts = {"deleted": len(report.deleted), "delete_markers": markers, "arrived": report.arrived}
    return _erased(counts, len(report.problems), report.remaining)


def do_shred(rt: Runtime, owner: str, options: Mapping[str, Any]) -> Done:
    if _nothing_stored(rt, owner):
        return _nothing()
    space = rt.space(owner)
    keys_only = bool(options.get("keys_only"))
    report = shred(rt.store, rt.keystore, space, rt.pool, QUIET, keys_only=keys_only, wait=rt.settings.fence_seconds)
    objects = report.objects
    counts = {"key_versions": len(report.keys.deleted), "deleted": len(objects.deleted) if objects else 0}
    problems = len(report.keys.problems) + (len(objects.problems) if objects else 0)
    remaining = report.keys.remaining + (objects.remaining if objects else 0)
    return _erased(counts, problems, remaining)


WORK: dict[str, Callable[[Runtime, str, Mapping[str, Any]], Done]] = {
    "prune": do_prune,
    "verify": do_verify,
    "rotate": do_rotate,
    "rewrap": do_rewrap,
    "reseal": do_reseal,
    "shred": do_shred,
    "purge": do_purge,
}


def run(rt: Runtime, job: str, owner: str, options: Mapping[str, Any]) -> Done:
    """`job` on one owner; an error the library raises fails this owner only."""
    try:
        return WORK[job](rt, owner, options)
    except (S3MemoryError, StorageError, ValueError) as err:
        return Done("failed", {}, reason_of(err))
