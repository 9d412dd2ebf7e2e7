#!/usr/bin/env bash
# CI: builds the fuzz targets (fuzz/, cargo fuzz and libFuzzer) and runs each
# for a short while over its seed corpus, so that a target that no longer
# builds, or an input that crashes one, fails CI. The long runs are by hand
# (fuzz/README.md).
#
#   .ci/fuzz.sh [build|run]     (both when not told)
#
# FUZZ_SECONDS sets each run's length (default 15).
set -euo pipefail
cd "$(dirname "$0")/.."
step="${1:-all}"
seconds="${FUZZ_SECONDS:-15}"

if [ "$step" != run ]; then
  if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "+ cargo install cargo-fuzz --locked"
    cargo install cargo-fuzz --version '^0.13' --locked
  fi
  # Stable Rust: no sanitizer (they need nightly's -Z flags); the fuzzer's
  # coverage instrumentation works on stable. The dev profile builds fastest;
  # the long runs use the default (optimised) build.
  echo "+ cargo fuzz build --dev -s none"
  cargo fuzz build --dev -s none
fi
[ "$step" = build ] && exit 0

python3 fuzz/seed-corpus.py "$MAHJONG_CONFORMANCE_DIR"
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
