#!/usr/bin/env bash
# Builds AWS Lambda layers of s3memory from its wheel: one zip per architecture, in the layout
# Lambda expects (python/s3memory/..., python/anthropic/..., ...), from manylinux wheels for the
# Lambda Python runtime, whatever the build machine is. Prints each layer's sizes against
# Lambda's limits.
#
#   scripts/lambda-layer.sh WHEEL OUTDIR
#
# LAYER_PYTHON (default 3.12) is the runtime's Python version, LAYER_ARCHES (default
# "x86_64 arm64") the architectures. PYTHON (default python3) runs pip. LAYER_COMPILER (default
# pythonX.Y of LAYER_PYTHON, or PYTHON when it is that version) compiles the .pyc the layer ships:
# a layer targets one runtime, so its bytecode is compiled for that version (imports then skip
# compiling on each cold start, as Lambda's filesystem is read-only). Without such an interpreter
# the layer ships without .pyc and the script says so. `make lambda-layer`
# builds the wheel first; tests/dist builds a layer for this machine and imports from it.
set -euo pipefail

wheel="${1:?usage: scripts/lambda-layer.sh WHEEL OUTDIR}"
outdir="${2:?usage: scripts/lambda-layer.sh WHEEL OUTDIR}"
py_version="${LAYER_PYTHON:-3.12}"
arches="${LAYER_ARCHES:-x86_64 arm64}"
python="${PYTHON:-python3}"
compiler="${LAYER_COMPILER:-}"
if [ -z "$compiler" ]; then
  if [ "$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" = "$py_version" ]; then
    compiler="$python"
  elif command -v "python$py_version" >/dev/null; then
    compiler="python$py_version"
  fi
fi

name="$(basename "$wheel")"
version="${name#s3memory-}"
version="${version%%-*}"
mkdir -p "$outdir"

for arch in $arches; do
  case "$arch" in # Lambda's names of the architectures; wheels name arm64 aarch64
    x86_64) machine=x86_64 ;;
    arm64) machine=aarch64 ;;
    *) echo "lambda-layer: unknown architecture $arch (x86_64 or arm64)" >&2 && exit 2 ;;
  esac
  # Amazon Linux 2023 (python3.12 and later) has glibc 2.34; Amazon Linux 2 (3.10, 3.11) 2.26.
  platforms=(--platform "manylinux2014_$machine")
  case "$py_version" in
    3.10 | 3.11) ;;
    *) platforms+=(--platform "manylinux_2_28_$machine" --platform "manylinux_2_34_$machine") ;;
  esac
  work="$(mktemp -d)"
  # pip compiles nothing (that would be for pip's Python); the runtime's version does it below.
  "$python" -m pip install --quiet --disable-pip-version-check --no-warn-conflicts --no-compile \
    --target "$work/python" --implementation cp --python-version "$py_version" \
    --only-binary=:all: "${platforms[@]}" "$wheel"
  rm -rf "$work/python/bin" # console scripts with this machine's interpreter in their shebang
  if [ -n "$compiler" ]; then
    # unchecked-hash: valid whatever the files' times (the zip fixes them), and the same bytes each build.
    "$compiler" -m compileall -q -j 0 --invalidation-mode unchecked-hash "$work/python" >/dev/null
  else
    echo "lambda-layer: no Python $py_version here (set LAYER_COMPILER): the layer ships without .pyc" >&2
  fi
  zip_path="$outdir/s3memory-layer-$version-python$py_version-$arch.zip"
  "$python" - "$work" "$zip_path" <<'PY'
import pathlib, sys, zipfile

root, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
files = sorted(p for p in root.rglob("*") if p.is_file())  # with the runtime's .pyc, if compiled
with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
    for path in files:  # fixed timestamps and modes: the same wheels give the same zip
        info = zipfile.ZipInfo(path.relative_to(root).as_posix(), date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(info, path.read_bytes())
unzipped = sum(p.stat().st_size for p in files)
zipped = target.stat().st_size
mb = 1024 * 1024
print(
    f"{target.name}: {zipped / mb:.1f} MB zipped (direct upload limit 50 MB), "
    f"{unzipped / mb:.1f} MB unzipped (limit 250 MB for the function and all its layers)"
)
if zipped > 50 * mb or unzipped > 250 * mb:
    sys.exit(f"{target.name} is over Lambda's limits")
PY
  rm -rf "$work"
done
