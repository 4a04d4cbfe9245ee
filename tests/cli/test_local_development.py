"""docs/local-development.md, followed as written against moto's server: its variables, its setup
script (with KMS, and with `--no-kms` and a local key as for MinIO), then `doctor` and `ls`."""

from __future__ import annotations

import base64
import inspect
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from s3memory.config import Settings
from tests.support.cli import ROOT, subprocess_env
from tests.support.moto_server import running_moto_server

# It starts moto's server itself, whatever store the suite runs on; and runs the CLI as processes.
pytestmark = [pytest.mark.moto_only, pytest.mark.slow]

DOC = (Path(ROOT) / "docs" / "local-development.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(bash|python)\n(.*?)```", DOC, flags=re.S)


def block(language: str, containing: str) -> str:
    (found,) = [text for lang, text in BLOCKS if lang == language and containing in text]
    return found


def exports(text: str) -> dict[str, str]:
    """The NAME=value pairs of `export` lines (values without spaces or $(...))."""
    pairs: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("export "):
            pairs.update(re.findall(r"(\w+)=([^\s$#]+)", line.split("#")[0]))
    return pairs


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    with running_moto_server() as url:
        yield url


def documented_env(moto_url: str, bucket: str) -> dict[str, str]:
    variables = exports(block("bash", "export S3MEMORY_ENDPOINT_URL"))
    assert variables["S3MEMORY_ENDPOINT_URL"] == "http://127.0.0.1:5000"  # moto's row: `moto_server -p 5000`
    assert "`moto_server -p 5000`" in DOC
    variables |= {"S3MEMORY_ENDPOINT_URL": moto_url, "S3MEMORY_BUCKET": bucket}  # this test's server and bucket
    return subprocess_env() | variables | {"AWS_EC2_METADATA_DISABLED": "true"}


def python(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_the_setup_script_and_a_kms_key_give_a_safe_store(moto_url: str, tmp_path: Path) -> None:
    env = documented_env(moto_url, "s3memory-dev-kms")
    script = tmp_path / "dev_setup.py"
    script.write_text(block("python", "create_bucket"), encoding="utf-8")
    assert python(env, str(script)).returncode == 0
    env |= exports(block("bash", "export S3MEMORY_KMS_KEY_ID"))
    assert env["S3MEMORY_KMS_KEY_ID"] == "alias/s3memory-dev"
    doctor = python(env, "-m", "s3memory", "doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr
    report = json.loads(doctor.stdout)
    assert report["safe"] is True
    assert report["capabilities"]["versioning"] is True  # the script turned it on
    assert report["capabilities"]["kms_context"] is True
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "hello.md").write_text("hello\n", encoding="utf-8")
    imported = python(env, "-m", "s3memory", "import", "--agent", "dev-agent", str(tmp_path / "notes"))
    assert imported.returncode == 0, imported.stderr
    listed = python(env, "-m", "s3memory", "ls", "--agent", "dev-agent")
    assert (listed.returncode, listed.stderr) == (0, "")
    assert listed.stdout.endswith("\t/memories/hello.md\n")


def test_without_kms_a_local_key_as_for_minio(moto_url: str, tmp_path: Path) -> None:
    env = documented_env(moto_url, "s3memory-dev-local")
    script = tmp_path / "dev_setup.py"
    script.write_text(block("python", "create_bucket"), encoding="utf-8")
    assert python(env, str(script), "--no-kms").returncode == 0
    line = block("bash", "S3MEMORY_LOCAL_KEY")
    maker = re.search(r'\$\(python -c "(.*)"\)', line)
    assert maker is not None
    key = python(env, "-c", maker.group(1)).stdout.strip()
    assert len(base64.b64decode(key)) == 32
    env["S3MEMORY_LOCAL_KEY"] = key
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "hello.md").write_text("hello\n", encoding="utf-8")
    imported = python(env, "-m", "s3memory", "import", "--agent", "dev-agent", str(tmp_path / "notes"))
    assert imported.returncode == 0, imported.stderr  # as the page does, before `ls` (an agent with nothing is refused)
    listed = python(env, "-m", "s3memory", "ls", "--agent", "dev-agent")
    assert (listed.returncode, listed.stderr) == (0, "")
    assert listed.stdout.endswith("\t/memories/hello.md\n")


def test_the_page_names_real_variables_and_a_production_snippet_that_fits_the_api() -> None:
    from s3memory import KmsKeys, S3MemoryTool

    fields = {f"S3MEMORY_{name.upper()}" for name in Settings.model_fields}
    named = set(re.findall(r"S3MEMORY_[A-Z_]+", DOC))
    assert named <= fields, named - fields
    snippet = block("python", "KmsKeys(")
    compile(snippet, "local-development.md", "exec")
    inspect.signature(S3MemoryTool).bind(bucket="b", agent_id="a", keys=None, s3_client=None)
    inspect.signature(KmsKeys).bind("alias/s3memory", kms_client=None)
    assert "[docs/local-development.md](docs/local-development.md)" in (Path(ROOT) / "README.md").read_text("utf-8")
