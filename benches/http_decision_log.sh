#!/usr/bin/env bash
# The decision log's and the shadow rules' cost over HTTP: benches/http.sh without either, with
# `--decision-log FILE`, and with `--shadow DIR` (a copy of the rules with one search phrase list
# taken out, so that some decisions differ), in turn, ROUNDS times (default 4), so that all see
# the same machine; the order rotates each round, so none always runs first. Prints each run's
# decisions/s, p99 (ms) and server CPU a request (µs), then the medians, what the logged runs
# wrote and dropped, and what the shadow decided and dropped.
# Usage: benches/http_decision_log.sh [MODEL] [SECONDS] [CONNECTIONS]
# RUNS="plain log shadow" (the default) chooses which runs a round has; log-normal and
# shadow-normal are the same with `--background-priority normal` (the writer and the shadow
# take a request's share of the CPU instead of only what requests leave).
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-none}
secs=${2:-10}
conns=${3:-16}
rounds=${ROUNDS:-4}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() { # label, extra serve args
  local out
  out=$(SERVE_ARGS="$2" benches/http.sh "$model" "$secs" "$conns")
  local rps p99
  rps=$(sed -n 's/^Requests\/sec: *//p' <<<"$out")
  # wrk prints 850.00us, 1.20ms or 1.01s: in ms.
  p99=$(awk '$1 == "99%" {v = $2 + 0; if ($2 ~ /us$/) v /= 1000; else if ($2 ~ /[0-9]s$/) v *= 1000; print v}' <<<"$out")
  dropped=$(sed -n 's/^turnout_decision_log_dropped_total //p' <<<"$out")
  if [ "${1%-normal}" = shadow ]; then
    echo "  shadow: $(grep '^turnout_shadow_decisions_total' <<<"$out" | sed 's/turnout_shadow_decisions_total{result="\(.*\)"} /\1 /' | tr '\n' ' ')"
  fi
  cpu=$(sed -n 's/.*, \([0-9.]*\) us per request/\1/p' <<<"$out")
  echo "$1 $rps $p99 $cpu" | tee -a "$dir/results"
  if [ "${1%-normal}" = log ]; then
    lines=$(cat "$dir"/decisions.jsonl* | wc -l)
    echo "  log: $lines lines written, ${dropped:-0} dropped, $(du -cb "$dir"/decisions.jsonl* | tail -1 | cut -f1) bytes kept"
    rm -f "$dir"/decisions.jsonl*
  fi
}
mkdir "$dir/shadow"
cp rules/*.yaml "$dir/shadow/"
sed -i '0,/- mentions: search_patterns/s//- longer_than: 1000000/' "$dir/shadow/search.yaml"
runs=(${RUNS:-plain log shadow})
args_of() {
  case $1 in
    plain) echo "" ;;
    log) echo "--decision-log $dir/decisions.jsonl" ;;
    shadow) echo "--shadow $dir/shadow" ;;
    log-normal) echo "--decision-log $dir/decisions.jsonl --background-priority normal" ;;
    shadow-normal) echo "--shadow $dir/shadow --background-priority normal" ;;
  esac
}
for i in $(seq "$rounds"); do
  n=${#runs[@]}
  for j in $(seq 0 $((n - 1))); do
    label=${runs[$(((i + j) % n))]}
    run "$label" "$(args_of "$label")"
  done
done
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
for label in "${runs[@]}"; do
  rps=$(awk -v l="$label" '$1 == l {print $2}' "$dir/results" | median)
  p99=$(awk -v l="$label" '$1 == l {print $3}' "$dir/results" | median)
  cpu=$(awk -v l="$label" '$1 == l {print $4}' "$dir/results" | median)
  echo "median $label: $rps decisions/s, p99 $p99 ms, server CPU $cpu us a request"
done
