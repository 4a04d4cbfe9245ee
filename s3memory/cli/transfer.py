"""Move memory between S3 and local files: `export` (decrypt and verify) and `import` (encrypt).

One line per object that matters on stdout, problems as `failed: AGENT:PATH: REASON`, a
one-line summary at the end, progress on stderr; exit 1 if any object failed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import stat
import tempfile
import time
from pathlib import Path

from s3memory.admin.localfs import DirWriter, TarWriter, is_tarball
from s3memory.core.paths import escape_for_display, owner_name

from .context import (
    can_confirm,
    confirm,
    connect,
    emit_json,
    failed_suffix,
    print_problems,
    print_summary,
    problems_json,
    say,
)
from .exits import EXIT_FAILED, EXIT_OK, Failed, UsageError
from .pending import note_pending, pending_of
from .progress import count, summary

_TAR_NAMES = "a name ending in .tar.gz, .tgz or .tar"


def _cannot_write(shown: str, err: OSError) -> Failed:
    reason = err.strerror or type(err).__name__
    return Failed(f"cannot write {shown}: {reason}; nothing was exported (fix the destination or choose another --to)")


def _check_destination(dest: Path, shown: str, *, force: bool) -> None:
    """Refuse, before anything is read or written, a destination export would clobber or cannot use."""
    try:
        mode = dest.lstat().st_mode
        in_use = stat.S_ISDIR(mode) and any(dest.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return  # not there (opening it says why if it cannot be made)
    except OSError as err:
        raise _cannot_write(shown, err) from None
    if is_tarball(dest):
        if stat.S_ISDIR(mode):
            raise UsageError(f"{shown} is an existing directory, but {_TAR_NAMES} is exported as a tarball; "
                             "choose another --to")  # fmt: skip
        if not force:
            raise UsageError(f"{shown} is an existing file; pass --force to replace it")
    elif stat.S_ISREG(mode):
        raise UsageError(f"{shown} is an existing file, and export writes a directory unless --to is {_TAR_NAMES}; "
                         "choose another --to")  # fmt: skip
    elif not force and (in_use or not stat.S_ISDIR(mode)):
        raise UsageError(f"{shown} already exists and is not an empty directory; pass --force to write into it")


class _DirTarget:
    """An export directory; what the export created is removed again if it fails and leaves it empty."""

    def __init__(self, dest: Path) -> None:
        self.dest = dest
        self._missing: list[Path] = []  # dest and the parents it needs, deepest first
        for path in (dest, *dest.parents):
            if os.path.lexists(path):
                break
            self._missing.append(path)
        self._before = {root for root, _, _ in os.walk(dest)}  # the directories there already (none if new)

    def open(self, *, force: bool) -> DirWriter:
        return DirWriter(self.dest, replace=force)

    def keep(self, *, failed: bool) -> None:
        if failed:
            self.discard()

    def discard(self) -> None:
        """Remove each directory this export created and left empty; never a file, never one that was there."""
        for root, _, _ in os.walk(self.dest, topdown=False):
            if root not in self._before:
                with contextlib.suppress(OSError):
                    os.rmdir(root)
        for path in self._missing:
            with contextlib.suppress(OSError):
                path.rmdir()


class _TarTarget:
    """A tarball, written under a temporary name beside it and renamed over it only once complete.

    So a failed export leaves no partial tarball, and with --force the old one stays until then.
    """

    def __init__(self, dest: Path) -> None:
        self.dest = dest
        # A hidden name that ends like `dest`, so it is compressed the same way.
        self._partial = dest.with_name(f".{secrets.token_hex(6)}.partial-{dest.name}")

    def open(self, *, force: bool) -> TarWriter:
        return TarWriter(self._partial, replace=False)

    def keep(self, *, failed: bool) -> None:
        os.replace(self._partial, self.dest)

    def discard(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._partial.unlink()


def run_export(args: argparse.Namespace) -> int:
    from s3memory.admin.transfer import export

    dest = Path(args.to)
    shown = escape_for_display(str(dest))
    _check_destination(dest, shown, force=args.force)
    target = _TarTarget(dest) if is_tarball(dest) else _DirTarget(dest)
    started = time.monotonic()
    with connect(args) as ctx:
        ctx.require(args.agent)
        vault = ctx.vault(args.agent)
        note_pending(args.agent, pending_of(vault))
        try:
            writer = target.open(force=args.force)
        except OSError as err:
            target.discard()
            raise _cannot_write(shown, err) from None
        progress = ctx.progress("export")
        try:
            report = export(vault, ctx.pool, writer, progress)
        except BaseException:  # S3 failed, interrupted, ...: nothing half-made stays behind
            progress.finish()
            with contextlib.suppress(OSError):
                writer.close()
            target.discard()
            raise
        progress.finish()
        written = report.files > 0 or not report.problems  # an export of nothing that failed leaves nothing
        kept = False
        try:
            writer.close()
            if written:
                target.keep(failed=bool(report.problems))
                kept = True
        except OSError as err:  # finishing the tarball or putting it in place (a full disk, ...)
            raise _cannot_write(shown, err) from None
        finally:
            if not kept:
                target.discard()
    print_problems(report.problems)
    line = summary("exported", report.files, report.nbytes, time.monotonic() - started)
    where = f" to {shown}" if written else ""
    nothing = "" if written else f"; nothing was written to {shown}"
    print_summary(f"{line}{where}{failed_suffix(report.problems)}{nothing}")
    if args.json:
        emit_json({"agent": args.agent, "to": shown, "files": report.files, "bytes": report.nbytes,
                   "written": written, "problems": problems_json(report.problems)})  # fmt: skip
    return EXIT_FAILED if report.problems else EXIT_OK


def _interrupted(done: int, total: int, dry_run: bool) -> str:
    if dry_run:
        return f"interrupted after {done:,} of {total:,} files; nothing was written (--dry-run)"
    return (
        f"interrupted after {done:,} of {total:,} files (written, or skipped as already there; a write under "
        "way may still have landed); run the same import again to finish: files already imported are skipped"
    )


def run_import(args: argparse.Namespace) -> int:
    from s3memory.admin.transfer import Importer, local_source
    from s3memory.core.guard import SecretGuard

    source = Path(args.source)
    if not source.exists():
        raise UsageError(f"{escape_for_display(str(source))} does not exist")
    if args.overwrite:  # replacing files rewrites the agent's memory: asked for as purge asks
        can_confirm(args, "import --overwrite")
    started = time.monotonic()
    with connect(args) as ctx, tempfile.TemporaryDirectory(prefix="s3memory-import-") as spool:
        s = ctx.full
        try:
            files, unreadable = local_source(source, s.max_file_bytes, Path(spool))
        except OSError as err:
            raise Failed(
                f"cannot read {escape_for_display(str(source))}: {err.strerror or type(err).__name__}"
            ) from None
        if args.overwrite and not args.dry_run:
            confirm(args, "import --overwrite", f"This replaces every file of {owner_name(args.agent)} that "
                    f"{escape_for_display(str(source))} also holds (in a versioned bucket the old versions stay).",
                    nothing="changed")  # fmt: skip
        importer = Importer(
            ctx.writing_vault(args.agent, stores_names=True),
            ctx.pool,
            s.limits(),
            SecretGuard(s.guard),
            overwrite=args.overwrite,
            dry_run=args.dry_run,
        )
        progress = ctx.progress("import")
        try:
            report = importer.run(files, unreadable, progress)
        except KeyboardInterrupt:  # say how far it got and that a rerun resumes
            progress.finish()
            raise KeyboardInterrupt(_interrupted(progress.done, progress.total, args.dry_run)) from None
        progress.finish()
    would = "would " if args.dry_run else ""
    for planned in report.written:
        verb = "create" if planned.action == "create" else "overwrite"
        done = {"create": "created", "overwrite": "overwrote"}[verb]
        say(f"{would + verb if would else done} {planned.path} ({count(planned.size, 'byte')})")
    for path in report.existing:
        say(f"skipped {path}: it already exists (--overwrite replaces it)")
    for path in report.unchanged:
        say(f"skipped {path}: the same text is stored (no new version)")
    print_problems(report.problems)
    line = summary(f"{would}import" if would else "imported", len(report.written), report.nbytes,
                   time.monotonic() - started)  # fmt: skip
    skipped = f"{len(report.existing):,} skipped as existing"
    if args.overwrite:
        skipped = f"{len(report.unchanged):,} skipped as unchanged"
    print_summary(f"{line} ({skipped}){failed_suffix(report.problems)}")
    if args.json:
        written = [{"path": p.path, "action": p.action, "size": p.size} for p in report.written]
        emit_json({"agent": args.agent, "dry_run": args.dry_run, "written": written, "skipped": report.existing,
                   "bytes": report.nbytes, "problems": problems_json(report.problems)})  # fmt: skip
    return EXIT_FAILED if report.problems else EXIT_OK
