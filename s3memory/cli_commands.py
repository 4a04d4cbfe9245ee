"""The `s3memory` commands: each `run_<name>(args)` turns parsed arguments into one operation.

Configuration comes from `Settings` (flags override S3MEMORY_* variables); the work is done by
`Memory.view`, `ops`, `transfer`, `purge` and `rewrap`; this module only prints. Results and
summaries go to stdout (with --json, JSON alone goes there and the summary to stderr);
progress goes to stderr. Nothing here imports `anthropic` except `chat` and `demo`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError, model_validator

from .cli import EXIT_FAILED, EXIT_OK, Failed, UsageError
from .config import Settings
from .errors import AccessDenied, KeyUnavailable, S3MemoryError, StorageError
from .progress import Progress, choose_mode, count, summary

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient

    from .admin_store import AdminStore
    from .commands import Memory
    from .keys import Keys
    from .ops import Pool, Problem
    from .vault import Vault

# Settings field → the flag that overrides it (and names it in messages).
_FLAGS = {
    "bucket": "--bucket",
    "prefix": "--prefix",
    "kms_key_id": "--kms-key-id",
    "local_key": "--local-key",
    "endpoint_url": "--endpoint-url",
    "region": "--region",
    "profile": "--profile",
    "max_workers": "--workers",
}


class StorageOnlySettings(Settings):
    """Settings for commands that never decrypt (agents, purge, prune, rewrap): no key source required."""

    @model_validator(mode="after")
    def _one_key_source(self) -> StorageOnlySettings:
        return self


def describe(err: S3MemoryError) -> str:
    """One line for an error that stopped a whole command."""
    if isinstance(err, AccessDenied):
        return f"S3 refused access ({err.operation or 'request'}: {err.code}); check the IAM policy for this prefix"
    if isinstance(err, StorageError):
        return f"S3 {err.operation or 'request'} failed ({err.code})"
    if isinstance(err, KeyUnavailable):
        return f"the key service is unavailable ({err.code})"
    return str(err)


def _config_message(err: ValidationError) -> str:
    parts = []
    for item in err.errors(include_url=False, include_input=False):
        msg = str(item.get("msg", "invalid")).removeprefix("Value error, ")
        loc = item.get("loc") or ()
        if loc:
            field = str(loc[0])
            flag = _FLAGS.get(field)
            name = f"S3MEMORY_{field.upper()}" + (f" ({flag})" if flag else "")
            msg = f"{name} is required" if item.get("type") == "missing" else f"{name}: {msg}"
        parts.append(msg)
    return "configuration: " + "; ".join(parts)


def load_settings(args: argparse.Namespace, *, keys: bool = True) -> Settings:
    overrides: dict[str, Any] = {}
    for field in _FLAGS:
        value = getattr(args, "workers" if field == "max_workers" else field, None)
        if value is not None:
            overrides[field] = value
    if "local_key" in overrides and "kms_key_id" not in overrides:
        overrides["kms_key_id"] = None  # a key source given as a flag replaces the other from the environment
    elif "kms_key_id" in overrides and "local_key" not in overrides:
        overrides["local_key"] = None
    try:
        return (Settings if keys else StorageOnlySettings)(**overrides)
    except ValidationError as err:
        raise UsageError(_config_message(err)) from None


@dataclass
class Context:
    settings: Settings
    store: AdminStore
    kms: KMSClient
    pool: Pool
    quiet: bool

    def vault(self, agent: str, keys: Keys | None = None) -> Vault:
        """The agent's vault, with the configured key source unless `keys` is given."""
        from .vault import Vault

        return Vault(self.store, keys or self.settings.keys(self.kms), agent, self.settings.prefix)

    def progress(self, label: str) -> Progress:
        return Progress(label, sys.stderr, choose_mode(sys.stderr, self.quiet))


