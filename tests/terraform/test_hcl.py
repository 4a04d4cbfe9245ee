"""Offline checks of terraform/: HCL parses, inputs and outputs are documented, templates render.

No Terraform CLI is needed. python-hcl2 output differs between major versions (v8 keeps the
quotes of strings and block labels); `_bare` accepts both.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import hcl2
import pytest

from tests.terraform import checkov_rendered
from tests.terraform.deploy import (
    EXAMPLE,
    EXAMPLE_POLICIES,
    POLICIES,
    TERRAFORM,
    example_template_values,
    module_template_values,
)
from tests.terraform.render import TemplateSubsetError, render, render_file, template_variables

TF_FILES = sorted(TERRAFORM.rglob("*.tf"))
TEMPLATE_SETS = [
    (TERRAFORM, POLICIES, module_template_values()),
    (EXAMPLE, EXAMPLE_POLICIES, example_template_values()),
]
ALL_TEMPLATES = [(path, values[path.name]) for _, folder, values in TEMPLATE_SETS for path in folder.glob("*.tftpl")]
# templatefile("${path.module}/policies/<file>", { name = ..., ... })
_TEMPLATEFILE = re.compile(r'templatefile\(\\?"\$\{path\.module\}/policies/([^"\\]+)\\?",\s*\{(.*?)\}\)', re.S)
_OBJECT_KEY = re.compile(r'(?:^|[{,]|\n)\s*"?([A-Za-z_][A-Za-z0-9_]*)"?\s*[=:]')


def _bare(text: Any) -> Any:
    """`"name"` → `name` (python-hcl2 v8 keeps quotes); anything else unchanged."""
    if isinstance(text, str) and len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    return text


def _load(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        return dict(hcl2.load(handle))


def _blocks(path: Path, kind: str) -> dict[str, dict[str, Any]]:
    """{label: body} of every `kind "label" {}` block in one file."""
    found: dict[str, dict[str, Any]] = {}
    for entry in _load(path).get(kind, []):
        for label, body in entry.items():
            found[_bare(label)] = body
    return found


def _module_dirs() -> list[Path]:
    return sorted({path.parent for path in TF_FILES})


def test_the_module_and_example_have_the_terraform_aws_modules_layout() -> None:
    for folder in (TERRAFORM, EXAMPLE):
        names = {path.name for path in folder.iterdir()}
        assert {"versions.tf", "variables.tf", "main.tf", "outputs.tf", "README.md"} <= names, folder
    assert (EXAMPLE / "lambda" / "handler.py").is_file()


@pytest.mark.parametrize("path", TF_FILES, ids=lambda p: str(p.relative_to(TERRAFORM)))
def test_every_tf_file_parses(path: Path) -> None:
    parsed = _load(path)
    assert set(parsed) - {"__comments__"}, f"{path} parsed to nothing"


@pytest.mark.parametrize("folder", _module_dirs(), ids=lambda p: str(p.relative_to(TERRAFORM)) or "module")
def test_every_variable_has_a_description_and_a_type(folder: Path) -> None:
    variables = _blocks(folder / "variables.tf", "variable")
    assert variables
    for name, body in variables.items():
        assert isinstance(_bare(body.get("description")), str), f"variable {name} has no description"
        assert _bare(body["description"]).strip(), f"variable {name} has an empty description"
        assert body.get("type"), f"variable {name} has no type"


@pytest.mark.parametrize("folder", _module_dirs(), ids=lambda p: str(p.relative_to(TERRAFORM)) or "module")
def test_every_output_has_a_description(folder: Path) -> None:
    outputs = _blocks(folder / "outputs.tf", "output")
    assert outputs
    for name, body in outputs.items():
        assert isinstance(_bare(body.get("description")), str), f"output {name} has no description"
        assert _bare(body["description"]).strip(), f"output {name} has an empty description"


def test_the_module_declares_the_inputs_the_readme_documents() -> None:
    variables = _blocks(TERRAFORM / "variables.tf", "variable")
    readme = (TERRAFORM / "README.md").read_text(encoding="utf-8")
    for name in variables:
        assert f"| `{name}` |" in readme, f"variable {name} is missing from the README inputs table"
    for name in _blocks(TERRAFORM / "outputs.tf", "output"):
        assert f"| `{name}` |" in readme, f"output {name} is missing from the README outputs table"


def test_prefix_defaults_to_agents_and_is_validated() -> None:
    prefix = _blocks(TERRAFORM / "variables.tf", "variable")["prefix"]
    assert _bare(prefix["default"]) == "agents/"
    assert prefix["validation"], "prefix must be validated: a '*' in it would widen every agent's grant"


def test_prefix_validation_regex_refuses_iam_wildcards() -> None:
    condition = _blocks(TERRAFORM / "variables.tf", "variable")["prefix"]["validation"][0]["condition"]
    pattern = re.search(r'regex\(\\?"(.+?)\\?", var\.prefix\)', condition)
    assert pattern is not None, condition
    regex = re.compile(pattern.group(1).replace("\\\\", "\\"))
    accepted = ["", "agents/", "team-a/agents/", "a_b.c/"]
    refused = ["agents", "/agents/", "agents//", "*/", "agents/*/", "a?/", "${x}/", ".hidden/", "a b/"]
    assert [p for p in accepted if regex.fullmatch(p)] == accepted
    assert [p for p in refused if regex.fullmatch(p)] == []


@pytest.mark.parametrize(("folder", "policies", "values"), TEMPLATE_SETS, ids=["module", "lambda-agent"])
def test_main_tf_renders_each_template_with_exactly_its_variables(
    folder: Path, policies: Path, values: dict[str, dict[str, str]]
) -> None:
    """The .tf files (main.tf, retention.tf), the test values (deploy.py) and each template agree on the names."""
    source = json.dumps([_load(path) for path in sorted(folder.glob("*.tf"))])
    calls = {name: set(_OBJECT_KEY.findall(body)) for name, body in _TEMPLATEFILE.findall(source)}
    templates = {path.name for path in policies.glob("*.tftpl")}
    assert set(calls) == templates == set(values)
    for name in templates:
        needed = template_variables((policies / name).read_text(encoding="utf-8"))
        assert calls[name] == needed, name
        assert set(values[name]) == needed, name


@pytest.mark.parametrize(("path", "values"), ALL_TEMPLATES, ids=lambda x: getattr(x, "name", ""))
def test_every_policy_template_renders_to_a_policy_document(path: Path, values: dict[str, str]) -> None:
    document = json.loads(render_file(path, values))
    assert document["Version"] == "2012-10-17"
    sids = [statement["Sid"] for statement in document["Statement"]]
    assert len(sids) == len(set(sids)), f"duplicate Sid in {path.name}"
    for statement in document["Statement"]:
        assert statement["Effect"] in ("Allow", "Deny")
        assert ("Action" in statement) != ("NotAction" in statement)
    text = json.dumps(document)
    assert "${" not in text.replace("${aws:PrincipalTag/s3memory-agent}", ""), "unrendered interpolation"


def test_no_policy_names_a_wildcard_principal_except_the_tls_denies() -> None:
    for path, values in ALL_TEMPLATES:
        for statement in json.loads(render_file(path, values))["Statement"]:
            if statement.get("Principal") == "*":
                assert statement["Effect"] == "Deny", (path.name, statement["Sid"])
                assert path.name in (
                    "bucket.json.tftpl",
                    "keystore-bucket.json.tftpl",
                    "fleet-results-bucket.json.tftpl",
                ), (
                    path.name,
                    statement["Sid"],
                )
                assert statement["Sid"] in ("DenyInsecureTransport", "DenyTlsOlderThan12"), (
                    path.name,
                    statement["Sid"],
                )


# -- the renderer itself ---------------------------------------------------------------------


def test_renderer_substitutes_names_and_unescapes_policy_variables() -> None:
    text = '{"a": "${x}", "b": "${ y }", "c": "$${aws:PrincipalTag/t}", "d": "%%{x}", "e": "$5 and 50%"}'
    assert render(text, {"x": "1", "y": "two", "unused": "z"}) == (
        '{"a": "1", "b": "two", "c": "${aws:PrincipalTag/t}", "d": "%{x}", "e": "$5 and 50%"}'
    )
    assert template_variables(text) == {"x", "y"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("%{ if x }a%{ endif }", "line 1: template directives (%{...}) are not supported"),
        ('a\n"${upper(x)}"', "line 2: only ${name} interpolation is supported, got '${upper(x)}\"'"),
        ("${~ x}", "line 1: only ${name} interpolation is supported, got '${~ x}'"),
        ("${x.y}", "line 1: only ${name} interpolation is supported, got '${x.y}'"),
        ("${x", "line 1: only ${name} interpolation is supported, got '${x'"),
        ("$$${x}", "line 1: a run of three or more $ or % before { is ambiguous"),
    ],
)
def test_renderer_refuses_syntax_outside_its_subset(text: str, message: str) -> None:
    with pytest.raises(TemplateSubsetError) as raised:
        render(text, {"x": "1"})
    assert str(raised.value) == message


def test_renderer_refuses_missing_and_non_string_values() -> None:
    with pytest.raises(KeyError, match="vars map does not contain key 'x'"):
        render("${x}", {})
    with pytest.raises(TypeError, match="variable 'x' must be a str, got list"):
        render("${x}", {"x": ["a"]})  # type: ignore[dict-item]


def test_no_allow_statement_grants_a_wildcard_action() -> None:
    """Identity and trust policies name every action; the key policies' one exception is the
    account-root statement every KMS key policy needs to let IAM policies apply at all."""
    for path, values in ALL_TEMPLATES:
        for statement in json.loads(render_file(path, values))["Statement"]:
            if statement["Effect"] != "Allow":
                continue
            actions = statement["Action"]
            for action in [actions] if isinstance(actions, str) else actions:
                if "*" in action or "?" in action:
                    assert path.name in ("data-key.json.tftpl", "sse-key.json.tftpl"), (path.name, action)
                    assert statement["Sid"] == "EnableIamPoliciesOfThisAccount", (path.name, statement["Sid"])
                    assert statement["Principal"] == {"AWS": "arn:aws:iam::123456789012:root"}


def test_checkov_rendered_covers_every_policy_template(tmp_path: Path) -> None:
    assert set(checkov_rendered.RESOURCES) == {path.name for path, _ in ALL_TEMPLATES}
    assert checkov_rendered.main(["checkov_rendered", str(tmp_path)]) == 0
    parsed = _load(tmp_path / "rendered_policies.tf")
    labels = {_bare(label) for entry in parsed["resource"] for body in entry.values() for label in body}
    assert labels == {path.name.removesuffix(".json.tftpl").replace("-", "_") for path, _ in ALL_TEMPLATES}


def test_the_session_tag_key_is_the_same_in_library_module_and_templates() -> None:
    from s3memory.storage.sts import AGENT_TAG_KEY

    locals_ = {k: v for entry in _load(TERRAFORM / "main.tf")["locals"] for k, v in entry.items()}
    assert _bare(locals_["agent_tag_key"]) == AGENT_TAG_KEY == "s3memory-agent"
    for path, _ in ALL_TEMPLATES:
        text = path.read_text(encoding="utf-8")
        tag_keys = set(re.findall(r"(?:PrincipalTag|RequestTag)/([A-Za-z0-9_.:/=+@-]+?)[}\"]", text))
        assert tag_keys <= {AGENT_TAG_KEY}, (path.name, tag_keys)


# -- the keystore bucket (branch keys) --------------------------------------------------------

# Resources that would copy, expire or move objects of a bucket: none may act on the keystore
# bucket, or a branch key could outlive `s3memory shred` (a replica) or vanish while memories
# still need it (an expiry).
_COPYING_OR_EXPIRING = (
    "aws_s3_bucket_lifecycle_configuration",
    "aws_s3_bucket_replication_configuration",
    "aws_s3_bucket_intelligent_tiering_configuration",
    "aws_s3_bucket_inventory",
    "aws_backup_selection",
    "aws_backup_plan",
    "aws_s3control_multi_region_access_point",
)
# What the keystore bucket's resources must share with the memory bucket's, once the bucket
# reference is swapped.
_HARDENING = (
    "aws_s3_bucket_public_access_block",
    "aws_s3_bucket_ownership_controls",
    "aws_s3_bucket_versioning",
    "aws_s3_bucket_server_side_encryption_configuration",
)


def _resources(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """{(type, label): body} of every `resource "type" "label" {}` block in one file."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for entry in _load(path).get("resource", []):
        for kind, labelled in entry.items():
            for label, body in labelled.items():
                found[(_bare(kind), _bare(label))] = body
    return found


