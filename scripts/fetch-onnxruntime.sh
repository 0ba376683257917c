#!/usr/bin/env bash
# Fetch libonnxruntime.so (CPU, linux x86_64) for pkg/model/ort.
#
# The PyPI wheel onnxruntime==1.24.1 (manylinux_2_28_x86_64) carries a
# self-contained onnxruntime/capi/libonnxruntime.so.1.24.1. We download the
# wheel with pip (no install, no dependencies) and unzip only that file into
# third_party/onnxruntime/libonnxruntime.so. Idempotent: does nothing if the
# library is already there.
#
# Usage: scripts/fetch-onnxruntime.sh [DEST_DIR]   (default third_party/onnxruntime)
set -euo pipefail

ORT_VERSION="${ORT_VERSION:-1.24.1}"
top="$(cd "$(dirname "$0")/.." && pwd)"
dest="${1:-$top/third_party/onnxruntime}"
lib="$dest/libonnxruntime.so"

if [ -s "$lib" ]; then
	echo "onnxruntime: $lib already present"
	exit 0
fi

pip_cmd=""
for c in pip3 pip "python3 -m pip"; do
	if $c --version >/dev/null 2>&1; then pip_cmd="$c"; break; fi
done
[ -n "$pip_cmd" ] || { echo "fetch-onnxruntime: pip is required (apt-get install python3-pip)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
$pip_cmd download --no-deps --only-binary=:all: \
	--platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp \
	"onnxruntime==$ORT_VERSION" -d "$tmp" >&2
whl="$(ls "$tmp"/onnxruntime-"$ORT_VERSION"-*.whl | head -n 1)"
member="onnxruntime/capi/libonnxruntime.so.$ORT_VERSION"

mkdir -p "$dest"
if command -v unzip >/dev/null 2>&1; then
	unzip -p "$whl" "$member" >"$lib.tmp"
else # pip is there, so Python's stdlib zip tool is too
	python3 -m zipfile -e "$whl" "$tmp/x"
	mv "$tmp/x/$member" "$lib.tmp"
fi
[ -s "$lib.tmp" ] || { echo "fetch-onnxruntime: $member not found in $whl" >&2; rm -f "$lib.tmp"; exit 1; }
mv "$lib.tmp" "$lib"
echo "onnxruntime: wrote $lib ($(wc -c <"$lib") bytes)"