@contextmanager
def connect(args: argparse.Namespace, *, keys: bool = True) -> Iterator[Context]:
    settings = load_settings(args, keys=keys)
    from botocore.exceptions import BotoCoreError

    from .admin_store import AdminStore
    from .ops import Pool

    try:
        s3, kms = settings.clients()
    except BotoCoreError as err:  # unknown profile, no region, ...: the message names no secret
        raise UsageError(f"AWS configuration: {err}") from None
    with Pool(settings.max_workers) as pool:
        yield Context(settings, AdminStore(s3, settings.bucket), kms, pool, bool(getattr(args, "quiet", False)))


def emit_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def say(line: str = "") -> None:
    sys.stdout.write(line + "\n")


def print_summary(line: str, as_json: bool = False) -> None:
    (sys.stderr if as_json else sys.stdout).write(line + "\n")


def print_problems(problems: Sequence[Problem]) -> None:
    for p in problems:
        say(f"failed: {p.agent}:{p.path}: {p.reason}")


def failed_suffix(problems: Sequence[Problem]) -> str:
    return f"; {len(problems):,} failed" if problems else ""


# --- demo, chat ------------------------------------------------------------------------


def run_demo(args: argparse.Namespace) -> int:
    from .demo import run

    run(sys.stdout)
    return EXIT_OK


def run_chat(args: argparse.Namespace) -> int:
    from .chat import has_api_key, resolve_model

    if not has_api_key():
        raise UsageError("ANTHROPIC_API_KEY is not set; chat talks to Claude through the Anthropic API")
    model = resolve_model(args.model)
    if args.embedded:
        from .demo import DEMO_AGENT, DEMO_BUCKET, DEMO_KEY_ALIAS, DEMO_PREFIX, embedded
        from .keys import KmsKeys
        from .tool import S3MemoryTool

        agent = args.agent or DEMO_AGENT
        with embedded() as (s3, kms):
            keys = KmsKeys(DEMO_KEY_ALIAS, kms_client=kms)
            with S3MemoryTool(bucket=DEMO_BUCKET, agent_id=agent, keys=keys, s3_client=s3, prefix=DEMO_PREFIX) as tool:
                return _chat(args, tool, agent, model, "embedded moto S3 (forgotten at exit)")
    if args.agent is None:
        raise UsageError("chat needs --agent ID (or --embedded)")
    settings = load_settings(args)
    from botocore.exceptions import BotoCoreError

    from .tool import S3MemoryTool, settings_kwargs

    try:
        kwargs = settings_kwargs(settings, args.agent)
    except BotoCoreError as err:  # unknown profile, no region, ...: the message names no secret
        raise UsageError(f"AWS configuration: {err}") from None
    with S3MemoryTool(agent_id=args.agent, **kwargs) as tool:
        return _chat(args, tool, args.agent, model, f"s3://{settings.bucket}/{settings.prefix}{args.agent}/")


def _chat(args: argparse.Namespace, tool: Any, agent: str, model: str, where: str) -> int:
    import anthropic

    from .chat import Chat

    chat = Chat(anthropic.Anthropic(), tool, model, sys.stdout, sys.stderr, max_tokens=args.max_tokens)
    try:
        if args.prompt is not None:
            chat.turn(args.prompt)
        else:
            banner = f"chat with {model}, agent {agent!r}, memory in {where}. Type /exit or press Ctrl-D to leave."
            chat.interactive(sys.stdin, banner)
    except anthropic.AuthenticationError:
        raise UsageError("the Anthropic API rejected ANTHROPIC_API_KEY (401)") from None
    except anthropic.APIStatusError as err:
        raise Failed(f"the Anthropic API answered {err.status_code}") from None
    except anthropic.APIConnectionError:
        raise Failed("could not reach the Anthropic API") from None
    return EXIT_OK


# --- ls, cat ---------------------------------------------------------------------------