def _without_comments(body: Any) -> Any:
    if isinstance(body, dict):
        return {k: _without_comments(v) for k, v in body.items() if k != "__comments__"}
    if isinstance(body, list):
        return [_without_comments(v) for v in body]
    return body


MODULE_RESOURCES = {key: body for path in sorted(TERRAFORM.glob("*.tf")) for key, body in _resources(path).items()}


def test_the_keystore_bucket_has_no_lifecycle_rule_and_is_replicated_only_to_the_replica() -> None:
    """No rule may expire a branch key; the only copies of the keystore are the replica region's
    (issue 36: replica_region), which exist only when it is set and replicate with the keystore's
    own rules, never a lifecycle rule (shred must then run in both regions: SECURITY.md)."""
    keystore = MODULE_RESOURCES[("aws_s3_bucket", "keystore")]
    assert not {"lifecycle_rule", "replication_configuration", "acceleration_status"} & set(keystore)
    for (kind, label), body in MODULE_RESOURCES.items():
        if kind in _COPYING_OR_EXPIRING and kind != "aws_s3_bucket_replication_configuration":
            assert "keystore" not in json.dumps(_without_comments(body)), (kind, label)
    lifecycles = sorted(label for kind, label in MODULE_RESOURCES if kind == "aws_s3_bucket_lifecycle_configuration")
    assert lifecycles == ["fleet_results", "replica", "this"]  # the memory bucket's, its replica's, the fleet results'
    results_rule = MODULE_RESOURCES[("aws_s3_bucket_lifecycle_configuration", "fleet_results")]
    assert results_rule["bucket"] == "${aws_s3_bucket.fleet_results[0].id}"
    replications = {label: body for (kind, label), body in MODULE_RESOURCES.items()
                    if kind == "aws_s3_bucket_replication_configuration"}  # fmt: skip
    assert sorted(replications) == ["keystore", "memory", "replica_keystore", "replica_memory"]
    for body in replications.values():
        assert body["count"] == "${local.replicated ? 1 : 0}"
    assert replications["keystore"]["bucket"] == "${aws_s3_bucket.keystore.id}"
    assert replications["replica_keystore"]["bucket"] == "${aws_s3_bucket.replica_keystore[0].id}"
    for path in TF_FILES:  # the examples (or anything else in terraform/) add none
        if path.parent != TERRAFORM:
            for kind, label in _resources(path):
                assert kind not in ("aws_s3_bucket_replication_configuration", "aws_backup_selection"), (path, label)


