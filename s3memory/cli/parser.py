"""The `s3memory` argument parser: every command, its options, an example and its exit codes in `--help`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from s3memory.core.limits import DEFAULT_FENCE_WAIT_SECONDS, DEFAULT_MODEL, WRITE_FENCE_SECONDS
from s3memory.core.version import __version__

from .arguments import Parser, add_replica_flags, agent_id, mount, owner_options, parents
from .exits import PROG
from .fleet_args import add as add_fleet
from .logs import add_argument as add_log_level

# Every command: the module (under s3memory.cli) and the function that runs it, imported on use.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("session", "run_demo"),
    "chat": ("session", "run_chat"),
    "ls": ("inspect", "run_ls"),
    "cat": ("inspect", "run_cat"),
    "agents": ("inspect", "run_agents"),
    "stores": ("inspect", "run_stores"),
    "verify": ("inspect", "run_verify"),
    "repair": ("repair", "run_repair"),
    "export": ("transfer", "run_export"),
    "import": ("transfer", "run_import"),
    "purge": ("erase", "run_purge"),
    "prune": ("erase", "run_prune"),
    "rewrap": ("keys", "run_rewrap"),
    "rotate": ("keys", "run_rotate"),
    "reseal": ("keys", "run_reseal"),
    "retire": ("keys", "run_retire"),
    "migrate": ("migrate", "run_migrate"),
    "shred": ("erase", "run_shred"),
    "history": ("history", "run_history"),
    "show": ("history", "run_show"),
    "redact": ("redact", "run_redact"),
    "restore": ("history", "run_restore"),
    "doctor": ("doctor", "run_doctor"),
    "conformance": ("conformance", "run_conformance"),
    "mcp": ("mcp", "run_mcp"),
    "fleet": ("fleet", "run_fleet"),
}


# The commands whose --json is added after their other options (ls, agents, verify, history and
# doctor have theirs already); each prints one JSON document, its schema in docs/cli.md.
REPORTS = (
    "export", "import", "purge", "shred", "prune", "rewrap", "rotate", "reseal", "retire", "migrate", "restore",
    "redact",
)  # fmt: skip


_CALL_OFF = "an erase stopped there is called off by `s3memory repair --agent ID --abandon`"


def _fence(verb: str, undo: str) -> str:
    """The writers' fence of purge, shred and migrate, for their --help."""
    return (
        f"Before it {verb} anything it waits S3MEMORY_FENCE_SECONDS (default {DEFAULT_FENCE_WAIT_SECONDS:g} s) for\n"
        f"the agent's running tools to see it: they re-read the keystore at least every {WRITE_FENCE_SECONDS:g} s\n"
        f"and refuse from then on. Ctrl-C during that wait leaves the agent as it was;\n{undo}."
    )


