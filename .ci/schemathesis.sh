#!/usr/bin/env bash
# The REST API against its own OpenAPI document: Schemathesis generates
# requests from the document the real server serves (valid ones and, for
# negative_data_rejection, invalid ones) and checks every answer: no 5xx, a
# status, content type, headers and body the document gives for that
# operation, and every invalid request refused with a 4xx.
#
# It builds and starts the real server on a fresh SQLite database with an
# admin account (made with `mahjong-server admin create-user`) and a player
# account (registered over REST), seeds it with a finished robot game and
# two open tables, one with a guest seated, one with the player's account
# seated (so that the operations on a table, a game, its hands and the
# accounts reach real data, not only 404s), then runs once per role:
# anonymous, the seated guest with its seat token, the player and the admin
# with their session tokens. Each run is bounded (examples per operation and
# a time limit). The server is stopped whatever happens.
#
# `.ci/schemathesis.sh prepare` only installs Schemathesis.
#
# Environment: SCHEMATHESIS_EXAMPLES (per operation, default 25),
# SCHEMATHESIS_SEED (default fixed, so that a run can be repeated exactly),
# SCHEMATHESIS_VENV (default target/schemathesis-venv), MAHJONG_SERVER_BIN (the
# server binary to test; default: built in the tests' profile).
set -euo pipefail
cd "$(dirname "$0")/.."

version=4.32.5
examples="${SCHEMATHESIS_EXAMPLES:-25}"
seed="${SCHEMATHESIS_SEED:-20240611}"
venv="${SCHEMATHESIS_VENV:-$PWD/target/schemathesis-venv}"
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"

# A virtual environment of its own, kept between runs while its version holds.
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -qF "$version"; then
  echo "+ installing schemathesis $version in $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version"
fi
python="$venv/bin/python"
# `.ci/schemathesis.sh prepare`: only the virtual environment (.ci/run makes
# it while the tests build).
if [ "${1:-}" = prepare ]; then exit 0; fi

# The binary the tests built (.ci/run passes it), else one built now.
server_bin="${MAHJONG_SERVER_BIN:-}"
if [ -z "$server_bin" ]; then
  cargo build --profile ci --locked --bin mahjong-server
  server_bin="$target_dir/ci/mahjong-server"
fi

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

database="sqlite://$work/schemathesis.db"
password="schemathesis-$RANDOM$RANDOM"
MAHJONG_PASSWORD="$password" "$server_bin" admin create-user schemathesis-admin --role admin --database "$database" >/dev/null

port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
base="http://127.0.0.1:$port"
"$server_bin" serve --listen "127.0.0.1:$port" --database "$database" >"$work/server.log" 2>&1 &
server_pid=$!

# One HTTP request (METHOD URL [BODY [TOKEN]]): prints the JSON answer;
# fails on a status of 300 or more.
api() {
  "$python" - "$@" <<'PY'
import json, sys, urllib.request
method, url = sys.argv[1], sys.argv[2]
body = sys.argv[3].encode() if len(sys.argv) > 3 else None
request = urllib.request.Request(url, data=body, method=method)
if len(sys.argv) > 4:
    request.add_header("Authorization", "Bearer " + sys.argv[4])
with urllib.request.urlopen(request, timeout=10) as answer:
    print(answer.read().decode())
PY
}
field() { "$python" -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

for _ in $(seq 1 100); do
  if api GET "$base/healthz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$work/server.log" >&2; echo "the server did not start" >&2; exit 1; fi
  sleep 0.1
done

# The accounts' sessions: the player's, the admin's, and a second admin
# session for the run that ends sessions.
credentials() { printf '{"name":"%s","password":"%s"}' "$1" "$password"; }
player_token="$(api POST "$base/api/v1/auth/register" "$(credentials schemathesis-player)" | field token)"
admin_token="$(api POST "$base/api/v1/auth/login" "$(credentials schemathesis-admin)" | field token)"
ending_token="$(api POST "$base/api/v1/auth/login" "$(credentials schemathesis-admin)" | field token)"
accounts="$(api GET "$base/api/v1/admin/users" "" "$admin_token" | "$python" -c 'import json, sys; print(", ".join(str(u["id"]) for u in json.load(sys.stdin)["users"]))')"

# A finished game (four robots, one round), an open table where a guest sits
# in seat 0 beside three robots, and one where the player's account sits in
# seat 0 (and manages it) beside two.
over="$(api POST "$base/api/v1/tables" '{"name":"Schemathesis over","robots":[{},{},{},{}],"start":true,"options":{"NumRounds":1}}' | field id)"
open="$(api POST "$base/api/v1/tables" '{"name":"Schemathesis open","robots":[{"seat":1},{"seat":2},{"seat":3}]}' | field id)"
seat_token="$(api POST "$base/api/v1/tables/$open/seats" '{"name":"Tester","seat":0}' | field token)"
mine="$(api POST "$base/api/v1/tables" '{"name":"Schemathesis mine","robots":[{"seat":1},{"seat":2}]}' | field id)"
api POST "$base/api/v1/tables/$mine/seats" '{"seat":0}' "$player_token" >/dev/null
for _ in $(seq 1 600); do
  state="$(api GET "$base/api/v1/tables/$over" | field state)"
  if [ "$state" = over ]; then break; fi
  sleep 0.1
done
if [ "$state" != over ]; then echo "the robot game at table $over did not end" >&2; exit 1; fi

# Half the generated ids (tables, games, accounts) and hand numbers are
# these real ones.
cat >"$work/schemathesis.toml" <<TOML
[dictionaries.ids]
values = ["$over", "$open", "$mine", $accounts]

[dictionaries.hands]
values = [1, 2]

[parameters]
"path.id" = { dictionary = "ids", probability = 0.5 }
"path.n" = { dictionary = "hands", probability = 0.5 }
TOML

checks=not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,negative_data_rejection

# One bounded run; its arguments are added to the command (a role's headers).
run_as() {
  local role="$1"
  shift
  echo "+ schemathesis, $role: $base/api/v1/openapi.json"
  # Every operation, the WebSocket's too: Schemathesis never sends the
  # upgrade headers, so it checks that route's documented refusals (the
  # socket itself is tested in tests/server.rs).
  (cd "$work" && timeout 300 "$venv/bin/schemathesis" --config-file "$work/schemathesis.toml" run \
    "$base/api/v1/openapi.json" \
    --checks "$checks" \
    --max-examples "$examples" \
    --seed "$seed" \
    --generation-database none \
    --request-timeout 30 \
    --no-color \
    "$@")
}

# The operations that end sessions run last, apart: in a role's run they
# would end its session part way, leaving the rest of the run anonymous.
enders='^(logout|logout_everywhere|end_user_sessions)$'
run_as anonymous
run_as "a seated guest" -H "Authorization: Bearer $seat_token"
run_as "a player" -H "Authorization: Bearer $player_token" --exclude-operation-id-regex "$enders"
run_as "an admin" -H "Authorization: Bearer $admin_token" --exclude-operation-id-regex "$enders"
run_as "an admin ending sessions" -H "Authorization: Bearer $ending_token" --include-operation-id-regex "$enders"

if ! kill -0 "$server_pid" 2>/dev/null; then
  cat "$work/server.log" >&2
  echo "the server died during the runs" >&2
  exit 1
fi
echo "schemathesis: every run passed"
