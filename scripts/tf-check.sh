#!/usr/bin/env bash
# Offline checks of terraform/ for `make test` (no Terraform CLI or AWS account needed):
#   1. checkov on the module and the Lambda example;
#   2. checkov on the rendered policy documents (checkov cannot evaluate templatefile(), so
#      without this its policy-content checks would see nothing);
#   3. the Node IAM evaluator that tests/terraform/test_policies.py drives.
# checkov lives in its own venv (.venv-checkov): it pins its own copy of the `hcl2` module,
# which clashes with python-hcl2 in the project venv. Idempotent: installs only what is
# missing or out of date. Any failed check fails the script; skips must be inline
# `# checkov:skip=ID:reason` comments in the .tf files.
set -euo pipefail
cd "$(dirname "$0")/.."

CHECKOV_VERSION="3.3.30"
CHECKOV_VENV=".venv-checkov"
SIM_DIR="tests/terraform/sim"

installed_checkov() {
  "$CHECKOV_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("checkov"))' 2>/dev/null || true
}

if [ "$(installed_checkov)" != "$CHECKOV_VERSION" ]; then
  echo "tf-check: installing checkov $CHECKOV_VERSION into $CHECKOV_VENV"
  python3 -m venv "$CHECKOV_VENV"
  "$CHECKOV_VENV/bin/python" -m pip install -qq --disable-pip-version-check "checkov==$CHECKOV_VERSION"
fi

if [ ! -f "$SIM_DIR/node_modules/.package-lock.json" ] \
  || [ "$SIM_DIR/package-lock.json" -nt "$SIM_DIR/node_modules/.package-lock.json" ]; then
  echo "tf-check: installing the IAM policy evaluator (npm ci in $SIM_DIR)"
  npm ci --prefix "$SIM_DIR" --no-audit --no-fund --loglevel=error
fi

export CKV_PARSE_ERROR_FAIL=true
checkov() {
  "$CHECKOV_VENV/bin/checkov" --framework terraform --compact --quiet --skip-download "$@"
}

echo "tf-check: checkov -d terraform"
checkov -d terraform

rendered="$(mktemp -d)"
trap 'rm -rf "$rendered"' EXIT
python3 -m tests.terraform.checkov_rendered "$rendered"
echo "tf-check: checkov on the rendered policy documents"
checkov -d "$rendered"

if command -v terraform >/dev/null 2>&1; then
  echo "tf-check: terraform fmt -check"
  terraform fmt -check -recursive -diff terraform
else
  echo "tf-check: no terraform CLI on PATH; terraform fmt -check not run"
fi
echo "tf-check: ok"
