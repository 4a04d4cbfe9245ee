"""The conformance kit against s3memory itself: plain and encrypted names, with a mount, on the rig's store.

On moto (in process) every case but the races runs; the races run on the serialised moto server
(`tests.support.moto_server`: concurrent requests over HTTP, each applied whole, which S3's
atomicity needs) instead, and on MiniStack (`scripts/test-endpoint.sh`) with the rest.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from s3memory import LocalKeys, Mount, S3MemoryTool
from s3memory.conformance import CASES, Case, Race, Result, run, summary
from s3memory.conformance.cases.inputs import ROOT
from tests.support import BUCKET, LOCAL_KEY
from tests.support.endpoint import ON_MOTO

RACES = [case for case in CASES if isinstance(case, Race)]
CLAIMS = () if ON_MOTO else ("concurrency",)  # in process, the races are left to the moto server's run below


def factory(s3: Any, bucket: str = BUCKET, **options: Any) -> Callable[[], S3MemoryTool]:
    """A fresh, empty memory per call: a new agent id under `agents/`, 4 workers (the kit closes each tool)."""
    ids = itertools.count()

    def make() -> S3MemoryTool:
        return S3MemoryTool(
            bucket=bucket, agent_id=f"kit-{next(ids)}", keys=LocalKeys(LOCAL_KEY), s3_client=s3, prefix="agents/",
            max_workers=4, **options,
        )  # fmt: skip

    return make


def failures(results: list[Result]) -> dict[str, str]:
    return {r.case.id: r.detail for r in results if r.status == "fail"}


def test_every_case_passes_with_plain_names(s3: Any) -> None:
    results = run(factory(s3), CASES, CLAIMS)
    assert failures(results) == {}
    skipped = len(RACES) if ON_MOTO else 0
    assert summary(results)[-1] == f"{len(CASES)} cases: {len(CASES) - skipped} passed, 0 failed, {skipped} skipped"


# On an endpoint the plain run (races included) is the reference; the other two make the same kinds
# of request, and each full run there costs minutes of `make test-ministack`.
moto_run_only = pytest.mark.skipif(not ON_MOTO, reason="on an endpoint the plain-names run is the reference")


@moto_run_only
def test_every_case_passes_with_encrypted_names(s3: Any) -> None:
    results = run(factory(s3, names="encrypted"), CASES, CLAIMS)
    assert failures(results) == {}


def _shows_the_root(case: Case | Race) -> bool:
    """A case whose expected answers include a listing of /memories (where a mount is an entry)."""
    if isinstance(case, Race):
        return any(ROOT in answer for _, answers in case.after for answer in answers)
    return ROOT in case.answer or any(ROOT in look.answer for look in case.after)


@moto_run_only
def test_a_mount_changes_only_the_listing_of_the_root(s3: Any) -> None:
    """With a store mounted at /memories/zz, every answer about the agent's own paths is the kit's; the
    listings of /memories (and only they) show the mount as one more directory entry."""
    results = run(factory(s3, mounts={"zz": Mount("kit-store", read_only=False)}), CASES, CLAIMS)
    failed = [r for r in results if r.status == "fail"]
    assert {r.case.id for r in failed} == {
        case.id for case in CASES if _shows_the_root(case) and (CLAIMS or not case.needs)
    }
    # Each failure is the root listing with the mount in it (the case, what it got and why, if not).
    assert [(r.case.id, r.got, r.detail) for r in failed if "\n4.0K\t/memories/zz/" not in r.got] == []


@pytest.mark.moto_only
def test_the_races_pass_on_a_store_that_serialises_requests() -> None:
    from tests.support.moto_server import new_bucket, running_moto_server, s3_client

    with running_moto_server() as url:
        results = run(factory(s3_client(url), new_bucket(url)), RACES, ("concurrency",))
    assert failures(results) == {}
    assert [r.status for r in results] == ["pass"] * 5