def test_the_memory_lifecycle_rule_never_names_the_keystore_bucket() -> None:
    lifecycle = MODULE_RESOURCES[("aws_s3_bucket_lifecycle_configuration", "this")]
    assert lifecycle["bucket"] == "${aws_s3_bucket.this.id}"
    assert "keystore" not in json.dumps(_without_comments(lifecycle))
    assert MODULE_RESOURCES[("aws_s3_bucket", "this")]["bucket"] == "${var.bucket_name}"


def test_memory_expiration_days_says_branch_keys_are_out_of_its_reach() -> None:
    description = _bare(_blocks(TERRAFORM / "variables.tf", "variable")["memory_expiration_days"]["description"])
    assert "branch keys live in the keystore bucket" in description
    assert "out of its reach" in description


@pytest.mark.parametrize("kind", _HARDENING)
def test_the_keystore_bucket_is_hardened_like_the_memory_bucket(kind: str) -> None:
    memory = json.dumps(_without_comments(MODULE_RESOURCES[(kind, "this")]))
    keystore = json.dumps(_without_comments(MODULE_RESOURCES[(kind, "keystore")]))
    assert keystore == memory.replace("${aws_s3_bucket.this.id}", "${aws_s3_bucket.keystore.id}")
    assert MODULE_RESOURCES[(kind, "keystore")]["bucket"] == "${aws_s3_bucket.keystore.id}"


