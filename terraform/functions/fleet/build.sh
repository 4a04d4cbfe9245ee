#!/usr/bin/env bash
# Builds build/fleet.zip, the deployment package of the module's fleet workers
# (fleet_package_path): handler.py plus s3memory and its dependencies, as wheels for the
# Lambda runtime (python3.12, x86_64), whatever the build machine is. Same recipe as
# examples/lambda-agent/build.sh. Upload the zip to S3 to use fleet_package_s3 instead.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
out="$here/build"

rm -rf "$out"
mkdir -p "$out/wheels" "$out/package"
# Build the s3memory wheel from a copy, so setuptools leaves no build/ in the repository.
src="$(mktemp -d)"
trap 'rm -rf "$src"' EXIT
cp -R "$repo/pyproject.toml" "$repo/README.md" "$repo/s3memory" "$src/"
python3 -m pip wheel --quiet --no-deps --wheel-dir "$out/wheels" "$src"
python3 -m pip install --quiet --no-warn-conflicts --target "$out/package" \
  --platform manylinux2014_x86_64 --implementation cp --python-version 3.12 --only-binary=:all: \
  "$out"/wheels/s3memory-*.whl
cp "$here/handler.py" "$out/package/"
python3 - "$out/package" "$out/fleet.zip" <<'PY'
import pathlib, sys, zipfile
root, target = pathlib.Path(sys.argv[1]), sys.argv[2]
with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            archive.write(path, path.relative_to(root).as_posix())
PY
echo "built $out/fleet.zip ($(du -h "$out/fleet.zip" | cut -f1))"
