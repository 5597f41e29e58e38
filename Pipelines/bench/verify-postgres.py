#!/usr/bin/env python3
"""Checks a PostgreSQL schema loaded from the benchmark kit's data against the kit's manifest: the
aggregates verify.py computes on a SQLite store, computed by PostgreSQL through psql (dates as the
source spelled them, money in cents, lengths in characters), and the foreign keys declared and
validated. Exit 0 and `ok` when all agree, else exit 1 and one line per difference.

    python3 verify-postgres.py URL SCHEMA MANIFEST.json
"""
import json
import subprocess
import sys


def main(url, schema, manifest_path):
    manifest = json.load(open(manifest_path))

    def q(sql):
        command = f"SET search_path = \"{schema}\"; SET TIME ZONE 'UTC'; {sql}"
        out = subprocess.run(["psql", "-qAt", "-F", "|", url, "-c", command],
                             check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        return [int(v) if v.lstrip("-").isdigit() else v for v in out.split("|")]

    money = lambda column: f"sum(round({column} * 100))::bigint"
    got = {
        "customers": dict(zip(
            ["count", "sum_id", "len_name", "len_email", "len_country", "len_signup_date", "cents_balance", "types"],
            q(f"""SELECT count(*), sum(id), sum(length(name)), sum(length(email)), sum(length(country)),
                  sum(length(to_char(signup_date, 'YYYY-MM-DD'))), {money('balance')}, count(*) FROM customers"""))),
        "products": dict(zip(
            ["count", "sum_id", "len_sku", "len_name", "len_category", "cents_price", "types"],
            q(f"""SELECT count(*), sum(id), sum(length(sku)), sum(length(name)), sum(length(category)),
                  {money('price')}, count(*) FROM products"""))),
        "orders": dict(zip(
            ["count", "sum_id", "sum_customer_id", "sum_product_id", "sum_quantity", "cents_price", "len_ordered_at",
             "len_note", "n_note", "types"],
            q(f"""SELECT count(*), sum(id), sum(customer_id), sum(product_id), sum(quantity), {money('price')},
                  sum(length(to_char(ordered_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))),
                  sum(coalesce(length(note), 0)), count(*) FILTER (WHERE note <> ''), count(*) FROM orders"""))),
        "order_lines": dict(zip(
            ["count", "sum_order_id", "sum_line_no", "sum_product_id", "sum_quantity", "cents_price", "types"],
            q(f"""SELECT count(*), sum(order_id), sum(line_no), sum(product_id), sum(quantity), {money('price')},
                  count(*) FROM order_lines"""))),
    }
    problems = []
    for table, expected in manifest["checks"].items():
        for name, value in list(expected.items()) + [("types", expected["count"])]:
            if got[table].get(name) != value:
                problems.append(f"{table}.{name}: expected {value}, store has {got[table].get(name)}")
    keys = q(f"""SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND convalidated
                 AND connamespace = '"{schema}"'::regnamespace""")[0]
    if keys != 4:
        problems.append(f"{keys} validated foreign keys, not 4")
    print("ok" if not problems else "\n".join(problems))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
