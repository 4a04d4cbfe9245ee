"""The built wheel and sdist, and the wheel installed the way users install it.

Each installed test runs twice, with every dependency at its declared lower bound and at its
newest release (conftest.py), in a virtualenv outside the repository that holds only the wheel
and its dependencies.
"""

from __future__ import annotations

import email
import json
import re
import subprocess
import tarfile
import zipfile
from pathlib import Path
from typing import Any

from packaging.version import Version

import s3memory
from tests.dist.conftest import REPO, Artifacts, Installed, lower_bounds
from tests.support import markdown
from tests.support.api import EXPECTED_RESULTS, MEMORY_TOOL_PARAM, ROOT_VIEW, SCRIPT

HERE = Path(__file__).parent
VERSION = s3memory.__version__


def test_the_wheel_holds_the_package_and_nothing_else(artifacts: Artifacts) -> None:
    assert artifacts.wheel.name == f"s3memory-{VERSION}-py3-none-any.whl"
    names = zipfile.ZipFile(artifacts.wheel).namelist()
    info = f"s3memory-{VERSION}.dist-info/"
    assert {n.split("/")[0] for n in names} == {"s3memory", info.rstrip("/")}
    assert "s3memory/py.typed" in names
    assert f"{info}licenses/LICENSE" in names
    assert not [n for n in names if n.startswith(("tests/", "bench/", "terraform/")) or "__pycache__" in n]
    wheel = zipfile.ZipFile(artifacts.wheel)
    metadata = email.message_from_string(wheel.read(f"{info}METADATA").decode("utf-8"))
    assert metadata["Version"] == VERSION
    assert metadata["License-Expression"] == "Apache-2.0"
    # The dev toolchain is a dependency group, not a published extra (issue 34, item 10).
    assert sorted(metadata.get_all("Provides-Extra") or []) == ["demo", "mcp", "otel"]
    # The package index shows the long description: README.pypi.md, no link it cannot follow; no
    # Project-URL, as the project has no public home yet (tests/test_docs.py: PUBLIC_URLS).
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload() == (REPO / "README.pypi.md").read_text(encoding="utf-8")
    assert markdown.non_absolute_links(metadata.get_payload()) == []
    assert metadata.get_all("Project-URL") is None
    entry_points = wheel.read(f"{info}entry_points.txt").decode()
    assert "s3memory = s3memory.cli:main" in entry_points


