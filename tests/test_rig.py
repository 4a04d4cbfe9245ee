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
