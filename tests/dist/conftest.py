"""Fixtures of the artifact tests: the built wheel, fresh virtualenvs outside the repository, moto.

`make test-dist` builds the wheel and sdist (`make dist`) and runs these tests with
S3MEMORY_DIST_DIR=dist; without it the tests that need the artifacts skip (the plain `make
pytest` run has no artifacts to test). A virtualenv is made per dependency set, once per
session, by uv from the wheel file alone: no `-e`, no source tree on `sys.path`, the current
directory a scratch folder. The sets:

* `lowest`: every dependency (and the `mcp`, `otel` and `demo` extras) at the lower bound
  pyproject.toml declares, read from pyproject.toml itself;
* `newest`: the newest release of each that the index offers.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from tests.support.moto_server import running_moto_server

REPO = Path(__file__).resolve().parents[2]
EXTRAS = ("mcp", "otel", "demo")
_BOUND = re.compile(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?>=([0-9][0-9.]*)$")


@dataclass(frozen=True)
class Artifacts:
    wheel: Path
    sdist: Path


@dataclass(frozen=True)
class Installed:
    name: str
    venv: Path
    scratch: Path  # the working directory of every command: outside the repository

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def s3memory(self) -> Path:
        return self.venv / "bin" / "s3memory"

    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment: no PYTHONPATH, no S3MEMORY_* or AWS_* of the caller's."""
        env = {"PATH": f"{self.venv / 'bin'}:/usr/bin:/bin", "HOME": str(self.scratch), "LANG": "C.UTF-8"}
        env.update(extra)
        return env

    def run(self, *argv: str | Path, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in argv], cwd=self.scratch, env=self.env(**env), input=stdin,
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip


def lower_bounds() -> dict[str, str]:
    """{distribution: lowest version} of the dependencies and the mcp, otel and demo extras."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in EXTRAS:
        requirements += project["optional-dependencies"][extra]
    bounds = {}
    for requirement in requirements:
        match = _BOUND.match(requirement.replace(" ", ""))
        assert match, f"{requirement}: every dependency needs a lower bound `>=X`"
        bounds[match.group(1).lower()] = match.group(2)
    return bounds


def uv() -> str:
    found = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if found is None:
        pytest.fail("uv is not installed: pip install -e . --group dev")
    return found


@pytest.fixture(scope="session")
def artifacts() -> Artifacts:
    folder = os.environ.get("S3MEMORY_DIST_DIR")
    if not folder:
        pytest.skip("needs the built wheel and sdist: run `make test-dist` (sets S3MEMORY_DIST_DIR=dist)")
    wheels = sorted(Path(folder).resolve().glob("s3memory-*.whl"))
    sdists = sorted(Path(folder).resolve().glob("s3memory-*.tar.gz"))
    assert len(wheels) == 1, f"expected one wheel in {folder}, found {wheels}"
    assert len(sdists) == 1, f"expected one sdist in {folder}, found {sdists}"
    return Artifacts(wheels[0], sdists[0])


@pytest.fixture(scope="session", params=["lowest", "newest"])
def installed(
    request: pytest.FixtureRequest, artifacts: Artifacts, tmp_path_factory: pytest.TempPathFactory
) -> Installed:
    """The wheel with its three extras in a fresh virtualenv, once per dependency set."""
    name = request.param
    root = tmp_path_factory.mktemp(f"venv-{name}")
    assert REPO not in root.parents, "the virtualenv must live outside the repository"
    venv, scratch = root / "venv", root / "scratch"
    scratch.mkdir()
    done = subprocess.run([uv(), "venv", "--quiet", "--python", sys.executable, str(venv)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    command = [uv(), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python")]
    if name == "lowest":
        constraints = root / "lowest.txt"
        constraints.write_text("".join(f"{d}=={v}\n" for d, v in lower_bounds().items()), encoding="utf-8")
        command += ["--constraint", str(constraints)]
    else:
        command += ["--upgrade"]
    command.append(f"{artifacts.wheel}[{','.join(EXTRAS)}]")
    done = subprocess.run(command, cwd=scratch, capture_output=True, text=True, check=False,
                          env={k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return Installed(name, venv, scratch)


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    """moto's server on 127.0.0.1 (this process's moto): the installed programs' S3."""
    with running_moto_server() as url:
        yield url
