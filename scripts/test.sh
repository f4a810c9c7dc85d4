#!/usr/bin/env bash
# Set up and run every test: lints, the Rust core's tests, the Python tests.
# Usage: bash scripts/test.sh   (from anywhere; installs what it needs with pip)
set -euo pipefail
cd "$(dirname "$0")/.."

# tshark decodes the pcap files cellbench writes (tests/test_pcap_tshark.py, README's
# example); the tests require it rather than skip.
if ! command -v tshark >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "== install tshark (Debian package)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null
    else
        echo "scripts/test.sh: tshark is required: install Debian's tshark (or run as root)" >&2
        exit 2
    fi
fi

# ip and tc build the real engine's test network (tests/test_real_netns.py, as root).
if ! command -v ip >/dev/null 2>&1 || ! command -v tc >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "== install iproute2 (Debian package)"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null
    else
        echo "scripts/test.sh: ip and tc are required: install Debian's iproute2" >&2
        exit 2
    fi
fi

echo "== install (editable, with test extras)"
python3 -m pip install -q --disable-pip-version-check -e ".[test]"

echo "== lint: rustfmt, clippy (warnings are errors), ruff"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
python3 -m ruff check python tests
python3 -m ruff format --check python tests

echo "== cargo test (core)"
cargo test -p cellbench-core --quiet

echo "== pytest"
python3 -m pytest -q
