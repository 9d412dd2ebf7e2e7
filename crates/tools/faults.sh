#!/usr/bin/env bash
# Faults over three nodes (docs/performance.md, "Faults"): three cluster nodes
# on this machine's Postgres and a nats-server of their own, tables of four
# robots opened through the first and placed over the three, and `followers`
# following every table through every node while this script, at fixed times,
#   kills node c (SIGKILL) and starts it again 20 s later,
#   stops node b (SIGTERM: it hands its tables over) and starts it again at once,
#   pauses node a (SIGSTOP) for 20 s,
#   stops NATS for 6 s,
#   stops Postgres for 15 s (only as root, with pg_ctlcluster).
# Then it waits for every game to end (or `followers`' --duration), and prints
# per fault how many followers fell silent across it, the longest silence, and
# how long after the fault began (for an outage: after it ended) every one of
# them received events again; then the games followed to their end, the
# reconnections answered 404 and how many tables each node played 20 s after
# the last fault (the report lists every silence over a second, in
# $OUT/report.json).
#
# Needs: a release build (cargo build --release), nats-server, psql, Postgres
# on 127.0.0.1:5432 that lets `postgres` in (trust), python3. Traffic goes to
# 127.0.0.1 only. Everything is stopped at the end; logs and the report stay
# in $OUT.
#
#   crates/tools/faults.sh                      # 200 tables, two rounds each
#   TABLES=50 ROUNDS=1 crates/tools/faults.sh
set -euo pipefail

