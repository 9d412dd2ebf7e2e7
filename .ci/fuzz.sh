#!/usr/bin/env bash
# The fuzz targets (fuzz/, cargo fuzz and libFuzzer): the readers of what a
# client or an operator hands the server. The long runs are by hand
# (fuzz/README.md).
#
#   .ci/fuzz.sh check   the targets compile (clippy, no cargo-fuzz needed)
#   .ci/fuzz.sh run     cargo fuzz builds them and runs each for FUZZ_SECONDS
#                       (default 15) over its seeds; when every run passes,
#                       fuzz/fuzzed records which readers were fuzzed
#   .ci/fuzz.sh ci      run, only when the readers (or fuzz/) differ from
#                       those fuzz/fuzzed names (.ci/run's clippy, over the
#                       whole workspace, has checked that the targets compile)
#
# fuzz/fuzzed holds the git tree ids of the fuzzed sources at the last run
# that passed: commit it after fuzzing a change to a reader, and CI does not
# fuzz the same sources again.
set -euo pipefail
cd "$(dirname "$0")/.."
step="${1:-ci}"
seconds="${FUZZ_SECONDS:-15}"
# What the targets read with, as in fuzz/README.md's table.
readers=(fuzz/fuzz_targets fuzz/Cargo.toml crates/server/src/classic/lines.rs crates/server/src/protocol crates/server/src/game_file)

fuzzed_sources() {
  local path
  for path in "${readers[@]}"; do
    echo "$path $(git rev-parse "HEAD:$path")"
  done
}

check() {
  # A member of the workspace: the dependencies' checks are the server's.
  # Without libFuzzer itself (C++, compiled only to be linked; fuzz/Cargo.toml
  # asks for it only under cargo fuzz's `--cfg fuzzing`): a check links nothing.
  echo "+ cargo clippy -p mahjong-server-fuzz --bins"
  cargo clippy -p mahjong-server-fuzz --bins --locked -- -D warnings
}

run() {
  if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "+ cargo install cargo-fuzz --locked"
    cargo install cargo-fuzz --version '^0.13' --locked
  fi
  # Stable Rust: no sanitizer (they need nightly's -Z flags); the fuzzer's
  # coverage instrumentation works on stable. The dev profile builds fastest;
  # the long runs use the default (optimised) build.
  echo "+ cargo fuzz build --dev -s none"
  cargo fuzz build --dev -s none
  python3 fuzz/seed-corpus.py "${MAHJONG_CONFORMANCE_DIR:-tests/data/conformance}"
  local log target status
  log="$(mktemp)"
  for target in classic_lines ws_json game_file; do
    echo "+ cargo fuzz run --dev -s none $target (${seconds} s)"
    # -max_len keeps the game-file target's runs short (whole games are seeds
    # too, and are tried cut short); -timeout fails a run that hangs.
    status=0
    cargo fuzz run --dev -s none "$target" -- -max_total_time="$seconds" -max_len=65536 -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1 || status=$?
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done)' "$log" || true
    if [ "$status" != 0 ]; then
      tail -n 60 "$log" >&2
      echo "fuzz target $target failed (exit $status): the input is in fuzz/artifacts/$target/" >&2
      exit 1
    fi
  done
  rm -f "$log"
  if git diff --quiet HEAD -- "${readers[@]}"; then
    fuzzed_sources >fuzz/fuzzed
    echo "fuzz/fuzzed updated: commit it if it changed"
  fi
}

case "$step" in
  check) check ;;
  run) run ;;
  ci)
    if [ "$(fuzzed_sources)" = "$(cat fuzz/fuzzed 2>/dev/null)" ]; then
      echo "the readers are as fuzz/fuzzed says they were fuzzed: no fuzz run"
    else
      echo "the readers changed since fuzz/fuzzed: fuzzing them"
      run
    fi
    ;;
  *) echo "usage: .ci/fuzz.sh [check|run|ci]" >&2; exit 2 ;;
esac
