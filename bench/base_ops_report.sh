#!/usr/bin/env bash
# The issue's must-show figures for the base ops: 64 MiB f32 tensors, 1 and 2
# threads, min/median and the fraction of the copy bandwidth measured in the
# same process (`opsnn bench` measures it right after timing the op).
#   bench/base_ops_report.sh [path/to/opsnn] [repeats]
set -euo pipefail
opsnn=${1:-build/release/tools/opsnn/opsnn}
reps=${2:-3}
cases=(
  "add shape=16777216"
  "gelu shape=16777216"
  "silu shape=16777216"
  "softmax rows=16384,cols=1024"
  "layer_norm rows=16384,cols=1024"
  "rms_norm rows=16384,cols=1024"
)
printf "%-11s %7s %9s %10s %8s %9s %9s\n" op threads min_ms median_ms GB/s copyGB/s fraction
for c in "${cases[@]}"; do
  read -r op kase <<< "$c"
  for t in 1 2; do
    for r in $(seq "$reps"); do
      "$opsnn" bench --op "$op" --case "$kase" --threads "$t" --json
    done | python3 -c '
import json, sys
dec = json.JSONDecoder(); s = sys.stdin.read(); i = 0; runs = []
while i < len(s):
    while i < len(s) and s[i].isspace(): i += 1
    if i >= len(s): break
    d, i = dec.raw_decode(s, i); runs.append(d)
best = min(runs, key=lambda d: d["min_ms"])
med = sorted(d["median_ms"] for d in runs)[len(runs) // 2]
print("%-11s %7d %9.3f %10.3f %8.1f %9.1f %9.2f" % (best["op"], best["threads"], best["min_ms"], med,
      best["gbps"], best["limit"], best["limit_fraction"]))'
  done
done
