"""`s3memory fleet`: one job over many agents, on the local engine or on Step Functions.

`run` lists the agents (or reads them from a file or an S3 Inventory report), writes the manifest
and the run's record under the results location, then runs it; `status`, `report` and `redrive`
take a Step Functions execution ARN or a local run id. With `main(clients=...)` (an embedder's
own clients, which cannot cross to another process) the local engine runs its workers as threads.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from .context import Context, connect, emit_json, print_summary, say
from .exits import EXIT_FAILED, EXIT_OK, Failed, UsageError
from .progress import count

if TYPE_CHECKING:
    from s3memory.fleet.results import Location
    from s3memory.fleet.runs import Plan, Report

RESULTS = "S3MEMORY_FLEET_RESULTS"
SFN_BATCH = 25


def run_fleet(args: argparse.Namespace) -> int:
    handler = {"run": _run, "status": _status, "report": _report, "redrive": _redrive}[args.fleet_command]
    return handler(args)


def _where(ctx: Context, args: argparse.Namespace) -> Location:
    from s3memory.fleet.results import Location

    url = args.results or os.environ.get(RESULTS, "").strip()
    try:
        if url:
            return Location.from_url(url)
    except ValueError as err:
        raise UsageError(f"--results ({RESULTS}): {err}") from None
    if getattr(args, "engine", "local") == "stepfunctions":
        raise UsageError(
            f"--engine stepfunctions needs the fleet's results location: --results or {RESULTS} "
            "(the Terraform module's `fleet_environment` output; its workers may write only there)"
        )
    return Location(ctx.settings.bucket, f"{ctx.settings.prefix}.s3memory-fleet/")


def _options(args: argparse.Namespace) -> dict[str, Any]:
    from datetime import timezone

    from s3memory.fleet.jobs import InvalidJob, check, cutoff_of

    given = {"older_than": args.older_than, "not_accessed_for": args.not_accessed_for, "to_key": args.to_key,
             "objects": args.objects or None, "keys_only": args.keys_only or None,
             "dry_run": args.dry_run or None}  # fmt: skip
    options = {k: v for k, v in given.items() if v is not None}
    try:
        options = check(args.job, options)
        if args.job == "prune":  # one cutoff for the whole run, however long it takes
            options["cutoff"] = cutoff_of(options).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except InvalidJob as err:
        raise UsageError(str(err)) from None
    return options


def _items(ctx: Context, args: argparse.Namespace) -> list[Any]:
    from s3memory.fleet import manifest
    from s3memory.fleet.jobs import JOBS

    if JOBS[args.job].explicit_agents and not args.agents:
        raise UsageError(f"{args.job} runs on an explicit list of agents only: pass --agents FILE (never --all)")
    if args.agents:
        try:
            if args.agents == "-":
                return manifest.from_lines(sys.stdin)
            with open(args.agents, encoding="utf-8") as lines:
                return manifest.from_lines(lines)
        except OSError as err:
            raise UsageError(f"--agents: cannot read {args.agents}: {err.strerror}") from None
        except ValueError as err:
            raise UsageError(f"--agents {args.agents}: {err}") from None
    if args.inventory:
        try:
            return manifest.from_inventory(ctx.store.s3, args.inventory, ctx.settings.prefix, stores=args.stores)
        except (ValueError, KeyError) as err:
            raise UsageError(f"--inventory: {err}") from None
    return manifest.listed(ctx.store, ctx.settings.prefix, stores=args.stores)


def _confirm(args: argparse.Namespace, ctx: Context, plan: Plan) -> None:
    from s3memory.fleet.jobs import JOBS

    if not JOBS[plan.job].destructive or plan.options.get("dry_run") or args.yes:
        return
    if not sys.stdin.isatty():
        raise UsageError(f"fleet {plan.job} asks for the bucket name to be typed, but stdin is not a terminal; "
                         "pass --yes")  # fmt: skip
    bucket = ctx.settings.bucket
    sys.stderr.write(f"This runs {plan.job} on {count(len(plan.items), 'agent')} of s3://{bucket}/{ctx.settings.prefix}"
                     f" ({JOBS[plan.job].summary}).\nType the bucket name ({bucket}) to confirm: ")  # fmt: skip
    sys.stderr.flush()
    if sys.stdin.readline().strip() != bucket:
        raise Failed(f"fleet {plan.job} cancelled: the typed name does not match; nothing was changed")


def _run(args: argparse.Namespace) -> int:
    from s3memory.fleet.runs import Plan, new_run_id

    started = time.monotonic()
    options = _options(args)
    if args.engine == "stepfunctions":
        _state_machine(args)
    with connect(args, keys=False) as ctx:
        where = _where(ctx, args)
        plan = Plan(args.job, options, new_run_id(), where, _items(ctx, args))
        _confirm(args, ctx, plan)
        key = plan.save(ctx.store.s3, args.engine)
        say(f"fleet run {plan.run_id}: {plan.job} on {count(len(plan.items), 'item')} "
            f"(manifest s3://{where.bucket}/{key})")  # fmt: skip
        if args.engine == "stepfunctions":
            return _on_stepfunctions(args, ctx, plan, key, started)
        return _on_local(args, ctx, plan, started)


def _not_done(ctx: Context, plan: Plan) -> list[Any]:
    """The items of the run that are not done (failed or not reached): all a local redrive sends (the
    worker still skips an item done meanwhile)."""
    from s3memory.fleet.runs import report

    rep = report(ctx.store.s3, plan.where, plan.run_id, plan.items)
    return [i for i in plan.items if i not in rep.finished]


def _on_local(args: argparse.Namespace, ctx: Context, plan: Plan, started: float, todo: list[Any] | None = None) -> int:
    from dataclasses import replace

    from s3memory.fleet import local
    from s3memory.fleet.runs import report

    build = getattr(args, "clients", None)
    settings = ctx.key_source or ctx.settings
    progress = ctx.progress(f"fleet {plan.job}")
    clients = (lambda s: build(s, None)) if build is not None else None
    sent = plan if todo is None else replace(plan, items=todo)
    results = local.run(sent, settings, progress, workers=args.fleet_workers, pool="thread" if build else "process",
                        clients=clients, size=getattr(args, "batch_size", None))  # fmt: skip
    progress.finish()
    rep = report(ctx.store.s3, plan.where, plan.run_id, plan.items, results)
    return _show(args, plan.run_id, plan.job, rep, started)


def _sfn(ctx: Context) -> Any:
    import boto3

    from s3memory.storage.clients import client

    session = boto3.session.Session(profile_name=ctx.settings.profile, region_name=ctx.settings.region)
    return client("stepfunctions", session=session, endpoint_url=ctx.settings.endpoint_url)


def _state_machine(args: argparse.Namespace) -> str:
    """The state machine of `--engine stepfunctions`, its options checked (before anything is written)."""
    from s3memory.fleet import stepfunctions as engine

    arn = str(args.state_machine or os.environ.get(engine.STATE_MACHINE, "")).strip()
    if not arn:
        raise UsageError("--engine stepfunctions needs the state machine: --state-machine ARN or "
                         f"{engine.STATE_MACHINE} (the Terraform module's fleet state machine)")  # fmt: skip
    if not 1 <= args.max_concurrency <= 10000:
        raise UsageError("--max-concurrency: a whole number from 1 to 10,000 (Distributed Map's limit)")
    if not 0 <= args.tolerated_failure_percentage <= 100:
        raise UsageError("--tolerated-failure-percentage: a number from 0 to 100")
    if args.batch_size is not None and args.batch_size < 1:
        raise UsageError("--batch-size: a whole number, 1 or more")
    return arn


def _on_stepfunctions(args: argparse.Namespace, ctx: Context, plan: Plan, key: str, started: float) -> int:
    from s3memory.fleet import stepfunctions as engine

    arn = _state_machine(args)
    sfn = _sfn(ctx)
    payload = engine.execution_input(plan, key, args.batch_size or SFN_BATCH, args.max_concurrency,
                                     args.tolerated_failure_percentage)  # fmt: skip
    execution = engine.start(sfn, arn, payload)
    say(f"execution {execution}")
    return _follow(args, ctx, sfn, execution, plan, started)


def _follow(args: argparse.Namespace, ctx: Context, sfn: Any, execution: str, plan: Plan, started: float) -> int:
    from s3memory.fleet import stepfunctions as engine
    from s3memory.fleet.runs import report

    progress = ctx.progress(f"fleet {plan.job}")
    final = engine.follow(sfn, execution, progress)
    progress.finish()
    say(f"execution {final.status}" + (f" ({final.error})" if final.error else ""))
    code = _show(args, plan.run_id, plan.job, report(ctx.store.s3, plan.where, plan.run_id, plan.items), started)
    if final.status != "SUCCEEDED":
        say(f"run only what did not finish: s3memory fleet redrive {execution}")
        return EXIT_FAILED
    return code


def _show(args: argparse.Namespace, run_id: str, job: str, rep: Report, started: float | None) -> int:
    for record in sorted(rep.failed.values(), key=lambda r: (r["kind"], r["id"])):
        say(f"failed: {_who(record)}: {record.get('reason') or record['outcome']}")
    for item in rep.missing:
        say(f"not reached: {_who(item.to_json())}")
    totals = ", ".join(f"{k} {v:,}" for k, v in rep.totals().items())
    line = (f"fleet {job} {run_id}: {count(rep.items, 'item')}, {len(rep.finished):,} done, "
            f"{len(rep.failed):,} failed, {len(rep.missing):,} not reached")  # fmt: skip
    line += f" ({totals})" if totals else ""
    line += f" in {time.monotonic() - started:.2f} s" if started is not None else ""
    print_summary(line, args.json)
    if not rep.complete:
        say(f"report: s3memory fleet report {run_id}; finish it: s3memory fleet redrive {run_id}")
    if args.json:
        emit_json({"run_id": run_id, "job": job, **rep.to_json()})
    return EXIT_OK if rep.complete else EXIT_FAILED


def _who(record: dict[str, Any]) -> str:
    return record["id"] if record["kind"] == "agent" else f"store {record['id']}"


def _resolve(args: argparse.Namespace, ctx: Context) -> tuple[str, Location, Any]:
    """The run id, results location and (for an execution ARN) the Step Functions client."""
    if args.execution.startswith("arn:"):
        from s3memory.fleet import stepfunctions as engine

        sfn = _sfn(ctx)
        run_id, where = engine.run_of(sfn, args.execution)
        return run_id, where, sfn
    return args.execution, _where(ctx, args), None


def _load(ctx: Context, where: Location, run_id: str) -> Plan:
    from s3memory.errors import NotFound
    from s3memory.fleet.runs import Plan

    try:
        return Plan.load(ctx.store.s3, where, run_id)
    except ctx.store.s3.exceptions.NoSuchKey:
        raise Failed(f"no fleet run {run_id} under s3://{where.bucket}/{where.prefix}; check the run id and "
                     f"--results ({RESULTS})") from None  # fmt: skip
    except NotFound:  # pragma: no cover - the raw client raises NoSuchKey
        raise


def _report(args: argparse.Namespace) -> int:
    from s3memory.fleet.runs import report

    with connect(args, keys=False) as ctx:
        run_id, where, _ = _resolve(args, ctx)
        plan = _load(ctx, where, run_id)
        return _show(args, run_id, plan.job, report(ctx.store.s3, where, run_id, plan.items), None)


def _status(args: argparse.Namespace) -> int:
    with connect(args, keys=False) as ctx:
        run_id, where, sfn = _resolve(args, ctx)
        if sfn is not None:
            from s3memory.fleet import stepfunctions as engine

            now = engine.status(sfn, args.execution)
            items = ", ".join(f"{k} {v:,}" for k, v in now.items.items())
            say(f"{args.execution}: {now.status}" + (f"; items: {items}" if items else ""))
            if args.json:
                emit_json({"run_id": run_id, **now.to_json()})
            return EXIT_OK
        plan = _load(ctx, where, run_id)
        from s3memory.fleet.runs import report

        return _show(args, run_id, plan.job, report(ctx.store.s3, where, run_id, plan.items), None)


def _redrive(args: argparse.Namespace) -> int:
    started = time.monotonic()
    with connect(args, keys=False) as ctx:
        run_id, where, sfn = _resolve(args, ctx)
        plan = _load(ctx, where, run_id)
        if sfn is not None:
            from s3memory.fleet import stepfunctions as engine

            engine.redrive(sfn, args.execution)
            return _follow(args, ctx, sfn, args.execution, plan, started)
        args.job = plan.job
        _confirm(args, ctx, plan)
        return _on_local(args, ctx, plan, started, todo=_not_done(ctx, plan))
