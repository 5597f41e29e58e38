#!/usr/bin/env python3
"""Checks a Sluice store loaded from the benchmark kit's data against the kit's manifest.

Reads the store as any SQLite client would: the plain layout with the kit's table and column names
(`kit.model.yaml` maps them), foreign keys holding the source's key values, dates as text SQLite's
date functions read (`YYYY-MM-DD HH:MM:SS`), decimals as numbers. Computes every aggregate
`manifest.json` lists — row counts, sums of ids and quantities, money in cents, character lengths of
every text column (dates as the source spelled them: `date(signup_date)`, `ordered_at` in ISO 8601
with `Z`), non-empty notes — checks the storage types the kit checks (keys and quantities integer,
money a number), and that every foreign key points at a row (`PRAGMA foreign_key_check`). Exit 0
and `ok` when all agree, else exit 1 and one line per difference.

    python3 verify.py STORE.sqlite MANIFEST.json
"""
import json
import sqlite3
import sys


def main(store, manifest_path):
    manifest = json.load(open(manifest_path))
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    q = lambda sql: db.execute(sql).fetchone()
    money = lambda column: f"sum(CAST(round({column} * 100) AS INTEGER))"
    got = {
        "customers": dict(zip(
            ["count", "sum_id", "len_name", "len_email", "len_country", "len_signup_date", "cents_balance", "types"],
            q(f"""SELECT count(*), sum(id), sum(length(name)), sum(length(email)), sum(length(country)),
                  sum(length(date(signup_date))), {money('balance')},
                  sum(typeof(id) = 'integer' AND typeof(balance) IN ('integer', 'real'))
                  FROM customers"""))),
        "products": dict(zip(
            ["count", "sum_id", "len_sku", "len_name", "len_category", "cents_price", "types"],
            q(f"""SELECT count(*), sum(id), sum(length(sku)), sum(length(name)), sum(length(category)),
                  {money('price')}, sum(typeof(price) IN ('integer', 'real')) FROM products"""))),
        "orders": dict(zip(
            ["count", "sum_id", "sum_customer_id", "sum_product_id", "sum_quantity", "cents_price", "len_ordered_at",
             "len_note", "n_note", "types"],
            q(f"""SELECT count(*), sum(id), sum(customer_id), sum(product_id), sum(quantity), {money('price')},
                  sum(length(strftime('%Y-%m-%dT%H:%M:%SZ', ordered_at))),
                  sum(coalesce(length(note), 0)), sum(note IS NOT NULL AND note != ''),
                  sum(typeof(customer_id) = 'integer' AND typeof(product_id) = 'integer'
                      AND typeof(quantity) = 'integer' AND typeof(price) IN ('integer', 'real'))
                  FROM orders"""))),
        "order_lines": dict(zip(
            ["count", "sum_order_id", "sum_line_no", "sum_product_id", "sum_quantity", "cents_price", "types"],
            q(f"""SELECT count(*), sum(order_id), sum(line_no), sum(product_id), sum(quantity), {money('price')},
                  sum(typeof(order_id) = 'integer' AND typeof(product_id) = 'integer'
                      AND typeof(quantity) = 'integer' AND typeof(price) IN ('integer', 'real'))
                  FROM order_lines"""))),
    }
    problems = []
    for table, expected in manifest["checks"].items():
        for name, value in list(expected.items()) + [("types", expected["count"])]:
            if got[table].get(name) != value:
                problems.append(f"{table}.{name}: expected {value}, store has {got[table].get(name)}")
    dangling = q("SELECT count(*) FROM pragma_foreign_key_check")[0]
    if dangling:
        problems.append(f"{dangling} foreign keys point at no row")
    print("ok" if not problems else "\n".join(problems))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
