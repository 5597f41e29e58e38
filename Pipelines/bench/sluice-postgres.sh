#!/usr/bin/env bash
# Contender: Sluice loading the kit's CSV files into PostgreSQL (csv-postgres.yaml) — a new store in
# schema kit_sluice of the server run.sh started ($SLUICE_BENCH_PG), dropped first. Kept for
# verify-postgres.py when $SLUICE_BENCH_KEEP is set (run.sh verifies it after the timed rounds).
set -euo pipefail
psql -q "${SLUICE_BENCH_PG:?run.sh starts the server}" -c "DROP SCHEMA IF EXISTS kit_sluice CASCADE" 2>&1 \
  | grep -v NOTICE || true
"${SLUICE:?set SLUICE to the sluice binary}" run "$PROJECT/Pipelines/bench/csv-postgres.yaml" --quiet
if [ -n "${SLUICE_BENCH_KEEP:-}" ]; then mkdir -p "$SLUICE_BENCH_KEEP" && touch "$SLUICE_BENCH_KEEP/postgres-$SCALE"; fi
