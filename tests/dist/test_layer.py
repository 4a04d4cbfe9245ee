"""The Lambda layer: scripts/lambda-layer.sh (what `make lambda-layer` runs) builds one for this
machine's Python and architecture, and a plain interpreter (`python -S`: no site-packages, the
layer's python/ folder alone on PYTHONPATH, as Lambda puts it on sys.path) uses s3memory from it.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import s3memory
from tests.dist.conftest import REPO, Artifacts
from tests.support.api import ROOT_VIEW
from tests.support.moto_server import new_bucket

ARCH = {"x86_64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine()]
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture(scope="session")
def layer(artifacts: Artifacts, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("layer")
    env = {**os.environ, "PYTHON": sys.executable, "LAYER_PYTHON": PYTHON, "LAYER_ARCHES": ARCH}
    done = subprocess.run(["bash", str(REPO / "scripts" / "lambda-layer.sh"), str(artifacts.wheel), str(out)],
                          env=env, capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    name = f"s3memory-layer-{s3memory.__version__}-python{PYTHON}-{ARCH}.zip"
    assert f"{name}: " in done.stdout
    assert "MB zipped (direct upload limit 50 MB)" in done.stdout
    return out / name


def test_the_layer_has_lambdas_layout(layer: Path) -> None:
    names = zipfile.ZipFile(layer).namelist()
    assert {n.split("/")[0] for n in names} == {"python"}
    assert "python/s3memory/__init__.py" in names
    assert "python/s3memory/py.typed" in names
    assert any(n.startswith("python/anthropic/") for n in names)
    assert any(n.startswith("python/pydantic_core/") and n.endswith(".so") for n in names)
    assert not [n for n in names if n.startswith(("python/bin/", "python/tests/"))]


def test_the_layer_ships_bytecode_for_its_runtime_only(layer: Path) -> None:
    """Old code: no .pyc, so every cold start compiled s3memory and its dependencies (issue 34, item 12)."""
    names = zipfile.ZipFile(layer).namelist()
    tag = f"cpython-{sys.version_info.major}{sys.version_info.minor}"
    assert f"python/s3memory/__pycache__/tool.{tag}.pyc" in names
    assert f"python/anthropic/__pycache__/__init__.{tag}.pyc" in names
    assert [n for n in names if n.endswith(".pyc") and f".{tag}." not in n] == []
    with zipfile.ZipFile(layer) as archive:  # hash-checked bytecode: valid whatever the zip's file times
        flags = archive.read(f"python/s3memory/__pycache__/tool.{tag}.pyc")[4:8]
    assert int.from_bytes(flags, "little") == 0b01  # hash-based, unchecked (PEP 552)


def test_a_plain_interpreter_uses_s3memory_from_the_unzipped_layer(layer: Path, tmp_path: Path, moto_url: str) -> None:
    zipfile.ZipFile(layer).extractall(tmp_path / "opt")  # our own zip, just built
    code = (
        "import sys, boto3, s3memory\n"
        "from s3memory import LocalKeys, S3MemoryTool\n"
        "s3 = boto3.client('s3', endpoint_url=sys.argv[1], region_name='us-east-1')\n"
        "tool = S3MemoryTool(bucket=sys.argv[2], agent_id='agent-42', keys=LocalKeys(bytes(range(32))), s3_client=s3)\n"
        "print(s3memory.__file__)\n"
        "print(tool.call({'command': 'view', 'path': '/memories'}))\n"
    )
    env = {"PYTHONPATH": str(tmp_path / "opt" / "python"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}  # fmt: skip
    done = subprocess.run([sys.executable, "-S", "-c", code, moto_url, new_bucket(moto_url)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    where, view = done.stdout.split("\n", 1)
    assert where == str(tmp_path / "opt" / "python" / "s3memory" / "__init__.py")
    assert view == ROOT_VIEW + "\n"


def test_the_docs_state_the_layers_sizes(layer: Path) -> None:
    """docs/install.md's sizes of the layer for this architecture (built there for python3.12, here for this
    machine's Python: within 15%) and docs/deploy.md's round figures (issue 34, item 11: the docs said 27 and
    56 MB of a 37 and 75 MB layer)."""
    mb = 1024 * 1024
    zipped = layer.stat().st_size / mb
    with zipfile.ZipFile(layer) as archive:
        unzipped = sum(info.file_size for info in archive.infolist()) / mb
    install = (REPO / "docs" / "install.md").read_text(encoding="utf-8")
    stated = re.findall(rf"python3\.\d+-{ARCH}\.zip: +([\d.]+) MB zipped, ([\d.]+) MB unzipped", install)
    deploy = re.findall(r"The layer is about (\d+) MB zipped and (\d+) MB unzipped", (REPO / "docs" / "deploy.md")
                        .read_text(encoding="utf-8"))  # fmt: skip
    assert len(stated) == 1, stated
    assert len(deploy) == 1, deploy
    for doc, (doc_zipped, doc_unzipped) in (("install.md", stated[0]), ("deploy.md", deploy[0])):
        assert abs(zipped - float(doc_zipped)) <= 0.15 * float(doc_zipped), (doc, doc_zipped, f"{zipped:.1f}")
        assert abs(unzipped - float(doc_unzipped)) <= 0.15 * float(doc_unzipped), (doc, doc_unzipped, f"{unzipped:.1f}")
