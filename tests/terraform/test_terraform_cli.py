"""Checks that need a Terraform CLI (and, for validate/test, the AWS provider from a local mirror).

The issue's CI has no Terraform CLI: there these tests skip, and the offline checks of
test_hcl.py, test_policies.py and scripts/tf-check.sh stand alone. Where a CLI is installed they
prove what the Python side assumes about Terraform:

* `render.py` renders every template exactly as `templatefile()` does (no provider needed);
* the module and the example pass `terraform validate`;
* `terraform test` (terraform/tests/, mocked AWS provider, no account) applies the module and
  finds every deployed document equal to the Python rendering of deploy.py's values, and the
  input validations refuse what they should.

The provider mirror is `$TF_PLUGIN_DIR`, else /opt/tf-plugins, in `terraform init -plugin-dir`
layout (registry.terraform.io/hashicorp/aws/<version>/<os_arch>/...). `terraform init` installs
it from there as usual; `validate` and `test` then reattach to one instance of the binary init
chose (`aws_provider`) instead of launching it for every operation of every run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.terraform.deploy import (
    EXAMPLE_POLICIES,
    POLICIES,
    STATE_MACHINE_TEMPLATE,
    TERRAFORM,
    example_template_values,
    module_template_values,
    state_machine_values,
)
from tests.terraform.render import render_file

ALL_TEMPLATES = [
    (path, values[path.name])
    for folder, values in ((POLICIES, module_template_values()), (EXAMPLE_POLICIES, example_template_values()))
    for path in sorted(folder.glob("*.tftpl"))
] + [(STATE_MACHINE_TEMPLATE, state_machine_values())]
TF_TEST_FILE = TERRAFORM / "tests" / "rendered_policies.tftest.hcl"


def expected_renderings() -> dict[str, str]:
    """What the module must deploy, as Python renders it: every policy document, and the fleet's
    state machine definition (the .tftest.hcl's `expected` variable)."""
    expected = {
        name.removesuffix(".json.tftpl"): render_file(POLICIES / name, values)
        for name, values in module_template_values().items()
    }
    expected["fleet-state-machine-definition"] = render_file(STATE_MACHINE_TEMPLATE, state_machine_values())
    return expected


def _terraform() -> str:
    terraform = shutil.which("terraform")
    if terraform is None:
        pytest.skip("no terraform CLI on PATH")
    return terraform


def _plugin_dir() -> Path:
    plugin_dir = Path(os.environ.get("TF_PLUGIN_DIR", "/opt/tf-plugins"))
    if not (plugin_dir / "registry.terraform.io" / "hashicorp" / "aws").is_dir():
        pytest.skip(f"no hashicorp/aws provider mirror at {plugin_dir} (set TF_PLUGIN_DIR)")
    return plugin_dir


def _env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TF_IN_AUTOMATION": "1",
        "CHECKPOINT_DISABLE": "1",
    }


