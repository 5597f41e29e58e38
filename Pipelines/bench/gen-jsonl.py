#!/usr/bin/env python3
"""The benchmark kit's data as JSON Lines: `gen-jsonl.py DATA` writes DATA/jsonl/<table>.jsonl.

One object a line for every row of the kit's four CSV files (`customers`, `products`, `orders`,
`order_lines`, made by the kit's gen.py): whole numbers and amounts as JSON numbers written with
the CSV's own digits (`611.67`, never a float's rounding), text as JSON strings (newlines, quotes
and non-ASCII escaped as JSON needs), an empty note as null. The rows are the CSV's, so a load of
these files is checked by the same manifest aggregates. Skips the work when the files are newer
than the CSVs.
"""
import csv, json, os, sys

NUMBERS = {"id", "customer_id", "product_id", "order_id", "line_no", "quantity", "price", "balance"}
TABLES = ["customers", "products", "orders", "order_lines"]

data = sys.argv[1]
out = os.path.join(data, "jsonl")
os.makedirs(out, exist_ok=True)
for table in TABLES:
    source, target = os.path.join(data, table + ".csv"), os.path.join(out, table + ".jsonl")
    if os.path.exists(target) and os.path.getmtime(target) >= os.path.getmtime(source):
        continue
    with open(source, newline="", encoding="utf-8") as f, open(target + ".tmp", "w", encoding="utf-8") as w:
        rows = csv.reader(f)
        header = next(rows)
        for row in rows:
            members = []
            for name, value in zip(header, row):
                if name in NUMBERS:
                    members.append(f'"{name}":{value}')
                elif value == "" and name == "note":
                    members.append(f'"{name}":null')
                else:
                    members.append(f'"{name}":{json.dumps(value, ensure_ascii=False)}')
            w.write("{" + ",".join(members) + "}\n")
    os.replace(target + ".tmp", target)
