"""The test rig itself: the CLI's clients come through `main(clients=...)`, never by patching."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support import BUCKET

TESTS = Path(__file__).resolve().parent
PATCHED = re.compile(r"setattr\(\s*(StorageSettings|Settings)\s*,\s*[\"']clients[\"']|Settings\.clients\s*=")


def test_no_test_patches_the_settings_clients() -> None:
    found = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in sorted(TESTS.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if PATCHED.search(line)
    ]
    assert found == []


STORE_PATCHED = re.compile(r"setattr\(\s*(ObjectStore|AdminStore)\s*,")


def test_no_test_patches_the_object_store() -> None:
    """Faults are injected at the boto3 client (`CliClients.refuse`, `tests.support.lost.Outage`),
    so the storage layer under test is the one that ships."""
    found = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in sorted(TESTS.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if STORE_PATCHED.search(line) and path.name != "test_rig.py"
    ]
    assert found == []


class _Item:
    """What the collection hooks read of a test: its module, markers and fixture closure."""

    def __init__(self, name: str, module: str, markers: tuple[str, ...] = (), fixtures: tuple[str, ...] = ()) -> None:
        self.name, self.module, self.markers, self.fixturenames = name, module, markers, fixtures

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def test_modules_with_a_slow_test_run_first_each_kept_whole() -> None:
    from tests.conftest import _slow_modules_first

    items = [_Item("a1", "a"), _Item("b1", "b"), _Item("b2", "b", ("slow",)), _Item("c1", "c"), _Item("d1", "d"),
             _Item("d2", "d", ("slow",)), _Item("d3", "d")]  # fmt: skip
    _slow_modules_first(items)  # type: ignore[arg-type]
    assert [i.name for i in items] == ["b1", "b2", "d1", "d2", "d3", "a1", "c1"]


def test_the_endpoint_run_keeps_the_tests_that_reach_the_store() -> None:
    """A test that never reaches the store (no `aws` fixture under it, not marked `endpoint` or
    `real_conditions`) would only repeat the moto run's answer there: deselected, and reported as such."""
    from types import SimpleNamespace

    from tests.conftest import _keep_what_reaches_the_store

    items = [_Item("parser", "m"), _Item("tool", "m", fixtures=("s3", "aws")), _Item("procs", "m", ("endpoint",)),
             _Item("condition", "m", ("real_conditions",), ("s3", "aws")), _Item("pure", "m", ("slow",))]  # fmt: skip
    deselected: list[str] = []
    config = SimpleNamespace(
        hook=SimpleNamespace(pytest_deselected=lambda items: deselected.extend(i.name for i in items))
    )
    _keep_what_reaches_the_store(config, items)  # type: ignore[arg-type]
    assert [i.name for i in items] == ["tool", "procs", "condition"]
    assert deselected == ["parser", "pure"]


@pytest.mark.moto_only
def test_in_process_moto_applies_one_s3_request_at_a_time(s3: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A LIST sent while a DELETE is inside moto is answered after it: moto's LIST iterates the
    bucket's keys and read a key another thread had just removed (KeyError out of moto, seen as a
    flaky conformance case). Passing never depends on timing: the LIST is sent only once the DELETE
    is inside moto, which waits until the LIST is sent, then a second for its answer, which must not
    come while the DELETE is still inside."""
    from moto.s3.models import S3Backend

    s3.put_object(Bucket=BUCKET, Key="a", Body=b"a")
    deleting_inside, listing_sent, listed = threading.Event(), threading.Event(), threading.Event()
    answered_while_inside: list[bool] = []
    delete = S3Backend.delete_object

    def slow_delete(self: S3Backend, *args: Any, **kwargs: Any) -> Any:
        deleting_inside.set()
        assert listing_sent.wait(10)
        answered_while_inside.append(listed.wait(1))
        return delete(self, *args, **kwargs)

    monkeypatch.setattr(S3Backend, "delete_object", slow_delete)
    s3.meta.events.register_first("before-send.s3.ListObjectsV2", lambda **_: listing_sent.set())
    s3.meta.events.register("after-call.s3.ListObjectsV2", lambda **_: listed.set())
    deleting = threading.Thread(target=s3.delete_object, kwargs={"Bucket": BUCKET, "Key": "a"})
    deleting.start()
    assert deleting_inside.wait(10)
    keys = s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])
    deleting.join(10)
    assert answered_while_inside == [False]
    assert keys == []  # the LIST saw the DELETE's outcome whole