def _command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    summary: str,
    example: str,
    exits: str,
    parents: Sequence[argparse.ArgumentParser] = (),
    note: str = "",
) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        name,
        help=summary,
        description=summary[0].upper() + summary[1:] + "." + (f"\n\n{note}" if note else ""),
        epilog=f"example:\n  {example}\n\nexit codes: {exits}",
        parents=list(parents),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    assert name in COMMANDS, name  # every parser has its entry in the registry
    add_log_level(parser, on_command=True)
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = Parser(  # its subparsers are _Parser too
        prog=PROG,
        description="Claude's memory tool on envelope-encrypted S3: try it, inspect and operate agent memory.",
        epilog="examples:\n  s3memory demo\n  s3memory chat --embedded\n  s3memory ls --agent support-agent-1\n"
        "  s3memory verify\n\nRun `s3memory COMMAND --help` for a command's options and exit codes.\n"
        "exit codes: 0 ok, 1 operation failed, 2 usage or configuration error",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    add_log_level(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")  # none: main() prints the help
    conn, bulk = parents()
    ok_failed = "0 ok, 1 operation failed, 2 usage or configuration error"

    _command(sub, "demo", "run a scripted session on an embedded moto S3 + KMS (nothing to configure)",
             "s3memory demo", "0 ok")  # fmt: skip

    p = _command(sub, "chat", "talk to Claude with its memory on S3 (interactive, or one-shot with --prompt)",
                 's3memory chat --agent support-agent-1 --prompt "What do you remember about me?"',
                 ok_failed + " (also when ANTHROPIC_API_KEY is not set)", [conn])  # fmt: skip
    p.add_argument("--agent", type=agent_id, help="agent id (with --embedded: support-agent-1)")
    p.add_argument("--prompt", help="send this one message, print the answer and exit")
    p.add_argument("--model", help=f"model (S3MEMORY_MODEL, ANTHROPIC_MODEL; default {DEFAULT_MODEL})")
    p.add_argument("--max-tokens", type=int, default=4096, help="max tokens per answer (default 4096)")
    p.add_argument("--max-iterations", type=int, default=25, metavar="N",
                   help="max requests to the model per message, tool calls included (default 25)")  # fmt: skip
    p.add_argument("--embedded", action="store_true", help="use an in-process moto S3 + KMS, forgotten at exit")

    p = _command(sub, "ls", "show a memory directory exactly as the tool's `view` does",
                 "s3memory ls --agent support-agent-1 /memories/customers", ok_failed, [conn])  # fmt: skip
    owner_options(p)
    p.add_argument("path", nargs="?", default="/memories", help="memory path (default /memories)")
    p.add_argument("--json", action="store_true", help="entries as JSON")

    p = _command(sub, "cat", "show a memory file exactly as the tool's `view` does",
                 "s3memory cat --agent support-agent-1 /memories/refund_policies.xml", ok_failed, [conn])  # fmt: skip
    owner_options(p)
    p.add_argument("path", help="memory path, e.g. /memories/notes.md")
    p.add_argument("--view-range", type=int, nargs=2, metavar=("START", "END"), help="lines START to END (-1: end)")
    p.add_argument("--json", action="store_true", help='{"type", "path", "view"}: the view as JSON')

    p = _command(sub, "agents", "list the agents under the prefix with their file counts and plaintext bytes",
                 "s3memory agents --prefix agents/ --json", ok_failed, [conn, bulk])  # fmt: skip
    p.add_argument("--json", action="store_true", help="output JSON")

    p = _command(sub, "stores", "list the shared stores under the prefix with their file counts and plaintext bytes",
                 "s3memory stores --prefix agents/ --json", ok_failed, [conn, bulk])  # fmt: skip
    p.add_argument("--json", action="store_true", help="output JSON")

    p = _command(sub, "export", "decrypt and verify an agent's files into a directory or a .tar.gz",
                 "s3memory export --agent support-agent-1 --to backup.tar.gz", ok_failed, [conn, bulk])  # fmt: skip
    owner_options(p)
    p.add_argument("--to", required=True, metavar="DIR|FILE.tar.gz", help="writes DIR/memories/... or a tarball")
    p.add_argument("--force", action="store_true", help="export into a non-empty DIR or over an existing file")

    p = _command(sub, "import", "encrypt a local tree (or the SDK's memories/ folder) into an agent's memory",
                 "s3memory import --agent support-agent-1 ./memory --dry-run", ok_failed, [conn, bulk])  # fmt: skip
    owner_options(p)
    p.add_argument("source", metavar="FROM_DIR", help="a directory (its memories/ folder if it has one) or a tarball")
    p.add_argument("--overwrite", action="store_true", help="replace files that already exist")
    p.add_argument("--yes", action="store_true", help="with --overwrite: do not ask for the agent id to be typed again")
    p.add_argument("--dry-run", action="store_true", help="list what would be written; write nothing")

    p = _command(sub, "purge", "erase an agent completely: every version and delete marker",
                 "s3memory purge --agent support-agent-1 --dry-run", ok_failed, [conn, bulk],
                 _fence("deletes", _CALL_OFF))  # fmt: skip
    owner_options(p)
    p.add_argument("--yes", action="store_true", help="do not ask for the agent id to be typed again")
    p.add_argument("--dry-run", action="store_true", help="list what would be deleted; delete nothing")
    add_replica_flags(p)

    p = _command(sub, "shred", "crypto-shred an agent: destroy every version of its branch keys, then purge it",
                 "s3memory shred --agent support-agent-1 --dry-run", ok_failed, [conn, bulk],
                 _fence("destroys", _CALL_OFF))  # fmt: skip
    owner_options(p)
    p.add_argument(
        "--keys-only", action="store_true", help="destroy the branch keys; leave the (now unreadable) objects"
    )
    p.add_argument("--yes", action="store_true", help="do not ask for the agent id to be typed again")
    p.add_argument("--dry-run", action="store_true", help="list what would be deleted; delete nothing")
    add_replica_flags(p)

    p = _command(sub, "rewrap", "re-wrap the agents' branch keys under another KMS key (objects untouched; resumable)",
                 "s3memory rewrap --to-key alias/s3memory-2025 --agent support-agent-1", ok_failed,
                 [conn, bulk])  # fmt: skip
    p.add_argument("--to-key", required=True, metavar="KEY", help="destination KMS key id, ARN or alias")
    owner_options(p, every=True)
    p.add_argument("--objects", action="store_true", help="also rewrap format-1 objects (one HEAD per object)")
    p.add_argument("--yes", action="store_true", help="do not ask for the agent id (or, for every agent, the bucket)")
    p.add_argument("--dry-run", action="store_true", help="list the branch keys it would rewrap; change nothing")

    p = _command(sub, "rotate", "make a new branch key active now (older keys stay readable)",
                 "s3memory rotate --agent support-agent-1", ok_failed, [conn])  # fmt: skip
    owner_options(p, every=True)
    p.add_argument("--dry-run", action="store_true", help="show the key each agent would get; change nothing")

    p = _command(sub, "reseal", "re-seal an agent's objects under its active branch key (resumable, conditional)",
                 "s3memory reseal --agent support-agent-1", ok_failed, [conn, bulk])  # fmt: skip
    owner_options(p)
    p.add_argument("--yes", action="store_true", help="do not ask for the agent id to be typed again")
    p.add_argument("--dry-run", action="store_true", help="count the objects it would reseal; change nothing")

    p = _command(sub, "retire", "make an agent's branch keys older than the active one unusable (after reseal)",
                 "s3memory retire --agent support-agent-1", ok_failed, [conn, bulk])  # fmt: skip
    owner_options(p)
    p.add_argument("--yes", action="store_true", help="do not ask for the agent id to be typed again")
    p.add_argument("--dry-run", action="store_true", help="list the keys it would retire; change nothing")

    p = _command(sub, "migrate", "convert an agent's file names to encrypted or plain (resumable, conditional)",
                 "s3memory migrate --agent support-agent-1 --names encrypted", ok_failed, [conn, bulk],
                 _fence("moves", "a migration an earlier run began is finished by running it again"))  # fmt: skip
    owner_options(p)
    p.add_argument("--names", choices=("encrypted", "plain"), required=True, help="how its file names are stored")
    p.add_argument("--yes", action="store_true", help="do not ask for the agent id to be typed again")
    p.add_argument("--dry-run", action="store_true", help="list the files it would move; change nothing")

    p = _command(sub, "verify", "authenticate every object (header, key, commitment, tag) and report failures",
                 "s3memory verify --agent support-agent-1 --json",
                 ok_failed + " (1: an object failed; 2: --history on a bucket without versioning)",
                 [conn, bulk])  # fmt: skip
    owner_options(p, every=True)
    p.add_argument("--json", action="store_true", help="output JSON")
    p.add_argument("--history", action="store_true", help="also find current objects that repeat an older version")

    p = _command(sub, "history", "every version of a file or of an agent's memory, newest first (S3 versioning)",
                 "s3memory history --agent support-agent-1 /memories/notes.md --json", ok_failed,
                 [conn, bulk])  # fmt: skip
    owner_options(p)
    p.add_argument("path", nargs="?", help="a file or directory (default: the whole memory)")
    p.add_argument("--json", action="store_true", help="output JSON")

    p = _command(sub, "show", "show one version of a file as the tool's `view` shows it",
                 "s3memory show --agent support-agent-1 /memories/notes.md --version 3HL4kqtJlcpXroDTDmJ", ok_failed,
                 [conn])  # fmt: skip
    owner_options(p)
    p.add_argument("path", help="memory path, e.g. /memories/notes.md")
    p.add_argument("--version", required=True, metavar="V", help="version id (from `s3memory history`)")

    p = _command(sub, "restore", "bring an agent's memory (or a file or directory) back to its state at a time",
                 "s3memory restore --agent support-agent-1 --at 2026-11-20T09:30:00Z --dry-run", ok_failed,
                 [conn, bulk])  # fmt: skip
    owner_options(p)
    p.add_argument(
        "--at", required=True, metavar="TIME", help="ISO 8601 with Z or an offset; not in the future (exit 2)"
    )
    p.add_argument("path", nargs="?", help="only this file or directory (default: the whole memory)")
    p.add_argument("--dry-run", action="store_true", help="list what would be written or deleted; change nothing")
    p.add_argument("--yes", action="store_true", help="do not ask for the agent id to be typed again")

    p = _command(sub, "redact", "delete versions of a file for good (one, or all of them)",
                 "s3memory redact --agent support-agent-1 /memories/notes.md --version 3HL4kqtJlcpXroDTDmJ",
                 ok_failed, [conn])  # fmt: skip
    owner_options(p)
    p.add_argument("path", help="memory path, e.g. /memories/notes.md")
    p.add_argument("--version", metavar="V", help="the version id to delete")
    p.add_argument("--all-versions", action="store_true", help="delete every version and delete marker")
    p.add_argument("--yes", action="store_true", help="do not ask for the agent id to be typed again")
    p.add_argument("--dry-run", action="store_true", help="list what would be deleted; delete nothing")

    p = _command(sub, "repair", "complete interrupted directory renames and deletes of an agent (roll forward)",
                 "s3memory repair --agent support-agent-1 --dry-run",
                 ok_failed + " (1: a change could not be completed)", [conn])  # fmt: skip
    owner_options(p)
    p.add_argument("--dry-run", action="store_true", help="show each pending change; change nothing")
    p.add_argument(
        "--abandon",
        action="store_true",
        help="drop the records (every file stays where it is now); "
        "call off a purge or shred that stopped before it deleted anything",
    )

    p = _command(sub, "doctor", "probe whether the store and KMS key honour what s3memory relies on (scratch prefix)",
                 "s3memory doctor --endpoint-url http://127.0.0.1:4566 --json",
                 "0 ok, the store is safe; 1 it ignores or lacks conditional writes; 2 configuration error",
                 [conn])  # fmt: skip
    p.add_argument("--json", action="store_true", help="output JSON")
    p.add_argument("--conformance", action="store_true",
                   help="also run the conformance kit on this bucket with the configured key source (a fresh agent "
                        "per case under a scratch prefix, removed afterwards); exit 1 if a case fails")  # fmt: skip
    p.add_argument("--scratch-prefix", metavar="PREFIX",
                   help="with --conformance: where its agents go (default {prefix}.s3memory-conformance/<random>/); "
                        "must be empty")  # fmt: skip
    p.add_argument(
        "--replica",
        metavar="BUCKET",
        help="instead of probing: compare with this replica memory bucket "
        "(docs/disaster-recovery.md): objects and keystore entries on one side only (exit 1 if any)",
    )
    p.add_argument("--replica-keystore-bucket", metavar="BUCKET", help="the replica's keystore bucket (with --replica)")
    p.add_argument("--replica-region", metavar="REGION", help="the replica's region (with --replica)")

    p = _command(sub, "conformance", "run the memory tool conformance kit against any backend (a fresh memory a case)",
                 "s3memory conformance --tool mybackend:make_tool --concurrency",
                 "0 ok, every case passed; 1 a case failed; 2 usage error (a --tool that will not load)")  # fmt: skip
    p.add_argument("--tool", metavar="MODULE:FACTORY",
                   help="a callable returning a fresh, empty memory tool (call(input), sync or async)")  # fmt: skip
    p.add_argument("--concurrency", action="store_true",
                   help="the backend claims concurrency: also run the race cases (calls started together)")  # fmt: skip
    p.add_argument("--concern", action="append", metavar="CONCERN", help="only this concern (repeatable)")
    p.add_argument("--case", action="append", metavar="ID", help="only this case (repeatable)")
    p.add_argument("--list", action="store_true", help="list the cases (id, concern, command, rule, source)")
    p.add_argument("--json", action="store_true", help="output JSON")

    p = _command(sub, "prune", "delete an agent's files not modified (or not used) for a given time",
                 "s3memory prune --agent support-agent-1 --not-accessed-for 180d --dry-run", ok_failed,
                 [conn, bulk])  # fmt: skip
    owner_options(p)
    age = p.add_mutually_exclusive_group(required=True)
    age.add_argument("--older-than", metavar="AGE",
                     help="not modified for AGE: a number and min, h, d or w, e.g. 90d, 2w, 12h or 30min")  # fmt: skip
    age.add_argument("--not-accessed-for", metavar="AGE",
                     help="neither modified nor read for AGE (needs S3MEMORY_TRACK_ACCESS on the tools)")  # fmt: skip
    p.add_argument("--yes", action="store_true", help="do not ask for the agent id to be typed again")
    p.add_argument("--dry-run", action="store_true", help="list what would be deleted; delete nothing")

    p = _command(sub, "mcp", "serve an agent's memory as an MCP server (one tool, `memory`; stdio or HTTP)",
                 "s3memory mcp --agent support-agent-1", ok_failed, [conn])  # fmt: skip
    p.add_argument("--agent", type=agent_id, required=True, help="agent id")
    p.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio", help="default stdio")
    p.add_argument("--host", help="HTTP: address to bind (default 127.0.0.1; others need --allow-remote)")
    p.add_argument("--port", type=int, help="HTTP: port (default 8000; 0 picks a free one)")
    p.add_argument("--allow-remote", action="store_true",
                   help="HTTP: bind a non-loopback address; requires S3MEMORY_MCP_TOKEN")  # fmt: skip
    p.add_argument("--mount", type=mount, action="append", metavar="NAME=STORE[:ro|:rw][:create]",
                   help="show a shared store at /memories/NAME (read-only unless :rw; :create: meant to start "
                        "empty, no warning while nothing is stored); repeatable; replaces S3MEMORY_MOUNTS")  # fmt: skip
    add_fleet(sub, conn, _command)
    for name in REPORTS:  # the other commands that report take --json too (docs/cli.md: JSON output)
        sub.choices[name].add_argument("--json", action="store_true", help="the report as JSON on stdout")
    return parser
