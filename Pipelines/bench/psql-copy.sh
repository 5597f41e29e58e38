#!/usr/bin/env bash
# Contender: the kit's CSV files into PostgreSQL with psql's \copy — tables with their keys during
# the load, then the indexes and foreign keys (how pgloader and a careful DBA load). Into schema
# kit_psql of the server run.sh started ($SLUICE_BENCH_PG); $DATA is the kit's data folder.
set -euo pipefail
sql="${WORK:-$(mktemp -d)}/psql-copy.sql"
cat >"$sql" <<SQL
DROP SCHEMA IF EXISTS kit_psql CASCADE;
CREATE SCHEMA kit_psql;
SET search_path = kit_psql;
CREATE TABLE customers(id bigint PRIMARY KEY, name text NOT NULL, email text NOT NULL UNIQUE, country text NOT NULL,
  signup_date date NOT NULL, balance numeric NOT NULL);
CREATE TABLE products(id bigint PRIMARY KEY, sku text NOT NULL UNIQUE, name text NOT NULL, category text NOT NULL,
  price numeric NOT NULL);
CREATE TABLE orders(id bigint PRIMARY KEY, customer_id bigint NOT NULL, product_id bigint NOT NULL,
  quantity integer NOT NULL, price numeric NOT NULL, ordered_at timestamptz NOT NULL, note text);
CREATE TABLE order_lines(order_id bigint NOT NULL, line_no integer NOT NULL, product_id bigint NOT NULL,
  quantity integer NOT NULL, price numeric NOT NULL, PRIMARY KEY(order_id, line_no));
\copy customers FROM '$DATA/customers.csv' CSV HEADER
\copy products FROM '$DATA/products.csv' CSV HEADER
\copy orders FROM '$DATA/orders.csv' CSV HEADER
\copy order_lines FROM '$DATA/order_lines.csv' CSV HEADER
CREATE INDEX orders_customer_id ON orders(customer_id);
CREATE INDEX orders_product_id ON orders(product_id);
CREATE INDEX order_lines_product_id ON order_lines(product_id);
ALTER TABLE orders ADD FOREIGN KEY (customer_id) REFERENCES customers(id),
  ADD FOREIGN KEY (product_id) REFERENCES products(id);
ALTER TABLE order_lines ADD FOREIGN KEY (order_id) REFERENCES orders(id),
  ADD FOREIGN KEY (product_id) REFERENCES products(id);
SQL
psql -q -v ON_ERROR_STOP=1 "${SLUICE_BENCH_PG:?run.sh starts the server}" -f "$sql" 2>&1 | grep -v NOTICE || true
psql -qAt "$SLUICE_BENCH_PG" -c "SELECT count(*) FROM kit_psql.order_lines" >/dev/null
