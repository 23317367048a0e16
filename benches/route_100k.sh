#!/usr/bin/env bash
# Whole-process routing of a 100,000-line corpus: `turnout route --jsonl` (rules only, then the
# embedded router) against the article-style JavaScript router (/work/shared/bench/seed_style.js,
# node), run alternately so the shared machine's noise falls on all of them alike.
#
# Usage: benches/route_100k.sh [RUNS] [LINES] [RULES_DIR]
#   RUNS: runs of each (default 5); LINES: corpus lines (default 100000);
#   RULES_DIR: the rules turnout uses (default rules/; e.g. a pack from examples/gen_pack.rs).
# The corpus is every line's `request` from examples/corpus/requests.jsonl, repeated. Prints each
# run's wall time, then the medians and the ratios to the JavaScript router. Both start cold:
# process start, reading the rules (and training the embedded router) are in the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
lines=${2:-100000}
rules=${3:-rules}
seed=${SEED_JS:-/work/shared/bench/seed_style.js}
cargo build --release -q --bin turnout
bin=target/release/turnout

corpus=$(mktemp --suffix .jsonl)
out=$(mktemp)
trap 'rm -f "$corpus" "$out"' EXIT
python3 - "$lines" >"$corpus" <<'PY'
import json, sys
n = int(sys.argv[1])
reqs = [json.dumps(json.loads(l)["request"], ensure_ascii=False)
        for l in open("examples/corpus/requests.jsonl", encoding="utf-8") if l.strip()]
sys.stdout.write("\n".join(reqs[i % len(reqs)] for i in range(n)) + "\n")
PY
echo "corpus: $(wc -l <"$corpus") requests ($(du -h "$corpus" | cut -f1)), rules: $rules, $runs runs each"

# Wall seconds of one run of "$@" on the corpus; checks it printed one line per request.
run() {
  local start end
  start=$(date +%s.%N)
  "$@" <"$corpus" >"$out"
  end=$(date +%s.%N)
  local got
  got=$(wc -l <"$out")
  [ "$got" -eq "$lines" ] || { echo "expected $lines lines, got $got from: $*" >&2; exit 1; }
  echo "$end - $start" | bc -l
}

declare -a js none embedded none1 embedded1
for i in $(seq "$runs"); do
  js+=("$(run node "$seed")")
  none+=("$(run "$bin" route --jsonl --rules "$rules" --model none)")
  none1+=("$(run "$bin" route --jsonl --rules "$rules" --model none --jobs 1)")
  embedded+=("$(run "$bin" route --jsonl --rules "$rules" --model embedded)")
  embedded1+=("$(run "$bin" route --jsonl --rules "$rules" --model embedded --jobs 1)")
  printf 'run %d: seed_style.js %.3f s; turnout none %.3f s (--jobs 1: %.3f s); embedded %.3f s (--jobs 1: %.3f s)\n' \
    "$i" "${js[-1]}" "${none[-1]}" "${none1[-1]}" "${embedded[-1]}" "${embedded1[-1]}"
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
m_js=$(median "${js[@]}")
printf '\nmedians over %d runs of %d requests (turnout uses one thread per core, %d here, unless --jobs 1):\n' "$runs" "$lines" "$(nproc)"
printf '  seed_style.js (node)               %7.3f s  %8.0f requests/s\n' "$m_js" "$(echo "$lines / $m_js" | bc -l)"
row() {
  local m
  m=$(median "${@:2}")
  printf '  %-34s %7.3f s  %8.0f requests/s  JS takes %.2fx as long\n' "$1" "$m" "$(echo "$lines / $m" | bc -l)" "$(echo "$m_js / $m" | bc -l)"
}
row "turnout --model none" "${none[@]}"
row "turnout --model none --jobs 1" "${none1[@]}"
row "turnout --model embedded" "${embedded[@]}"
row "turnout --model embedded --jobs 1" "${embedded1[@]}"