BIN=${BIN:-target/release/mahjong-server}
TABLES=${TABLES:-200}
ROUNDS=${ROUNDS:-2}
PAUSE=${PAUSE:-2}          # the robots' pause between actions, in deciseconds
DURATION=${DURATION:-900}  # followers stop by then at the latest
OUT=${OUT:-/tmp/faults}
PG_ADMIN=${PG_ADMIN:-postgres://postgres@127.0.0.1:5432/postgres}
DB=mj_faults
NATS_PORT=4333
PORTS=(7201 7202 7203)
NAMES=(a b c)

[ -x "$BIN" ] || { echo "faults.sh: no $BIN (cargo build --release first)" >&2; exit 2; }
command -v nats-server >/dev/null || { echo "faults.sh: nats-server is not installed" >&2; exit 2; }
mkdir -p "$OUT"
rm -f "$OUT"/*.log "$OUT"/report.json "$OUT"/faults.txt "$OUT"/owned.txt

pids=()
nats_pid=
cleanup() {
  # The nodes first (each hands its tables over through NATS), then NATS.
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -z "$nats_pid" ] || { kill "$nats_pid" 2>/dev/null || true; wait "$nats_pid" 2>/dev/null || true; }
}
trap cleanup EXIT

psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
DATABASE="postgres://postgres@127.0.0.1:5432/$DB"

start_nats() {
  nats-server -a 127.0.0.1 -p $NATS_PORT >>"$OUT/nats.log" 2>&1 &
  nats_pid=$!
}

# start_node I: starts node NAMES[I] on PORTS[I]; its pid in pids[I].
start_node() {
  local i=$1
  "$BIN" serve --listen 127.0.0.1:${PORTS[$i]} --database "$DATABASE" \
    --nats nats://127.0.0.1:$NATS_PORT --node-name "${NAMES[$i]}" --lease-seconds 5 \
    --exempt-address 127.0.0.1 --max-robot-game-rounds 4 >>"$OUT/${NAMES[$i]}.log" 2>&1 &
  pids[$i]=$!
}

ready() { curl -sf -o /dev/null "http://127.0.0.1:$1/readyz"; }

wait_ready() {
  for _ in $(seq 1 120); do ready "$1" && return 0; sleep 0.5; done
  echo "faults.sh: the node on port $1 never became ready" >&2
  return 1
}

start_nats
for i in 0 1 2; do start_node $i; done
for p in "${PORTS[@]}"; do wait_ready "$p"; done

echo "opening $TABLES tables of robots ($ROUNDS rounds, pause $PAUSE)"
body="{\"robots\":[{},{},{},{}],\"start\":true,\"pause_deciseconds\":$PAUSE,\"options\":{\"NumRounds\":$ROUNDS}}"
for n in $(seq 1 "$TABLES"); do
  curl -sf -o /dev/null -X POST -H 'content-type: application/json' -d "$body" \
    "http://127.0.0.1:${PORTS[0]}/api/v1/tables" || { echo "faults.sh: table $n was refused" >&2; exit 1; }
done
sleep 2

via=$(printf '127.0.0.1:%s,' "${PORTS[@]}")
"$BIN" followers --via "${via%,}" --duration "$DURATION" --silence 1 >"$OUT/report.json" 2>"$OUT/followers.log" &
followers=$!
began=$(date +%s.%N)
# at SECONDS: waits until that many seconds after the followers began.
at() { local now; now=$(date +%s.%N); sleep "$(python3 -c "print(max(0, $began + $1 - $now))")"; }
# fault NAME FROM UNTIL: records a fault (seconds since the followers began).
fault() { echo "$1 $2 $3" >>"$OUT/faults.txt"; echo "$1"; }
since() { python3 -c "import time; print(round(time.time() - $began, 2))"; }

at 20;  t=$(since); kill -KILL "${pids[2]}"; wait "${pids[2]}" 2>/dev/null || true; fault "SIGKILL-c" "$t" "$t"
at 40;  start_node 2
at 60;  t=$(since); kill -TERM "${pids[1]}"; wait "${pids[1]}" 2>/dev/null || true; fault "SIGTERM-b" "$t" "$t"; start_node 1
at 90;  t=$(since); kill -STOP "${pids[0]}"
at 110; kill -CONT "${pids[0]}"; fault "SIGSTOP-a-20s" "$t" "$t"
at 140; t=$(since); kill "$nats_pid"; wait "$nats_pid" 2>/dev/null || true
at 146; start_nats; fault "NATS-down-6s" "$t" "$(since)"
if [ "$(id -u)" = 0 ] && command -v pg_ctlcluster >/dev/null; then
  cluster=$(pg_lsclusters -h | awk '$3 == 5432 { print $1 " " $2 }')
  at 180; t=$(since); pg_ctlcluster $cluster stop -m fast
  at 195; pg_ctlcluster $cluster start; fault "Postgres-down-15s" "$t" "$(since)"
fi
# The tables each node plays 20 s after the last fault (every lease had
# lapsed while Postgres was away: does each node have its own back?).
at 215
for i in 0 1 2; do
  owned=$(curl -s "http://127.0.0.1:${PORTS[$i]}/metrics" | awk '$1 == "mahjong_cluster_owned_tables" { print $2 }')
  echo "${NAMES[$i]} ${owned:-?}" >>"$OUT/owned.txt"
done

wait "$followers" || true

python3 - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
report = json.load(open(f"{out}/report.json"))
silences = report["silences_over_limit"]  # [start, length, "table via node"], over 1 s
print(f"{report['followers']} followers of {report['tables']} tables; "
      f"{report['finished']} followed to their game's end; "
      f"{report['reconnections']} reconnections, {report['not_found']} answered 404")
print(f"{'fault':<20}{'silent':>8}{'longest':>10}{'all back':>10}  (after it began; outages: after they ended)")
for line in open(f"{out}/faults.txt"):
    name, began, ended = line.split()
    began, ended = float(began), float(ended)
    hit = [(s, l) for s, l, _ in silences if s <= ended + 1.0 and s + l > began]
    if not hit:
        print(f"{name:<20}{0:>8}")
        continue
    longest = max(l for _, l in hit)
    back = max(s + l for s, l in hit) - ended
    print(f"{name:<20}{len(hit):>8}{longest:>9.1f}s{back:>9.1f}s")
print("tables each node played 20 s after the last fault:", ", ".join(line.strip() for line in open(f"{out}/owned.txt")))
EOF
