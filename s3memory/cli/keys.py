"""`rewrap`: move every data key of one agent (or all) under another KMS key."""

from __future__ import annotations

import argparse
import os
import time

from s3memory.core.paths import escape_for_display

from .context import connect, failed_suffix, print_problems, print_summary
from .exits import EXIT_FAILED, EXIT_OK, UsageError
from .progress import count, summary


def run_rewrap(args: argparse.Namespace) -> int:
    from s3memory.admin.rewrap import rewrap
    from s3memory.errors import KeyMisconfigured
    from s3memory.storage.keys import KmsKeys

    started = time.monotonic()
    source = args.kms_key_id or os.environ.get("S3MEMORY_KMS_KEY_ID") or None
    with connect(args, keys=False) as ctx:
        keys = KmsKeys(args.to_key, kms_client=ctx.kms)
        progress = ctx.progress("rewrap")
        spaces = [ctx.space(a) for a in ctx.agent_ids(args.agent)]
        try:
            report = rewrap(ctx.store, spaces, keys, args.to_key, ctx.pool, progress, source=source)
        except KeyMisconfigured as err:
            flags = "--to-key" if source is None else "--to-key and the source key (S3MEMORY_KMS_KEY_ID, --kms-key-id)"
            raise UsageError(f"KMS refused the keys ({err.code}); nothing was rewrapped; check {flags}") from None
        finally:
            progress.finish()
    print_problems(report.problems)
    line = summary("rewrapped", report.rewrapped, None, time.monotonic() - started)
    extra = f"{report.already:,} already under {escape_for_display(args.to_key)}, {count(report.kms_calls, 'KMS call')}"
    print_summary(f"{line} ({extra}){failed_suffix(report.problems)}")
    return EXIT_FAILED if report.problems else EXIT_OK
