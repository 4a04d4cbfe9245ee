"""`s3memory conformance --tool module:factory`: the conformance kit against any memory backend."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from s3memory.conformance import CASES, Case, Race, run, summary, table, to_json

from .context import emit_json, say
from .exits import EXIT_FAILED, EXIT_OK, UsageError


def load_factory(spec: str) -> Callable[[], Any]:
    """`package.module:factory` (the attribute may be dotted: `module:Class.make`); the working
    directory is searched too, as `python -m` does."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise UsageError(f"--tool {spec!r}: expected MODULE:FACTORY, e.g. --tool mybackend:make_tool")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # a backend module beside the caller, as `python -m` finds it
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as err:
        raise UsageError(f"--tool {spec!r}: cannot import {module_name} ({err})") from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise UsageError(f"--tool {spec!r}: {module_name} has no {attribute}")
        target = getattr(target, part)
    if not callable(target):
        raise UsageError(f"--tool {spec!r}: {attribute} is not callable")
    factory: Callable[[], Any] = target
    return factory


def selected(concerns: Sequence[str] | None, ids: Sequence[str] | None) -> list[Case | Race]:
    cases = [c for c in CASES if (not concerns or c.concern in concerns) and (not ids or c.id in ids)]
    if not cases:
        raise UsageError("no case matches --concern / --case; `s3memory conformance --list` shows them")
    return cases


def run_conformance(args: argparse.Namespace) -> int:
    if args.list:
        for case in CASES:
            say(f"{case.id:<32} {case.concern:<11} {case.command:<11} {case.rule:<24} {case.source}")
        return EXIT_OK
    if not args.tool:
        raise UsageError("--tool is required, e.g. --tool mybackend:make_tool")
    factory = load_factory(args.tool)
    claims = ["concurrency"] if args.concurrency else []
    results = run(factory, selected(args.concern, args.case), claims)
    if args.json:
        emit_json(to_json(results))
    else:
        for line in [*table(results), "", *summary(results)]:
            say(line)
    return EXIT_OK if all(r.status != "fail" for r in results) else EXIT_FAILED