def _memory(ctx: Context, agent: str) -> Memory:
    """The tool's command engine for `agent`, without the SDK (no anthropic import)."""
    from .commands import Memory
    from .guard import SecretGuard

    s = ctx.settings
    return Memory(ctx.vault(agent), ctx.pool.executor, s.limits(), SecretGuard(s.guard))


def _view(args: argparse.Namespace, view_range: list[int] | None) -> str:
    with connect(args) as ctx:
        return _memory(ctx, args.agent).view(args.path, view_range)


def run_repair(args: argparse.Namespace) -> int:
    """Complete any interrupted directory rename or delete of the agent (roll forward)."""
    with connect(args) as ctx:
        count = _memory(ctx, args.agent).recover()
    say(f"completed {count} interrupted change(s) for agent {args.agent}")
    return EXIT_OK


def run_ls(args: argparse.Namespace) -> int:
    text = _view(args, None)
    if not args.json:
        say(text)
        return EXIT_OK
    header, *lines = text.split("\n")
    if not header.startswith("Here're the files and directories"):  # a file's view (format.file_header)
        emit_json({"type": "file", "view": text})
        return EXIT_OK
    entries = []
    for line in lines[1:]:
        size, tab, path = line.partition("\t")
        if tab:
            kind = "directory" if path.endswith("/") else "file"
            entries.append({"path": path.rstrip("/"), "type": kind, "size": size})
    path = lines[0].partition("\t")[2] if lines else args.path
    emit_json({"type": "directory", "path": path, "entries": entries, "truncated": any("\t" not in ln for ln in lines)})
    return EXIT_OK


def run_cat(args: argparse.Namespace) -> int:
    say(_view(args, args.view_range))
    return EXIT_OK


# --- agents, verify --------------------------------------------------------------------


def run_agents(args: argparse.Namespace) -> int:
    from .ops import agents

    started = time.monotonic()
    with connect(args, keys=False) as ctx:
        progress = ctx.progress("agents")
        usage = agents(ctx.store, ctx.settings.prefix, ctx.pool, progress)
        progress.finish()
    objects, nbytes = sum(u.objects for u in usage), sum(u.bytes for u in usage)
    if args.json:
        emit_json([{"agent": u.agent, "objects": u.objects, "bytes": u.bytes} for u in usage])
    else:
        width = max([5, *(len(u.agent) for u in usage)])
        say(f"{'AGENT':<{width}}  {'OBJECTS':>9}  {'BYTES':>15}")
        for u in usage:
            say(f"{u.agent:<{width}}  {u.objects:>9,}  {u.bytes:>15,}")
    seconds = time.monotonic() - started
    line = f"{count(len(usage), 'agent')}, {count(objects, 'object')}, {count(nbytes, 'byte')} in {seconds:.2f} s"
    print_summary(line, args.json)
    return EXIT_OK


def vaults_for(ctx: Context, agent: str | None, keys: Keys | None = None) -> list[Vault]:
    from .ops import agent_ids

    ids = [agent] if agent else agent_ids(ctx.store, ctx.settings.prefix)
    return [ctx.vault(a, keys) for a in ids]


def run_verify(args: argparse.Namespace) -> int:
    from .ops import verify

    started = time.monotonic()
    with connect(args) as ctx:
        progress = ctx.progress("verify")
        report = verify(vaults_for(ctx, args.agent), ctx.pool, progress)
        progress.finish()
    if args.json:
        problems = [{"agent": p.agent, "path": p.path, "reason": p.reason} for p in report.problems]
        counts = {"verified": report.checked, "bookkeeping": report.bookkeeping, "bytes": report.nbytes}
        emit_json({"ok": not problems, **counts, "failed": len(problems), "problems": problems})
    else:
        print_problems(report.problems)
    line = summary("verified", report.checked, report.nbytes, time.monotonic() - started)
    print_summary(line + f" ({report.bookkeeping:,} bookkeeping)" + failed_suffix(report.problems), args.json)
    return EXIT_FAILED if report.problems else EXIT_OK