def test_the_keystore_bucket_has_its_own_tls_only_policy_and_optional_logging() -> None:
    bucket_policy = MODULE_RESOURCES[("aws_s3_bucket_policy", "keystore")]
    assert bucket_policy["bucket"] == "${aws_s3_bucket.keystore.id}"
    assert bucket_policy["policy"] == "${local.keystore_bucket_policy}"
    assert bucket_policy["depends_on"] == ["${aws_s3_bucket_public_access_block.keystore}"]
    logging = MODULE_RESOURCES[("aws_s3_bucket_logging", "keystore")]
    assert logging["bucket"] == "${aws_s3_bucket.keystore.id}"
    assert logging["count"] == MODULE_RESOURCES[("aws_s3_bucket_logging", "this")]["count"]


def test_the_keystore_bucket_name_defaults_to_the_bucket_name_with_keys() -> None:
    locals_ = {k: v for entry in _load(TERRAFORM / "main.tf")["locals"] for k, v in entry.items()}
    assert locals_["keystore_bucket_name"] == '${coalesce(var.keystore_bucket_name, "${var.bucket_name}-keys")}'
    keystore = MODULE_RESOURCES[("aws_s3_bucket", "keystore")]
    assert keystore["bucket"] == "${local.keystore_bucket_name}"
    (precondition,) = keystore["lifecycle"][0]["precondition"]
    assert "length(local.keystore_bucket_name) <= 63" in precondition["condition"]
    variable = _blocks(TERRAFORM / "variables.tf", "variable")["keystore_bucket_name"]
    assert variable["default"] is None
    assert variable["validation"], "keystore_bucket_name must be validated as an S3 bucket name"


