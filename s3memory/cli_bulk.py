"""The bulk `s3memory` commands that move or erase data: export, import, purge, prune, rewrap.

Same conventions as `cli_commands`: one line per object that matters on stdout, problems as
`failed: AGENT:PATH: REASON`, a one-line summary at the end, progress on stderr; exit 1 if any
object failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from .admin_store import Version
from .cli import EXIT_FAILED, EXIT_OK, Failed, UsageError
from .cli_commands import connect, failed_suffix, print_problems, print_summary, say, vaults_for
from .keys import Keys
from .paths import escape_for_display
from .progress import count, summary


def run_export(args: argparse.Namespace) -> int:
    from .localfs import DirWriter, TarWriter, destination_in_use, is_tarball
    from .transfer import export

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
    from .guard import SecretGuard
    from .transfer import Importer, local_source

    source = Path(args.source)
    if not source.exists():
        raise UsageError(f"{escape_for_display(str(source))} does not exist")
    started = time.monotonic()
    with connect(args) as ctx:
        s = ctx.settings
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


def _version_line(root: str, version: Version) -> str:
    from .purge import display

    what = "delete marker" if version.delete_marker else "version"
    if version.version_id == "null":
        return display(root, version.key) + (" (delete marker)" if version.delete_marker else "")
    return f"{display(root, version.key)} ({what} {version.version_id})"


def run_purge(args: argparse.Namespace) -> int:
    from .purge import agent_prefix, list_versions, purge

    if not (args.yes or args.dry_run or sys.stdin.isatty()):
        raise UsageError("purge asks for the agent id to be typed again, but stdin is not a terminal; pass --yes")
    started = time.monotonic()
    with connect(args, keys=False) as ctx:
        root = agent_prefix(ctx.settings.prefix, args.agent)
        where = f"s3://{ctx.settings.bucket}/{root}"
        versions = list_versions(ctx.store, root)
        if not versions:
            say(f"nothing is stored under {where}")
            return EXIT_OK
        markers = sum(v.delete_marker for v in versions)
        objects = len({v.key for v in versions})
        what = f"{count(len(versions), 'version')} ({count(markers, 'delete marker')}) of {count(objects, 'object')}"
        if args.dry_run:
            for version in versions:
                say(f"would delete {_version_line(root, version)}")
            print_summary(f"would purge {what} under {where} in {time.monotonic() - started:.2f} s")
            return EXIT_OK
        if not args.yes:
            sys.stderr.write(f"This permanently deletes {what} under {where}; it cannot be undone.\n")
            sys.stderr.write(f"Type the agent id ({args.agent}) to confirm: ")
            sys.stderr.flush()
            if sys.stdin.readline().strip() != args.agent:
                raise Failed("purge cancelled: the typed id does not match; nothing was deleted")
        progress = ctx.progress("purge")
        report = purge(ctx.store, ctx.settings.prefix, args.agent, ctx.pool, progress, versions)
        progress.finish()
    for version in report.deleted:
        say(f"deleted {_version_line(root, version)}")
    print_problems(report.problems)
    gone = sum(v.delete_marker for v in report.deleted)
    line = f"purged {count(len(report.deleted), 'version')} ({count(gone, 'delete marker')}) of agent {args.agent}"
    line += f" in {time.monotonic() - started:.2f} s{failed_suffix(report.problems)}"
    if report.remaining:
        print_summary(line)
        raise Failed(f"{count(report.remaining, 'version')} still under {where}; stop the agent and purge again")
    print_summary(f"{line}; nothing remains under {where}")
    return EXIT_FAILED if report.problems else EXIT_OK


def run_prune(args: argparse.Namespace) -> int:
    from .ops import parse_age, prune

    try:
        age = parse_age(args.older_than)
    except ValueError as err:
        raise UsageError(str(err)) from None
    cutoff = datetime.now(timezone.utc) - age
    started = time.monotonic()
    with connect(args, keys=False) as ctx:
        progress = ctx.progress("prune")
        report = prune(ctx.vault(args.agent, Keys()), ctx.pool, cutoff, progress, dry_run=args.dry_run)
        progress.finish()
    would = "would " if args.dry_run else ""
    for item in report.candidates:
        when = item.last_modified.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        say(f"{'would delete' if would else 'deleted'} {item.path} (last modified {when}, {count(item.size, 'byte')})")
    print_problems(report.problems)
    done = len(report.candidates)
    nbytes = sum(i.size for i in report.candidates)
    line = summary(f"{would}prune" if would else "pruned", done, nbytes, time.monotonic() - started)
    print_summary(f"{line} (not modified since {cutoff:%Y-%m-%d %H:%M:%S} UTC){failed_suffix(report.problems)}")
    return EXIT_FAILED if report.problems else EXIT_OK


def run_rewrap(args: argparse.Namespace) -> int:
    from .keys import KmsKeys
    from .rewrap import rewrap

    started = time.monotonic()
    with connect(args, keys=False) as ctx:
        keys = KmsKeys(args.to_key, kms_client=ctx.kms)
        progress = ctx.progress("rewrap")
        report = rewrap(ctx.store, vaults_for(ctx, args.agent, keys), keys, args.to_key, ctx.pool, progress)
        progress.finish()
    print_problems(report.problems)
    line = summary("rewrapped", report.rewrapped, None, time.monotonic() - started)
    extra = f"{report.already:,} already under {escape_for_display(args.to_key)}, {count(report.kms_calls, 'KMS call')}"
    print_summary(f"{line} ({extra}){failed_suffix(report.problems)}")
    return EXIT_FAILED if report.problems else EXIT_OK