def test_the_sdist_builds_the_same_package(artifacts: Artifacts) -> None:
    assert artifacts.sdist.name == f"s3memory-{VERSION}.tar.gz"
    with tarfile.open(artifacts.sdist) as sdist:
        names = sdist.getnames()
    top = f"s3memory-{VERSION}"
    assert {f"{top}/pyproject.toml", f"{top}/README.md", f"{top}/LICENSE", f"{top}/s3memory/py.typed"} <= set(names)
    assert [n for n in names if n.startswith(f"{top}/tests")] == []  # no stray test files (issue 34, item 10)
    # Besides the package and setuptools' own files, exactly the documents the index page names.
    documents = {"README.md", "README.pypi.md", "SECURITY.md", "FORMAT.md", "CHANGELOG.md", "LICENSE", "docs"}
    documents |= {p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md")}
    setuptools = {"PKG-INFO", "pyproject.toml", "setup.cfg", "MANIFEST.in", "s3memory.egg-info"}
    egg_info = ("PKG-INFO", "SOURCES.txt", "dependency_links.txt", "entry_points.txt", "requires.txt", "top_level.txt")
    setuptools |= {f"s3memory.egg-info/{name}" for name in egg_info}
    others = {n.removeprefix(f"{top}/") for n in names if n != top and not n.startswith(f"{top}/s3memory/")}
    assert others - {"s3memory"} == documents | setuptools
    named = markdown.documents_named((REPO / "README.pypi.md").read_text(encoding="utf-8"))
    assert [name for name in named if f"{top}/{name}" not in names] == []
    wheel_modules = {n for n in zipfile.ZipFile(artifacts.wheel).namelist() if n.startswith("s3memory/")}
    assert {n.removeprefix(f"{top}/") for n in names if n.startswith(f"{top}/s3memory/")} >= wheel_modules


def test_the_dependency_set_is_the_one_named(installed: Installed) -> None:
    code = "import importlib.metadata as m, json, sys; print(json.dumps({d: m.version(d) for d in sys.argv[1:]}))"
    bounds = lower_bounds()
    done = installed.run(installed.python, "-c", code, "s3memory", *bounds)
    assert done.returncode == 0, done.stderr
    versions = json.loads(done.stdout)
    assert versions.pop("s3memory") == VERSION
    if installed.name == "lowest":
        assert {d: Version(v) for d, v in versions.items()} == {d: Version(v) for d, v in bounds.items()}
    else:
        assert all(Version(versions[d]) >= Version(bounds[d]) for d in bounds), versions


def test_version_command(installed: Installed) -> None:
    done = installed.run(installed.s3memory, "--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"s3memory {VERSION}\n", "")


def test_import_comes_from_the_venv_and_loads_no_anthropic(installed: Installed) -> None:
    code = "import sys, s3memory; print(s3memory.__file__); print('anthropic' in sys.modules, 'boto3' in sys.modules)"
    done = installed.run(installed.python, "-c", code)
    assert done.returncode == 0, done.stderr
    where, loaded = done.stdout.splitlines()
    assert Path(where).is_relative_to(installed.venv)
    assert loaded == "False False"


def test_demo(installed: Installed) -> None:
    done = installed.run(installed.s3memory, "demo")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Does the body contain the text 'refund'? False" in done.stdout


def test_the_tool_through_the_sdks_runner(installed: Installed) -> None:
    done = installed.run(installed.python, HERE / "installed_runner.py", stdin=json.dumps({"script": SCRIPT}))
    assert done.returncode == 0, done.stderr
    ran: dict[str, Any] = json.loads(done.stdout)
    assert Path(ran["module"]).is_relative_to(installed.venv)
    assert ran["final"] == "Saved your notes."
    bodies = ran["bodies"]
    assert len(bodies) == len(SCRIPT)
    assert bodies[0]["tools"] == [MEMORY_TOOL_PARAM]
    assert [b["messages"][-1]["content"] for b in bodies[1:]] == EXPECTED_RESULTS


def test_mcp_servers_first_answers_over_stdio(installed: Installed, moto_url: str) -> None:
    from tests.support.moto_server import new_bucket

    env = {"S3MEMORY_BUCKET": new_bucket(moto_url), "S3MEMORY_PREFIX": "agents/", "S3MEMORY_ENDPOINT_URL": moto_url,
           "S3MEMORY_LOCAL_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}  # fmt: skip
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "dist", "version": "0"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "memory", "arguments": {"command": "view", "path": "/memories"}}},
    ]  # fmt: skip
    process = subprocess.Popen(
        [str(installed.s3memory), "mcp", "--agent", "support-agent-1"], cwd=installed.scratch,
        env=installed.env(**env), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdin is not None
    assert process.stdout is not None
    answers = {}
    try:
        for line in lines:  # one answer at a time, as a client waits for each
            process.stdin.write(json.dumps(line) + "\n")
            process.stdin.flush()
            if "id" in line:
                answer = json.loads(process.stdout.readline())
                answers[answer["id"]] = answer
    finally:
        out, err = process.communicate(input="", timeout=60)  # closing stdin ends the session
    assert (process.returncode, out) == (0, ""), err
    assert err == "s3memory mcp: serving agent support-agent-1 over stdio\n"
    assert sorted(answers) == [1, 2, 3]
    assert answers[1]["result"]["serverInfo"]["name"] == "s3memory"
    assert [t["name"] for t in answers[2]["result"]["tools"]] == ["memory"]
    assert answers[3]["result"]["isError"] is False
    assert answers[3]["result"]["content"] == [{"type": "text", "text": ROOT_VIEW}]


def test_the_sdist_is_reproducible(artifacts: Artifacts) -> None:
    """Two builds of one commit give the same bytes: the gzip time and every file time are at most
    the last commit's (SOURCE_DATE_EPOCH in `make dist`); old code stamped the build time (issue 34, item 16)."""
    import subprocess

    epoch = int(subprocess.run(["git", "log", "-1", "--format=%ct"], capture_output=True, text=True, check=True).stdout)
    raw = artifacts.sdist.read_bytes()
    assert int.from_bytes(raw[4:8], "little") == epoch
    with tarfile.open(artifacts.sdist) as sdist:
        members = sdist.getmembers()
    assert [m.name for m in members if m.mtime > epoch or m.uid or m.gid] == []
    assert [m.name for m in members] == sorted(m.name for m in members)


def _within(stated: float, measured: float, tolerance: float = 0.15) -> bool:
    return abs(measured - stated) <= tolerance * stated


def test_install_md_states_the_artifacts_sizes(artifacts: Artifacts) -> None:
    """docs/install.md's "about N kB" of the wheel and the sdist, within 15% of the built files (it said 190
    and 160 kB of a 367 and 293 kB build: issue 34, item 11)."""
    doc = (REPO / "docs" / "install.md").read_text(encoding="utf-8")
    for artifact in (artifacts.wheel, artifacts.sdist):
        stated = re.findall(rf"{re.escape(artifact.name)} \(about (\d+) kB\)", doc)
        assert len(stated) == 1, f"docs/install.md states no size of {artifact.name}"
        measured = artifact.stat().st_size / 1000
        assert _within(int(stated[0]), measured), f"{artifact.name}: about {stated[0]} kB stated, {measured:.0f} built"
