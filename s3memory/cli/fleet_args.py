"""The parser of `s3memory fleet` (run, status, report, redrive): one job over many agents."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from .arguments import workers

_RUN_EXAMPLE = """examples:
  s3memory fleet run prune --all --not-accessed-for 180d --dry-run
  s3memory fleet run verify --all --stores --workers 8 --json
  s3memory fleet run shred --agents erasure-requests.txt --engine stepfunctions
  s3memory fleet report 20261127T181100Z-3f9a1c

--agents FILE: one agent id a line (`store:ID` for a store; # comments). shred and purge take
only --agents, never --all. Each agent's result is stored under the results location
(--results, S3MEMORY_FLEET_RESULTS; local default s3://BUCKET/PREFIX.s3memory-fleet/, required
with --engine stepfunctions) as it finishes,
so `s3memory fleet redrive RUN` (or a rerun of the Step Functions execution) does only the rest.

exit codes: 0 every agent done, 1 an agent failed or was not reached, 2 usage or configuration error"""


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser], conn: argparse.ArgumentParser,
        command: Callable[..., argparse.ArgumentParser]) -> None:  # fmt: skip
    fleet = command(sub, "fleet", "run one job over many agents (prune, verify, rotate, rewrap, reseal, shred, purge)",
                    "s3memory fleet run prune --all --older-than 90d --dry-run",
                    "0 ok, 1 an agent failed or was not reached, 2 usage or configuration error")  # fmt: skip
    actions = fleet.add_subparsers(dest="fleet_command", metavar="ACTION", required=True)
    fmt = argparse.RawDescriptionHelpFormatter
    run = actions.add_parser("run", help="run JOB over every agent (--all) or a list (--agents FILE)",
                             description="Run one job over many agents: locally on a pool of processes, or on "
                             "the Step Functions state machine the Terraform module provisions.",
                             epilog=_RUN_EXAMPLE, formatter_class=fmt, parents=[conn])  # fmt: skip
    run.add_argument("job", choices=("prune", "verify", "rotate", "rewrap", "reseal", "shred", "purge"))
    which = run.add_mutually_exclusive_group(required=True)
    which.add_argument("--all", action="store_true", help="every agent under the prefix (one LIST per 1,000)")
    which.add_argument("--agents", metavar="FILE", help="the agent ids in FILE, one a line (- for stdin)")
    which.add_argument("--inventory", metavar="S3_URL",
                       help="the agents of an S3 Inventory report (s3://BUCKET/.../manifest.json, CSV)")  # fmt: skip
    run.add_argument("--stores", action="store_true", help="with --all or --inventory: the shared stores too")
    run.add_argument("--engine", choices=("local", "stepfunctions"), default="local", help="default local")
    run.add_argument("--workers", dest="fleet_workers", type=workers, default=4, metavar="N",
                     help="local: worker processes (default 4)")  # fmt: skip
    run.add_argument(
        "--state-machine", metavar="ARN", help="stepfunctions: the state machine (S3MEMORY_FLEET_STATE_MACHINE)"
    )
    run.add_argument("--results", metavar="S3_URL", help="where results go (S3MEMORY_FLEET_RESULTS)")
    run.add_argument("--batch-size", type=int, metavar="N", help="agents per batch (stepfunctions default 25)")
    run.add_argument("--max-concurrency", type=int, default=100, metavar="N",
                     help="stepfunctions: batches at once (default 100, at most 10,000)")  # fmt: skip
    run.add_argument("--tolerated-failure-percentage", type=float, default=5.0, metavar="P",
                     help="stepfunctions: batches that may fail before the run stops (default 5)")  # fmt: skip
    run.add_argument("--yes", action="store_true", help="do not ask for the bucket name to be typed")
    run.add_argument("--json", action="store_true", help="the run's report as JSON on stdout")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    opts = run.add_argument_group("job options")
    opts.add_argument("--dry-run", action="store_true", help="prune: list what would be deleted; delete nothing")
    opts.add_argument("--older-than", metavar="AGE", help="prune: not modified for AGE (e.g. 90d)")
    opts.add_argument("--not-accessed-for", metavar="AGE", help="prune: neither modified nor read for AGE")
    opts.add_argument("--to-key", metavar="KEY", help="rewrap: the destination KMS key id, ARN or alias")
    opts.add_argument("--objects", action="store_true", help="rewrap: format-1 objects too")
    opts.add_argument("--keys-only", action="store_true", help="shred: destroy the keys, leave the objects")

    for name, summary in (("status", "the state of a run: a Step Functions execution ARN, or a local run id"),
                          ("report", "a run's failed agents with their reasons, and those not reached"),
                          ("redrive", "run again only what a run did not finish (failed or not reached)")):  # fmt: skip
        p = actions.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".",
                               epilog=f"example:\n  s3memory fleet {name} 20261127T181100Z-3f9a1c",
                               formatter_class=fmt, parents=[conn])  # fmt: skip
        p.add_argument("execution", metavar="EXECUTION", help="execution ARN (stepfunctions) or run id (local)")
        p.add_argument("--results", metavar="S3_URL", help="local runs: where results went (S3MEMORY_FLEET_RESULTS)")
        p.add_argument("--json", action="store_true", help="output JSON")
        if name == "redrive":
            p.add_argument("--workers", dest="fleet_workers", type=workers, default=4, metavar="N",
                           help="local: worker processes (default 4)")  # fmt: skip
            p.add_argument("--yes", action="store_true", help="do not ask for the bucket name to be typed")
            p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
