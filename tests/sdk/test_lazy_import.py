"""Cold start: `import s3memory` and its storage and CLI modules never import `anthropic` (PEP 562).

Each check runs in a fresh interpreter, so nothing imported by the test session leaks in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REPORT = "import sys, json; print(json.dumps({m: m in sys.modules for m in ('anthropic', 'boto3', 'botocore')}))"


def run(code: str) -> tuple[dict[str, bool], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "S3MEMORY_"))}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run(
        [sys.executable, "-c", code + "\n" + REPORT], env=env, cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    *before, last = proc.stdout.strip().splitlines()
    return json.loads(last), "\n".join(before)


def test_package_storage_and_cli_modules_do_not_import_anthropic() -> None:
    loaded, _ = run(
        "import s3memory\nimport s3memory.storage.store, s3memory.storage.keys, s3memory.cli, s3memory.storage.vault"
    )
    assert loaded == {"anthropic": False, "boto3": False, "botocore": True}


def test_bare_package_import_loads_neither_sdk() -> None:
    loaded, _ = run("import s3memory")
    assert loaded == {"anthropic": False, "boto3": False, "botocore": False}


def test_tool_class_attribute_loads_anthropic() -> None:
    code = (
        "import sys, s3memory\n"
        "print('before', 'anthropic' in sys.modules)\n"
        "cls = s3memory.S3MemoryTool\n"
        "print('after', 'anthropic' in sys.modules, cls.__module__, cls.__name__)"
    )
    loaded, out = run(code)
    assert out == "before False\nafter True s3memory.tool S3MemoryTool"
    assert loaded["anthropic"] is True


def test_cli_help_loads_neither_boto3_nor_anthropic() -> None:
    code = (
        "import runpy, sys\n"
        "sys.argv = ['s3memory', '--help']\n"
        "try:\n"
        "    runpy.run_module('s3memory.cli', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code)\n"
    )
    loaded, out = run(code)
    assert out.startswith("usage: s3memory")
    assert out.endswith("exit 0")
    assert loaded == {"anthropic": False, "boto3": False, "botocore": False}


def test_unknown_attribute_is_an_attribute_error() -> None:
    loaded, out = run("import s3memory\ntry:\n    s3memory.NoSuchThing\nexcept AttributeError as exc:\n    print(exc)")
    assert out == "module 's3memory' has no attribute 'NoSuchThing'"
    assert loaded["anthropic"] is False
