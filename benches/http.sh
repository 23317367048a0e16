#!/usr/bin/env bash
# Decisions per second and p99 latency of `turnout serve` over HTTP on loopback, with wrk as the
# load generator in a second process. Usage: benches/http.sh [MODEL] [SECONDS] [CONNECTIONS]
#   MODEL: none (default) or embedded. Installs wrk from Debian's packages if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-none}
secs=${2:-10}
conns=${3:-32}
if ! command -v wrk >/dev/null; then
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
cargo build --release -q
out=$(mktemp)
./target/release/turnout serve --listen 127.0.0.1:0 --model "$model" >"$out" 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$out" "$lua"' EXIT
for _ in $(seq 100); do grep -q listening "$out" && break; sleep 0.1; done
url=$(sed -n 's/^turnout listening on //p' "$out")
lua=$(mktemp --suffix .lua)
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
echo "model=$model: wrk -t1 -c$conns -d${secs}s --latency (server and wrk share the machine's 2 cores)"
wrk -t1 -c"$conns" -d"${secs}s" --latency -s "$lua" "$url" | grep -E "Requests/sec|Latency|50%|90%|99%|requests in|Non-2xx"
