"""Move memory between S3 and local files: `export` (decrypt and verify) and `import` (encrypt).

One line per object that matters on stdout, problems as `failed: AGENT:PATH: REASON`, a
one-line summary at the end, progress on stderr; exit 1 if any object failed.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from s3memory.core.paths import escape_for_display

from .context import connect, failed_suffix, print_problems, print_summary, say
from .exits import EXIT_FAILED, EXIT_OK, Failed, UsageError
from .progress import count, summary


def run_export(args: argparse.Namespace) -> int:
    from s3memory.admin.localfs import DirWriter, TarWriter, destination_in_use, is_tarball
    from s3memory.admin.transfer import export

    dest = Path(args.to)
    shown = escape_for_display(str(dest))
    if not args.force and destination_in_use(dest):
        raise UsageError(f"{shown} already exists and is not an empty directory; pass --force to write into it")
    started = time.monotonic()
    with connect(args) as ctx:
        vault = ctx.vault(args.agent)
        try:
            writer = TarWriter(dest, replace=args.force) if is_tarball(dest) else DirWriter(dest, replace=args.force)
        except OSError as err:
            raise Failed(f"cannot write {shown}: {err.strerror or type(err).__name__}") from None
        progress = ctx.progress("export")
        try:
            report = export(vault, ctx.pool, writer, progress)
        finally:
            writer.close()
            progress.finish()
    print_problems(report.problems)
    line = summary("exported", report.files, report.nbytes, time.monotonic() - started)
    print_summary(f"{line} to {shown}{failed_suffix(report.problems)}")
    return EXIT_FAILED if report.problems else EXIT_OK


def run_import(args: argparse.Namespace) -> int:
    from s3memory.admin.transfer import Importer, local_source
    from s3memory.core.guard import SecretGuard

    source = Path(args.source)
    if not source.exists():
        raise UsageError(f"{escape_for_display(str(source))} does not exist")
    started = time.monotonic()
    with connect(args) as ctx:
        s = ctx.full
        try:
            files, unreadable = local_source(source, s.max_file_bytes)
        except OSError as err:
            raise Failed(
                f"cannot read {escape_for_display(str(source))}: {err.strerror or type(err).__name__}"
            ) from None
        importer = Importer(
            ctx.vault(args.agent),
            ctx.pool,
            s.limits(),
            SecretGuard(s.guard),
            overwrite=args.overwrite,
            dry_run=args.dry_run,
        )
        progress = ctx.progress("import")
        report = importer.run(files, unreadable, progress)
        progress.finish()
    would = "would " if args.dry_run else ""
    for planned in report.written:
        verb = "create" if planned.action == "create" else "overwrite"
        done = {"create": "created", "overwrite": "overwrote"}[verb]
        say(f"{would + verb if would else done} {planned.path} ({count(planned.size, 'byte')})")
    for path in report.existing:
        say(f"skipped {path}: it already exists (--overwrite replaces it)")
    print_problems(report.problems)
    line = summary(f"{would}import" if would else "imported", len(report.written), report.nbytes,
                   time.monotonic() - started)  # fmt: skip
    print_summary(f"{line} ({len(report.existing):,} skipped as existing){failed_suffix(report.problems)}")
    return EXIT_FAILED if report.problems else EXIT_OK
