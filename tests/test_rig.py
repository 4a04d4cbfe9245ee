"""The test rig itself: the CLI's clients come through `main(clients=...)`, never by patching."""

from __future__ import annotations

import re
from pathlib import Path

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
