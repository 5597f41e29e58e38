#!/usr/bin/env bash
# One Sluice load for the benchmark kit: `sluice-load.sh PIPELINE` runs the pipeline (the kit sets
# $DATA and $DB) and, when $SLUICE_BENCH_KEEP names a folder, keeps a hard link to the first store
# each pipeline writes there (free: no copy), so run.sh verifies that very load after the timed
# rounds — verification (verify.py, ~5 s on medium) stays out of the measured time.
set -euo pipefail
"${SLUICE:?set SLUICE to the sluice binary}" run "$1" --quiet
if [ -n "${SLUICE_BENCH_KEEP:-}" ]; then
  mkdir -p "$SLUICE_BENCH_KEEP"
  kept="$SLUICE_BENCH_KEEP/$(basename "$1" .yaml)-$SCALE.sqlite"
  [ -e "$kept" ] || ln "$DB" "$kept"
fi
