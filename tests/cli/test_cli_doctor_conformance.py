"""`s3memory doctor --conformance`: the kit on the configured bucket, under a scratch prefix it removes.

The doctor runs the race cases on a store whose probes pass; in-process moto gets S3's atomicity
from answering one request at a time (`tests.support.moto_server.one_request_at_a_time`, beside
the serialised server there), here for every service. What moto cannot
answer for the user's real bucket (its key policy in force, its conditional DELETE of a missing
key, versioning as configured) is exactly why the command exists; the same test runs on MiniStack
through the endpoint rig.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from s3memory.conformance import CASES
from tests.support import BUCKET
from tests.support.cli import run
from tests.support.endpoint import ON_MOTO
from tests.support.moto_server import one_request_at_a_time

AGENT_FILE = "agents/agent-1/notes.md"


@pytest.fixture
def serialised_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process moto answering one request of any service at a time (S3's already are: the `aws`
    fixture); on an endpoint, nothing to do."""
    if ON_MOTO:
        one_request_at_a_time(monkeypatch, "before-send.")


def test_the_kit_passes_on_the_bucket_and_leaves_nothing_behind(
    capsys: Any, env: Any, kms_key: str, monkeypatch: Any, serialised_moto: None
) -> None:
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", kms_key)  # the user's key source: KMS
    monkeypatch.delenv("S3MEMORY_LOCAL_KEY")
    env.put_object(Bucket=BUCKET, Key=AGENT_FILE, Body=b"an agent's file the run must not touch")
    code, out, err = run(capsys, "doctor", "--conformance", "--json")
    report = json.loads(out)["conformance"]
    assert [c["detail"] for c in report["cases"] if c["status"] == "fail"] == []
    assert (code, err) == (0, "")
    assert (report["passed"], report["failed"], report["skipped"]) == (len(CASES), 0, 0)
    assert report["scratch"].startswith("agents/.s3memory-conformance/")
    assert report["created"] > len(CASES)  # every case wrote at least its files and its agent's branch key
    assert report["left"] == 0
    listed = env.list_object_versions(Bucket=BUCKET)
    assert [v["Key"] for v in listed.get("Versions", [])] == [AGENT_FILE]
    assert listed.get("DeleteMarkers", []) == []


def test_it_refuses_a_scratch_prefix_that_holds_agents(capsys: Any, env: Any) -> None:
    env.put_object(Bucket=BUCKET, Key=AGENT_FILE, Body=b"x")
    code, _, err = run(capsys, "doctor", "--conformance", "--scratch-prefix", "agents/")
    assert code == 2
    assert err == (
        "s3memory: error: the scratch prefix agents/ holds 1 object(s), e.g. agents' files; the conformance run "
        "removes everything under it afterwards, so it runs only under an empty prefix (--scratch-prefix)\n"
    )
    assert [o["Key"] for o in env.list_objects_v2(Bucket=BUCKET)["Contents"]] == [AGENT_FILE]


def test_the_report_lines_name_the_failed_case_and_the_cleanup() -> None:
    from s3memory.admin.conformance import KitRun
    from s3memory.cli.doctor_conformance import lines, passed
    from s3memory.conformance import Result

    case = next(c for c in CASES if c.id == "root.delete")
    kit = KitRun("agents/.s3memory-conformance/x/", [Result(case, "fail", "breaks root.delete (...): ...")], 7, 7, 7, 0)
    assert lines(kit) == [
        "conformance (the kit on this bucket):",
        "FAIL  root         delete       root.delete  root.delete",
        "      breaks root.delete (...): ...",
        "by concern:",
        "  root           0 passed    1 failed    0 skipped",
        "by command:",
        "  delete         0 passed    1 failed    0 skipped",
        "1 cases: 0 passed, 1 failed, 0 skipped",
        "conformance scratch prefix agents/.s3memory-conformance/x/: created 7 objects; removed 7 object versions "
        "and delete markers; left 0",
    ]
    assert (passed(kit), passed(None)) == (False, True)