def _run(*args: str, cwd: Path, reattach: str | None = None) -> subprocess.CompletedProcess[str]:
    env = _env(cwd) | ({"TF_REATTACH_PROVIDERS": reattach} if reattach else {})
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def aws_provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """TF_REATTACH_PROVIDERS for one running instance of the AWS provider `terraform init` installs
    from the mirror for this module, started in its debug mode (gRPC on a unix socket) and stopped
    after the module's tests. Terraform launches a provider for every operation otherwise: four
    times a run of `terraform test` (the provider and its `replica` alias, in validate and in
    plan), about half a second of CPU each to start the 700 MB binary; its 30 runs took 74 s so
    and 21 s reattached, with the same binary, schema and assertions."""
    terraform, plugin_dir = _terraform(), _plugin_dir()
    home = tmp_path_factory.mktemp("aws-provider")
    work = _copy_module(home)
    init = _run(terraform, "init", "-backend=false", "-input=false", "-no-color", f"-plugin-dir={plugin_dir}", cwd=work)
    assert init.returncode == 0, init.stdout + init.stderr
    (binary,) = (work / ".terraform" / "providers" / "registry.terraform.io" / "hashicorp" / "aws").glob(
        "*/*/terraform-provider-aws*"
    )
    log = home / "provider.log"
    with log.open("wb") as out:
        provider = subprocess.Popen([str(binary), "-debug"], cwd=home, env=_env(home), stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 120  # a guard against a provider that never starts, not a timing assertion
        while (found := re.search(r"TF_REATTACH_PROVIDERS='([^']+)'", log.read_text(errors="replace"))) is None:
            assert provider.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
            time.sleep(0.1)
        yield found.group(1)
    finally:
        provider.send_signal(signal.SIGINT)  # the debug server's own way to stop
        try:
            provider.wait(timeout=30)
        except subprocess.TimeoutExpired:
            provider.kill()
            provider.wait()


def _copy_module(tmp_path: Path) -> Path:
    """The module (and its example beside it) in a scratch folder, so no .terraform/ lands in the repo."""
    target = tmp_path / "terraform"
    shutil.copytree(TERRAFORM, target, ignore=shutil.ignore_patterns(".terraform*", "build", "__pycache__"))
    return target


def test_renderer_matches_terraform_templatefile(tmp_path: Path) -> None:
    """Byte-for-byte parity of render.py with templatefile(); needs no provider."""
    terraform = _terraform()
    outputs = []
    for index, (path, values) in enumerate(ALL_TEMPLATES):
        (tmp_path / f"vars{index}.json").write_text(json.dumps(values), encoding="utf-8")
        outputs.append(
            f'output "t{index}" {{\n  value = templatefile("{path}", jsondecode(file("vars{index}.json")))\n}}\n'
        )
    (tmp_path / "main.tf").write_text("".join(outputs), encoding="utf-8")
    for command in (["init", "-input=false", "-no-color"], ["apply", "-auto-approve", "-input=false", "-no-color"]):
        done = _run(terraform, *command, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
    shown = _run(terraform, "output", "-json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    rendered = {name: value["value"] for name, value in json.loads(shown.stdout).items()}
    assert rendered == {f"t{i}": render_file(path, values) for i, (path, values) in enumerate(ALL_TEMPLATES)}


# The module declares `configuration_aliases = [aws.replica]`, which `terraform validate` cannot
# satisfy in the module's own folder (no caller passes the provider); the multi-region example
# validates it with both replica_region and compliance_profile on, the Lambda example with both off.
@pytest.mark.parametrize(
    "folder",
    ["examples/multi-region", "examples/lambda-agent", "examples/minimal"],
    ids=["module", "lambda-agent", "minimal"],
)
def test_terraform_validate(tmp_path: Path, folder: str, aws_provider: str) -> None:
    terraform, plugin_dir = _terraform(), _plugin_dir()
    work = _copy_module(tmp_path) / folder
    init = _run(terraform, "init", "-backend=false", "-input=false", "-no-color", f"-plugin-dir={plugin_dir}", cwd=work)
    assert init.returncode == 0, init.stdout + init.stderr
    validate = _run(terraform, "validate", "-no-color", cwd=work, reattach=aws_provider)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert "Success! The configuration is valid." in validate.stdout


@pytest.mark.slow  # 30 runs of the module under the mocked provider: about 20 s
def test_terraform_test_deploys_the_documents_python_renders(tmp_path: Path, aws_provider: str) -> None:
    terraform, plugin_dir = _terraform(), _plugin_dir()
    work = _copy_module(tmp_path)
    (tmp_path / "expected.tfvars.json").write_text(json.dumps({"expected": expected_renderings()}), encoding="utf-8")
    init = _run(terraform, "init", "-backend=false", "-input=false", "-no-color", f"-plugin-dir={plugin_dir}", cwd=work)
    assert init.returncode == 0, init.stdout + init.stderr
    var_file = f"-var-file={tmp_path / 'expected.tfvars.json'}"
    tested = _run(terraform, "test", "-no-color", var_file, cwd=work, reattach=aws_provider)
    runs = len(re.findall(r'^run "', TF_TEST_FILE.read_text(encoding="utf-8"), re.M))
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert f"Success! {runs} passed, 0 failed." in tested.stdout


def test_terraform_test_on_its_own_reads_the_committed_renderings() -> None:
    """`terraform test` run by hand loads terraform/tests/expected.auto.tfvars.json (old code: no
    such file, so "Reference to undeclared input variable" for `expected`; issue 34, item 15). It
    must hold exactly what Python renders now; regenerate it with the snippet in its test file."""
    committed = TERRAFORM / "tests" / "expected.auto.tfvars.json"
    assert (
        committed.read_text(encoding="utf-8")
        == json.dumps({"expected": expected_renderings()}, indent=2, sort_keys=True) + "\n"
    )
