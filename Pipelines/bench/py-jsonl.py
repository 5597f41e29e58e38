#!/usr/bin/env python3
"""The Python a team would write for JSON Lines: `json.loads` a line at a time and `executemany`
one prepared INSERT per table, in one transaction, into the kit's tables (set up beforehand).

  py-jsonl.py --db DB --data DIR TABLE...      (reads DIR/<table>.jsonl)

Values are bound as `json` gives them (ints, floats, str, None), columns in the first object's order.
"""
import argparse, json, sqlite3, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--db", required=True)
ap.add_argument("--data", required=True)
ap.add_argument("tables", nargs="+")
a = ap.parse_args()

con = sqlite3.connect(a.db, isolation_level=None)
con.execute("BEGIN")
for t in a.tables:
    t0 = time.perf_counter()
    with open(f"{a.data}/{t}.jsonl", encoding="utf-8") as f:
        first = json.loads(f.readline())
        names = list(first)
        sql = f"INSERT INTO {t}({','.join(names)}) VALUES({','.join('?' * len(names))})"
        con.execute(sql, [first[n] for n in names])
        rows = (json.loads(line) for line in f)
        n = 1 + con.executemany(sql, ([row.get(k) for k in names] for row in rows)).rowcount
    print(f"BENCH table={t} rows={n} seconds={time.perf_counter() - t0:.6f}", file=sys.stderr)
con.execute("COMMIT")
con.close()
