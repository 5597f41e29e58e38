#!/usr/bin/env python3
"""Checks a Sluice store loaded from the benchmark kit's data against the kit's manifest.

Reads the store through Sluice's SQLite layout (one table per entity, `_pk` keys, to-one
relationships as columns holding the destination's `_pk`, dates as seconds since 2001-01-01,
decimals as canonical text) and computes every aggregate `manifest.json` lists: row counts, sums of
ids and quantities, money in cents, character lengths of every text column, non-empty notes.
Also checks that every relationship points at an existing row. Exit 0 and `ok` when all agree,
else exit 1 and one line per difference.

    python3 verify.py STORE.sqlite MANIFEST.json
"""
import json
import sqlite3
import sys

REF = 978307200  # 2001-01-01T00:00:00Z in Unix seconds: Sluice stores dates from this epoch


def main(store, manifest_path):
    manifest = json.load(open(manifest_path))
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    q = lambda sql: db.execute(sql).fetchone()
    got = {
        "customers": dict(zip(
            ["count", "sum_id", "len_name", "len_email", "len_country", "len_signup_date", "cents_balance"],
            q(f"""SELECT count(*), sum(id), sum(length(name)), sum(length(email)), sum(length(country)),
                  sum(length(date(signupDate + {REF}, 'unixepoch'))), sum(CAST(round(balance * 100) AS INTEGER))
                  FROM Customer"""))),
        "products": dict(zip(
            ["count", "sum_id", "len_sku", "len_name", "len_category", "cents_price"],
            q("""SELECT count(*), sum(id), sum(length(sku)), sum(length(name)), sum(length(category)),
                 sum(CAST(round(price * 100) AS INTEGER)) FROM Product"""))),
        "orders": dict(zip(
            ["count", "sum_id", "sum_customer_id", "sum_product_id", "sum_quantity", "cents_price", "len_ordered_at",
             "len_note", "n_note"],
            q(f"""SELECT count(*), sum(o.id), sum(c.id), sum(p.id), sum(o.quantity), sum(CAST(round(o.price * 100) AS INTEGER)),
                  sum(length(strftime('%Y-%m-%dT%H:%M:%SZ', o.orderedAt + {REF}, 'unixepoch'))),
                  sum(coalesce(length(o.note), 0)), sum(o.note IS NOT NULL AND o.note != '')
                  FROM "Order" o JOIN Customer c ON c._pk = o.customer JOIN Product p ON p._pk = o.product"""))),
        "order_lines": dict(zip(
            ["count", "sum_order_id", "sum_line_no", "sum_product_id", "sum_quantity", "cents_price"],
            q("""SELECT count(*), sum(o.id), sum(l.lineNo), sum(p.id), sum(l.quantity), sum(CAST(round(l.price * 100) AS INTEGER))
                 FROM OrderLine l JOIN "Order" o ON o._pk = l."order" JOIN Product p ON p._pk = l.product"""))),
    }
    problems = []
    for table, expected in manifest["checks"].items():
        for name, value in expected.items():
            if got[table].get(name) != value:
                problems.append(f"{table}.{name}: expected {value}, store has {got[table].get(name)}")
    for table, column, target in [("Order", "customer", "Customer"), ("Order", "product", "Product"),
                                  ("OrderLine", "order", "Order"), ("OrderLine", "product", "Product")]:
        dangling = q(f'SELECT count(*) FROM "{table}" t LEFT JOIN "{target}" d ON d._pk = t."{column}" WHERE d._pk IS NULL')[0]
        if dangling:
            problems.append(f"{table}.{column}: {dangling} rows point at no {target}")
    print("ok" if not problems else "\n".join(problems))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
