#!/usr/bin/env bash
# Speed with many connections, side by side with ns-3 in one run: N parallel
# 1 MB TCP transfers from one host to another through one switch port
# (SPARCstation IPC, SunOS 4.1.1, 256-cell port) for N = 1, 10, 100, 1000, and
# 10,000 for cellbench alone; then N sender hosts into one receiver; then the whole
# lan-buffers study (5000 transfers of 32 MB) on 1 and 2 workers, and the speed-up.
# ns-3 runs scripts/ns3/ns3_flows.cc (packet level, same sizes), built with
# scripts/ns3/build-ns3-anchor.sh from Debian's libns3-dev when installable.
# Usage: bash scripts/bench.sh   (CELLBENCH_NS3_DIR=DIR to take the anchor from elsewhere;
# CELLBENCH_SHARED=DIR, the older name, still means DIR/bench)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${CELLBENCH_SHARED:-}" ]; then
  ns3dir=${CELLBENCH_NS3_DIR:-$CELLBENCH_SHARED/bench}
else
  ns3dir=${CELLBENCH_NS3_DIR:-scripts/ns3}
fi

cargo build --release --quiet -p cellbench-core --example flows
flows=target/release/examples/flows

ns3=""
anchor=$ns3dir/build-ns3-anchor.sh
if [ -f "$anchor" ]; then
  # libns3-dev's link line names libgslcblas.so, which only libgsl-dev ships.
  if [ "$(id -u)" = 0 ] && ! dpkg -s libgsl-dev >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgsl-dev pkg-config >/dev/null 2>&1 || true
  fi
  if [ target/ns3_flows -nt "$ns3dir/ns3_flows.cc" ] ||
    bash "$anchor" target/ns3_flows >/dev/null 2>target/ns3_build.log; then
    ns3=target/ns3_flows
  else
    echo "ns-3 anchor not built (libns3-dev not installable here?): see target/ns3_build.log"
  fi
else
  echo "ns-3 anchor not found at $anchor: cellbench alone"
fi

field() { # field NAME LINE: the value of NAME=... in a key=value line
  tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"
}

echo
echo "N parallel 1 MB transfers, one host to another (sparc-ipc, 256-cell port)"
echo "(seconds per run of the simulation; CPU time beside wall time, since the machine may be"
echo " shared; cpu_ms/1: CPU ms per transfer; ns-3's CPU time is the whole process's, set-up included)"
printf '%6s | %9s %9s %10s %8s %8s | %8s %8s %9s %8s | %7s %7s\n' \
  N wall_s cpu_s events us/event cpu_ms/1 ns3_wall ns3_cpu ns3_evts us/event ns3/cb cpu/cpu
per1=""
for n in 1 10 100 1000 10000; do
  line=$($flows one-pair "$n")
  wall=$(field wall_s "$line")
  cpu=$(field cpu_s "$line")
  per=$(awk -v c="$cpu" -v n="$n" 'BEGIN { printf "%.3f", c * 1e3 / n }')
  [ -n "$per1" ] || per1=$per
  nw=- nc=- ne=- nupe=- ratio=- cratio=-
  if [ -n "$ns3" ] && [ "$n" -le 1000 ]; then
    TIMEFORMAT=%U
    { nc=$( { time $ns3 --flows="$n" >target/ns3_out.txt; } 2>&1 ); }
    nl=$(cat target/ns3_out.txt)
    nw=$(awk -v w="$(field wall_s "$nl")" 'BEGIN { printf "%.4f", w }')
    ne=$(field events "$nl")
    nupe=$(awk -v w="$nw" -v e="$ne" 'BEGIN { printf "%.3f", w * 1e6 / e }')
    ratio=$(awk -v a="$nw" -v b="$wall" 'BEGIN { printf "%.1fx", a / b }')
    cratio=$(awk -v a="$nc" -v b="$cpu" 'BEGIN { printf "%.1fx", a / b }')
  fi
  printf '%6s | %9s %9s %10s %8s %8s | %8s %8s %9s %8s | %7s %7s\n' "$n" "$wall" "$cpu" \
    "$(field events "$line")" "$(field us_per_event "$line")" "$per" "$nw" "$nc" "$ne" "$nupe" \
    "$ratio" "$cratio"
  if [ "$n" = 1000 ]; then
    echo "       CPU per transfer at N = 1000: $(awk -v a="$per" -v b="$per1" 'BEGIN { printf "%.1f", a / b }')x that at N = 1"
  fi
  if [ "$n" = 10000 ]; then
    echo "       10,000: $(field completed "$line") completed, peak memory $(field peak_rss_mb "$line") MB"
  fi
done

echo
echo "N sender hosts into one receiver (an hour's limit; SunOS backs off hard at the 256-cell port)"
printf '%6s | %8s %8s %10s %8s %10s\n' N wall_s cpu_s events us/event completed
for n in 1 10 100 1000; do
  line=$($flows many-hosts "$n")
  printf '%6s | %8s %8s %10s %8s %10s\n' "$n" "$(field wall_s "$line")" "$(field cpu_s "$line")" \
    "$(field events "$line")" "$(field us_per_event "$line")" "$(field completed "$line")"
done

echo
echo "The lan-buffers study: cellbench reproduce lan-buffers --workers W (100 buffer pairs x 50"
echo "replications of a 32 MB ttcp transfer, 5000 runs; the whole command: start-up, runs, table)"
if python3 -c "import cellbench._native" 2>/dev/null; then
  python3 scripts/bench_study.py
else
  echo "cellbench is not installed here (pip install .): skipped"
fi
