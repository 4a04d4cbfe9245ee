"""`s3memory repair`: complete, show or abandon an agent's interrupted directory changes.

A directory rename or delete records its intent before it starts; the next command of any
tool instance completes it. `repair` does the same on demand and says what it could not do;
`--dry-run` shows each pending change and how far it got; `--abandon` drops the records and
leaves every file exactly where it is now (some at the old path, some at the new one). It also
ends an unfinished `restore` (its record goes; every file stays as it is now), whatever state the
agent's names are in, and calls off a `purge` or `shred` stopped during its wait, before it
destroyed anything (one that began destroying can only be finished: run it again).
"""

from __future__ import annotations

import argparse

from s3memory.core.paths import owner_name

from .context import connect, say
from .exits import EXIT_FAILED, EXIT_OK, Failed, UsageError
from .inspect import memory_for
from .pending import describe as _describe
from .progress import count


def run_repair(args: argparse.Namespace) -> int:
    from s3memory.admin.purge import abandon_erasing
    from s3memory.admin.restore import abandon as abandon_restore
    from s3memory.storage.keyspace import AgentKeyspace

    if args.dry_run and args.abandon:
        raise UsageError("--dry-run and --abandon exclude each other; --dry-run shows what --abandon would drop")
    with connect(args) as ctx:
        if args.abandon:
            called_off = abandon_erasing(ctx.keystore, AgentKeyspace(ctx.settings.prefix, args.agent))
            if called_off is None:
                raise Failed(f"the erase of {owner_name(args.agent)} already deleted part of it and cannot be "
                             "called off; run `s3memory shred` (or `purge`) again to finish it")  # fmt: skip
            if called_off:
                say(f"called off the erase of {owner_name(args.agent)}: it had deleted nothing; "
                    "the agent is as it was")  # fmt: skip
        if args.abandon and abandon_restore(ctx.store, AgentKeyspace(ctx.settings.prefix, args.agent)):
            say(f"abandoned the unfinished restore of {owner_name(args.agent)}; every file stays as it is now")
        memory = memory_for(ctx, args.agent, read_only=False)
        changes = memory.changes
        store, space = ctx.store, memory.vault.space
        if args.dry_run:
            pending = changes.pending()
            for record in pending:
                intent = record.intent
                left = len(store.list_all(space.dir_prefix(intent.src)))
                where = f"{count(len(intent.items), 'listed object')}, {left:,} still under {intent.src.display}"
                say(f"pending: {_describe(intent)} ({where})")
            changes_of = f"{count(len(pending), 'interrupted change')} for {owner_name(args.agent)}"
            say(f"{changes_of}; nothing was changed (--dry-run)")
            return EXIT_OK
        if args.abandon:
            dropped = changes.abandon()
            changes_of = f"{count(dropped, 'interrupted change')} for {owner_name(args.agent)}"
            say(f"abandoned {changes_of}; every file stays where it is")
            return EXIT_OK
        recovery = changes.recover()
    say(f"completed {recovery.done} interrupted change(s) for {owner_name(args.agent)}")
    if recovery.stale:
        # A record whose files are not in the versions it lists: replayed from version history
        # (a bucket writer needs no key for that) or overtaken by later writes.
        say(f"abandoned {count(recovery.stale, 'stale intent record')}: the files it names are not in the "
            "versions it lists (replayed, or changed since); those files were left where they are")  # fmt: skip
    for stuck in recovery.stuck:
        advice = "run repair again" if stuck.transient else "fix the cause and run repair again, or --abandon"
        say(f"not completed: {_describe(stuck.intent)} ({stuck.error.code}); {advice}")
    return EXIT_FAILED if recovery.stuck else EXIT_OK
