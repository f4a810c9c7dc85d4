#!/usr/bin/env bash
# Set up and run every test: lints, the Rust core's tests, the Python tests.
# Usage: bash scripts/test.sh   (from anywhere; installs what it needs with pip)
set -euo pipefail
cd "$(dirname "$0")/.."

# require PACKAGE WHY COMMAND...: install a Debian package the tests need when one of
# its commands is missing (as root), or say it is required; the tests never skip.
require() {
    local package=$1 why=$2
    shift 2
    for cmd in "$@"; do
        command -v "$cmd" >/dev/null 2>&1 && continue
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            echo "== install $package (Debian package)"
            apt-get update -qq
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null
            return
        fi
        echo "scripts/test.sh: $* required ($why): install Debian's $package (or run as root)" >&2
        exit 2
    done
}
# tshark decodes the pcap files cellbench writes (tests/test_pcap_tshark.py, README's example).
require tshark "pcap decoding" tshark
# ip and tc build the real engine's test network (tests/test_real_netns.py, as root).
require iproute2 "namespace tests" ip tc
# A real browser loads cellbench report's pages from disk (tests/test_report.py).
require chromium "the report page in a browser" chromium

echo "== install (editable, with test extras; a first build compiles the Rust core: a minute or more)"
python3 -m pip install -q --disable-pip-version-check -e ".[test]"

echo "== lint: rustfmt, clippy (warnings are errors), ruff"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
python3 -m ruff check python tests
python3 -m ruff format --check python tests

echo "== cargo test (core)"
cargo test -p cellbench-core --quiet

# Tests run on every core (pytest-xdist), but those that build namespaces, daemons or
# an emulated network (mark system) and those that bound a wall-clock time (mark
# alone), which run afterwards one at a time (tests/conftest.py).
# The native module is built once, by the pip install above; no test builds it.
echo "== pytest (parallel: -n ${CELLBENCH_TEST_WORKERS:-auto})"
python3 -m pytest -q -n "${CELLBENCH_TEST_WORKERS:-auto}" -m "not system and not alone"
echo "== pytest (one at a time: namespaces, daemons, wall-clock bounds)"
python3 -m pytest -q -m "system or alone"
