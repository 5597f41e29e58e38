#!/usr/bin/env bash
# `make bench-instructions`: instructions the hot cases execute, counted by valgrind's callgrind —
# the same count for the same binary and input however busy the machine is, so a change shows as
# a number. One line per case:
#   INSTRUCTIONS case=<name> instructions=<n> per_record=<n/records>
# Cases (the benchmark kit's `small` data, 10,000 orders, generated when missing):
#   read_csv, read_xml, read_sqldump   the readers alone (sluice-bench), every field of every record
#   insert_sqlite                      50,000 objects through a context into a new SQLite file
#   import_csv_oneoff                  `sluice import orders.csv --to new.db` (inference and import)
#   run_csv, run_xml, run_dump         the kit's pipelines end to end (Pipelines/bench/*.yaml)
# Usage: scripts/bench-instructions.sh BUILD_FOLDER KIT_FOLDER   (make passes .build/release and ../shared/bench)
set -euo pipefail
build="$(cd "${1:?the release build folder}" && pwd)"
kit="$(cd "${2:?the benchmark kit folder}" && pwd)"
project="$(cd "$(dirname "$0")/.." && pwd)"
root="${BENCH_ROOT:-$(python3 -c 'import tempfile; print(tempfile.gettempdir())')/sluice-bench}"
data="$root/data/small"
[ -e "$data/manifest.json" ] || python3 "$kit/gen.py" small >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-instructions.XXXXXX")
trap 'rm -rf "$work"' EXIT
# valgrind cannot read the debug information Swift writes; the symbols are enough for counting.
for program in sluice sluice-bench; do
  objcopy --strip-debug "$build/$program" "$work/$program"
done
rows=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(sum(m["rows"].values()))' "$data/manifest.json")
orders=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows"]["orders"])' "$data/manifest.json")

# count NAME RECORDS COMMAND...: runs COMMAND under callgrind and prints its line.
count() {
  local name=$1 records=$2
  shift 2
  rm -rf "$work/db" && mkdir "$work/db"
  (cd "$work/db" && DATA="$data" DB="$work/db/target.sqlite" SLUICE_BENCH_DATA="$data" \
    valgrind --tool=callgrind --callgrind-out-file="$work/$name.out" "$@" >"$work/$name.log" 2>&1) || {
    echo "bench-instructions: $name failed:" >&2
    tail -20 "$work/$name.log" >&2
    exit 1
  }
  local total
  total=$(sed -n 's/^summary: *//p' "$work/$name.out" | head -1)
  echo "INSTRUCTIONS case=$name instructions=$total per_record=$((total / records))"
}

count read_csv "$rows" "$work/sluice-bench" read_csv
count read_xml "$rows" "$work/sluice-bench" read_xml
count read_sqldump "$rows" "$work/sluice-bench" read_sqldump
count insert_sqlite 50000 "$work/sluice-bench" insert_sqlite 50000
count import_csv_oneoff "$orders" "$work/sluice" import "$data/orders.csv" --to "$work/db/oneoff.sqlite" --quiet
count run_csv "$rows" "$work/sluice" run "$project/Pipelines/bench/csv.yaml" --quiet
count run_xml "$rows" "$work/sluice" run "$project/Pipelines/bench/xml.yaml" --quiet
count run_dump "$rows" "$work/sluice" run "$project/Pipelines/bench/dump.yaml" --quiet
