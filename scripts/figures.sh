#!/usr/bin/env bash
# Regenerate docs/figures: one figure of each kind cellbench plots, from small
# runs of the examples (a minute or two on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
out=docs/figures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The lan-buffers grid (10 replications of every cell).
cellbench reproduce lan-buffers --replications 10 --out "$tmp/lan" > /dev/null
cellbench plot "$tmp/lan" --kind buffer-grid --compare published -o $out/buffer-grid.png
cellbench plot "$tmp/lan" --kind buffer-surface -o $out/buffer-surface.png

# Throughput against window (send = receive buffer), and against message size.
cellbench run examples/window.netspec --out "$tmp/win" > /dev/null
cellbench plot "$tmp/win" --kind window -o $out/window.png

# The wan-window study beside its published points, window/RTT and the link rate.
cellbench reproduce wan-window --out "$tmp/wan" > /dev/null
cellbench plot "$tmp/wan" --kind window -o $out/wan-window.png
cellbench run examples/lan-buffers.netspec --set snd=52428 --set rcv=52428 --set nbytes=4M \
    --set sender.type.blocksize=1K,2K,4K,8K,16K,32K,64K --replications 2 --out "$tmp/msg" > /dev/null
cellbench plot "$tmp/msg" --kind message-size -o $out/message-size.png

# Carried against offered load: three constant-rate streams into one port.
cellbench run examples/offered-load.netspec --out "$tmp/load" > /dev/null
cellbench plot "$tmp/load" --kind offered-load -o $out/offered-load.png

# A lock-step, seen as a time-sequence graph (16K send, 24K receive buffers).
cellbench run examples/lan-buffers.netspec --set snd=16K --set rcv=24K --set nbytes=2M \
    --replications 1 --trace --out "$tmp/ts" > /dev/null
cellbench plot "$tmp/ts" --kind time-sequence -o $out/time-sequence.png

# Time series (--series): three streams overloading one port; cwnd of the first, the queue.
cellbench run examples/offered-load.netspec --set period=1000 --replications 1 --series \
    --out "$tmp/series" > /dev/null
cellbench plot "$tmp/series" --kind cwnd -o $out/cwnd.png
cellbench plot "$tmp/series" --kind queue -o $out/queue.png

# A cell tester's inter-arrival times: europe-vp's tester part, drivers 2.2.9 and 2.3.0.
cellbench reproduce europe-vp --part tester --out "$tmp/tester" > /dev/null
cellbench plot "$tmp/tester" --kind iat --run 0 -o $out/iat-2.2.9.png
cellbench plot "$tmp/tester" --kind iat --run 1 -o $out/iat-2.3.0.png

# cellbench report: the lan-buffers result as a page, as headless Chromium renders it
# from disk (Debian's chromium; scripts/test.sh installs it).
cellbench report "$tmp/lan" -o "$tmp/report.html" --title "cellbench reproduce lan-buffers" 2> /dev/null
chromium --headless --disable-gpu --no-sandbox --hide-scrollbars --window-size=1400,1700 \
    --screenshot="$PWD/$out/report.png" "file://$tmp/report.html" 2> /dev/null
