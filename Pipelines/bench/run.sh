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
# A throwaway PostgreSQL server for the contenders that load into one (sluice_postgres, p_psql_copy):
# a cluster in its own folder, on a socket there, stopped and removed at the end.
if ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1; then
  pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-pg.XXXXXX")
  trap 'bash "$PROJECT/scripts/pg-test-cluster.sh" stop "$pg_dir"' EXIT
  conninfo=$(bash "$PROJECT/scripts/pg-test-cluster.sh" start "$pg_dir")
  export SLUICE_BENCH_PG="postgresql:///postgres?host=$pg_dir&user=sluice"
  # No autovacuum: it would vacuum and analyse one contender's new tables during the next one's load
  # (on two cores, a third of the machine), whichever comes second paying for the first.
  psql -q "$SLUICE_BENCH_PG" -c "ALTER SYSTEM SET autovacuum = off" -c "SELECT pg_reload_conf()" >/dev/null
  : "$conninfo"
fi
root="${BENCH_ROOT:-$(python3 -c 'import tempfile; print(tempfile.gettempdir())')/sluice-bench}"
export SLUICE_BENCH_KEEP="$root/sluice-kept"
rm -rf "$SLUICE_BENCH_KEEP"
# The kit's data, and its JSON Lines form (gen-jsonl.py: the kit's own generator writes no JSON).
python3 "$BENCH/gen.py" "$scale" >/dev/null
python3 "$PROJECT/Pipelines/bench/gen-jsonl.py" "$root/data/$scale"
only=(--only 'sluice|a_sqlite3_import$|b_sqlite3_read_dump|g_py_lxml_to_sqlite|p_psql_copy|j_py_jsonl|q_sqlite3_import_oneoff')
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
if [ -e "$SLUICE_BENCH_KEEP/postgres-$scale" ]; then
  printf 'verify postgres kit_sluice: '
  python3 "$PROJECT/Pipelines/bench/verify-postgres.py" "$SLUICE_BENCH_PG" kit_sluice "$data/manifest.json" || status=1
fi
rm -rf "$SLUICE_BENCH_KEEP"
exit $status