def test_the_keystore_bucket_name_validation_accepts_only_bucket_names() -> None:
    condition = _blocks(TERRAFORM / "variables.tf", "variable")["keystore_bucket_name"]["validation"][0]["condition"]
    pattern = re.search(r'regex\(\\?"(.+?)\\?", var\.keystore_bucket_name\)', condition)
    assert pattern is not None, condition
    regex = re.compile(pattern.group(1).replace("\\\\", "\\"))
    accepted = ["acme-s3memory-keys", "a.b-c", "k" * 63]
    refused = ["Acme-Keys", "ab", "k" * 64, "-keys", "keys-", "a_b"]
    assert [name for name in accepted if regex.fullmatch(name)] == accepted
    assert [name for name in refused if regex.fullmatch(name)] == []


def test_the_environment_and_the_lambda_example_pass_the_keystore_bucket() -> None:
    outputs = _blocks(TERRAFORM / "outputs.tf", "output")
    environment = outputs["environment"]["value"]
    assert "S3MEMORY_KEYSTORE_BUCKET = aws_s3_bucket.keystore.id," in environment, environment
    assert outputs["keystore_bucket_name"]["value"] == "${aws_s3_bucket.keystore.id}"
    assert outputs["keystore_bucket_arn"]["value"] == "${aws_s3_bucket.keystore.arn}"
    function = _resources(EXAMPLE / "main.tf")[("aws_lambda_function", "agent")]
    variables = function["environment"][0]["variables"]
    assert variables.startswith("${merge(module.s3memory.environment,"), variables
    handler = (EXAMPLE / "lambda" / "handler.py").read_text(encoding="utf-8")
    assert 'keystore_bucket=os.environ.get("S3MEMORY_KEYSTORE_BUCKET") or None' in handler
    assert "S3MEMORY_NAMES = var.file_names}" in environment, environment
    assert 'names="encrypted" if os.environ.get("S3MEMORY_NAMES") == "encrypted" else "plain",' in handler
