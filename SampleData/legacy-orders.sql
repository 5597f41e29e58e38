-- An export of the old order system: its customers and orders, with foreign keys. Lines come
-- before the orders they belong to (the old system dumped tables alphabetically).
CREATE TABLE customers (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL UNIQUE,
  country TEXT
);
CREATE TABLE order_lines (
  order_id INTEGER NOT NULL REFERENCES orders(id),
  line_no INTEGER NOT NULL,
  product_code TEXT NOT NULL REFERENCES products(code),
  qty INTEGER NOT NULL,
  unit_price NUMERIC NOT NULL,
  PRIMARY KEY (order_id, line_no)
);
INSERT INTO order_lines VALUES (9001, 1, 'W-100', 5, 19.50), (9001, 2, 'G-200', 1, 249.00);
INSERT INTO order_lines VALUES (9002, 1, 'S-300', 1000, 0.30);
INSERT INTO order_lines VALUES (9003, 1, 'W-100', 2, 19.99);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers(id),
  placed TEXT NOT NULL,
  comment TEXT
);
INSERT INTO orders VALUES (9001, 10, '2019-11-03 16:20:00', 'first order in the old system');
INSERT INTO orders VALUES (9002, 11, '2020-01-15 08:00:00', NULL);
INSERT INTO orders VALUES (9003, 1, '2020-02-29 12:00:00', 'a customer both systems know');
INSERT INTO customers VALUES (10, 'Grace Hopper', 'grace@navy.example.mil', 'US');
INSERT INTO customers VALUES (11, 'Édouard Manet', 'edouard@example.fr', 'FR');
