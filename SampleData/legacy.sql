-- A legacy catalogue dump (the products of the sample shop).
CREATE TABLE products (code TEXT PRIMARY KEY, name TEXT NOT NULL, price NUMERIC NOT NULL);
INSERT INTO products VALUES ('W-100', 'Widget', 19.99);
INSERT INTO products VALUES ('G-200', 'Gadget', 249.00);
INSERT INTO products VALUES ('S-300', 'Sprocket', 0.35);
