#!/usr/bin/env bash
# Decisions per second and p99 latency of `turnout serve` over HTTP on loopback, with wrk as the
# load generator in a second process. Usage: benches/http.sh [MODEL] [SECONDS] [CONNECTIONS] [RULES]
#   MODEL: none (default) or embedded; CONNECTIONS: 16 by default; RULES: the rules directory
#   (default rules/; e.g. a grown pack from examples/gen_pack.rs).
# Installs wrk from Debian's packages if missing. With two or more cores the server is pinned to
# the first (SERVER_CPU) and wrk to the second (CLIENT_CPU), so they do not take turns on one.
# WORKERS=N passes --workers N to the server (default: one per core it may use).
# DELAY_MS=N makes each connection wait N ms after an answer before its next request: a steady
# load below saturation (16 connections and 1 ms: about 12k requests/s, under half of one core),
# where latency is the service's own and not the queue's. Unset: as fast as the server answers.
# SERVE_ARGS="..." adds arguments to the server's command line, e.g.
#   SERVE_ARGS="--decision-log /tmp/decisions.jsonl" benches/http.sh
# (benches/http_decision_log.sh alternates runs with and without the decision log).
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-none}
secs=${2:-10}
conns=${3:-16}
rules=${4:-rules}
server_cpu=${SERVER_CPU:-0}
client_cpu=${CLIENT_CPU:-1}
pin_server=()
pin_client=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin_server=(taskset -c "$server_cpu")
  pin_client=(taskset -c "$client_cpu")
fi
if ! command -v wrk >/dev/null; then
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
cargo build --release -q --bin turnout
out=$(mktemp)
lua=$(mktemp --suffix .lua)
"${pin_server[@]}" ./target/release/turnout serve --listen 127.0.0.1:0 --model "$model" --rules "$rules" ${WORKERS:+--workers "$WORKERS"} ${SERVE_ARGS:-} >"$out" 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$out" "$lua"' EXIT
for _ in $(seq 100); do grep -q listening "$out" && break; sleep 0.1; done
url=$(sed -n 's/^turnout listening on //p' "$out")
[ -n "$url" ] || { echo "the server did not start" >&2; exit 1; }
cat >"$lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local bodies = {
  '{"messages":[{"role":"user","content":"сколько стоит айфон 15 в москве"}]}',
  '{"messages":[{"role":"assistant","content":"Сколько лет ребёнку?"},{"role":"user","content":"3 годика"}],"skill":"health"}',
  '{"messages":[{"role":"user","content":"Посмотри, пожалуйста, статистику моей страницы в Schai за прошлую неделю и напиши по ней короткий пост для подписчиков: что понравилось людям больше всего и что стоит попробовать дальше"}]}',
  '{"messages":[{"role":"user","content":"привет, как дела?"}]}'
}
local i = 0
request = function()
  i = i + 1
  return wrk.format(nil, "/v1/route", nil, bodies[(i % #bodies) + 1])
end
LUA
if [ -n "${DELAY_MS:-}" ]; then
  echo "delay = function() return ${DELAY_MS} end" >>"$lua"
fi
# Warm-up: the embedded router trains on the first message of a ruleset.
curl -s -o /dev/null -H 'content-type: application/json' \
  -d '{"messages":[{"role":"user","content":"привет"}]}' "$url/v1/route" || true
echo "model=$model rules=$rules${SERVE_ARGS:+ ($SERVE_ARGS)}: wrk -t1 -c$conns -d${secs}s --latency${DELAY_MS:+, ${DELAY_MS} ms between requests on a connection}; server: ${pin_server[*]:-unpinned}, wrk: ${pin_client[*]:-unpinned}"
# The server's CPU time in user and kernel mode (clock ticks, /proc/PID/stat fields 14 and 15),
# before and after: where a request's CPU goes.
cpu() { awk '{print $14, $15}' "/proc/$pid/stat"; }
read -r user0 sys0 < <(cpu)
"${pin_client[@]}" wrk -t1 -c"$conns" -d"${secs}s" --latency -s "$lua" "$url" >"$out.wrk"
read -r user1 sys1 < <(cpu)
grep -E "Requests/sec|Latency|50%|90%|99%|requests in|Non-2xx" "$out.wrk"
# Decision log lines dropped, when the server writes one.
curl -s "$url/metrics" | grep -E '^turnout_decision_log_dropped_total' || true
# Shadow decisions by result, when the server has shadow rules.
curl -s "$url/metrics" | grep -E '^turnout_shadow_decisions_total' || true
requests=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$out.wrk")
hz=$(getconf CLK_TCK)
awk -v u=$((user1 - user0)) -v s=$((sys1 - sys0)) -v hz="$hz" -v n="${requests:-0}" 'BEGIN {
  t = (u + s) / hz
  printf "server CPU: %.2f s user, %.2f s kernel (%.0f %% kernel)", u / hz, s / hz, (u + s) ? 100 * s / (u + s) : 0
  if (n > 0) printf ", %.1f us per request", 1e6 * t / n
  printf "\n"
}'
rm -f "$out.wrk"
