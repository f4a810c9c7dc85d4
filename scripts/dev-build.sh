#!/usr/bin/env bash
# Rebuild the native module in place for an editable install (after `pip install -e .`).
# Honours CARGO_TARGET_DIR so several builds can run side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
echo "dev-build: cargo build --release of the native module (fat LTO: a clean build takes a minute or more)" >&2
cargo build -q -p cellbench-py --release
so=python/cellbench/$(python3 -c 'import sysconfig; print("_native" + sysconfig.get_config_var("EXT_SUFFIX"))')
cp "$target/release/lib_native.so" "$so.tmp.$$" && mv "$so.tmp.$$" "$so"
