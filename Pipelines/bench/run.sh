#!/usr/bin/env bash
# Measures Sluice against the kit's contenders in one run and verifies every Sluice load:
#   bash Pipelines/bench/run.sh [SCALE] [baselines.py options...]      (SCALE: small, medium, …)
# SLUICE=<binary> measures that binary instead of building this checkout's release binary.
# By default only the contenders the targets compare with run beside Sluice (the kit's references
# f_c_wal and f_c_wal_lateidx always run); pass --only REGEX to choose others.
set -euo pipefail
export PROJECT="$(cd "$(dirname "$0")/../.." && pwd)"
export BENCH="${BENCH:-$PROJECT/../shared/bench}"
scale="${1:-small}"; shift || true
if [ -z "${SLUICE:-}" ]; then
  (cd "$PROJECT" && swift build -c release --product sluice >/dev/null)
  export SLUICE="$PROJECT/.build/release/sluice"
fi
export SLUICE
root="${BENCH_ROOT:-$(python3 -c 'import tempfile; print(tempfile.gettempdir())')/sluice-bench}"
export SLUICE_BENCH_KEEP="$root/sluice-kept"
rm -rf "$SLUICE_BENCH_KEEP"
only=(--only 'sluice|a_sqlite3_import$|b_sqlite3_read_dump|g_py_lxml_to_sqlite')
for arg in "$@"; do [ "$arg" = --only ] && only=(); done
python3 "$BENCH/baselines.py" "$scale" --contenders "$BENCH/contenders.conf" --contenders "$PROJECT/Pipelines/bench/contenders.conf" \
  "${only[@]}" "$@"
data="$root/data/$scale"
status=0
for kept in "$SLUICE_BENCH_KEEP"/*-"$scale".sqlite; do
  [ -e "$kept" ] || continue
  printf 'verify %s: ' "$(basename "$kept")"
  python3 "$PROJECT/Pipelines/bench/verify.py" "$kept" "$data/manifest.json" || status=1
done
rm -rf "$SLUICE_BENCH_KEEP"
exit $status
