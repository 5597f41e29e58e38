-- legacy-shapes.sql: a small legacy SQLite database with every shape real databases have.
-- Build it with:   sqlite3 legacy.db < legacy-shapes.sql      (SQLite >= 3.35, FTS5)
-- Expected contents and what an import must keep: legacy-shapes.md next to this file.
PRAGMA foreign_keys = OFF;   -- legacy data: children are inserted before their parents below
BEGIN TRANSACTION;

-- Shape: plain entity tables with INTEGER PRIMARY KEY; plain index and unique index on book
CREATE TABLE author (author_id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE book (book_id INTEGER PRIMARY KEY, title TEXT NOT NULL, isbn TEXT);
CREATE INDEX book_title_idx ON book(title);
CREATE UNIQUE INDEX book_isbn_uq ON book(isbn);
INSERT INTO author VALUES (1, 'Ursula K. Le Guin'), (2, 'Terry Pratchett'), (3, 'Neil Gaiman');
INSERT INTO book VALUES (1, 'A Wizard of Earthsea', '9780547773742'),
                        (2, 'Good Omens', '9780060853983'),
                        (3, 'Mort', NULL);

-- Shape: pure link table (only two foreign keys, which form its primary key) = many-to-many
CREATE TABLE book_author (
  book_id   INTEGER NOT NULL REFERENCES book(book_id),
  author_id INTEGER NOT NULL REFERENCES author(author_id),
  PRIMARY KEY (book_id, author_id)
);
INSERT INTO book_author VALUES (1, 1), (2, 2), (2, 3), (3, 2);

-- Shape: link table with payload columns (composite PK of two foreign keys + data)
CREATE TABLE student (student_id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE course (course_id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE, title TEXT);
CREATE TABLE enrollment (
  student_id  INTEGER NOT NULL REFERENCES student(student_id),
  course_id   INTEGER NOT NULL REFERENCES course(course_id),
  grade       TEXT,
  enrolled_on TEXT,
  PRIMARY KEY (student_id, course_id)
);
INSERT INTO student VALUES (1, 'Ana'), (2, 'Ben');
INSERT INTO course VALUES (10, 'CS101', 'Programming'), (20, 'MA201', 'Algebra');
INSERT INTO enrollment VALUES (1, 10, 'A', '2023-09-01'), (1, 20, 'B+', '2023-09-02'),
                              (2, 10, NULL, '2024-01-15');

-- Shape: WITHOUT ROWID table with a TEXT primary key (also the target of a TEXT foreign key)
CREATE TABLE country (code TEXT PRIMARY KEY, name TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO country VALUES ('NZ', 'New Zealand'), ('FR', 'France'), ('JP', 'Japan');

-- Shape: cycle of foreign keys between two tables (team.lead_id -> person, person.team_id -> team)
-- Rows link both ways; person 1 and 2 (children of team 2) come before team 2,
-- and team 1's lead (person 3) comes after team 1.
CREATE TABLE team (team_id INTEGER PRIMARY KEY, name TEXT NOT NULL,
                   lead_id INTEGER REFERENCES person(person_id));
CREATE TABLE person (person_id INTEGER PRIMARY KEY, name TEXT NOT NULL,
                     team_id INTEGER REFERENCES team(team_id),
                     country_code TEXT REFERENCES country(code));
INSERT INTO person VALUES (1, 'Grace', 2, 'NZ');
INSERT INTO person VALUES (2, 'Alan', 2, NULL);
INSERT INTO team VALUES (1, 'Compilers', 3);
INSERT INTO team VALUES (2, 'Storage', 1);
INSERT INTO team VALUES (3, 'Nobody yet', NULL);
INSERT INTO person VALUES (3, 'Edsger', 1, 'FR');
INSERT INTO person VALUES (4, 'Barbara', NULL, 'JP');

-- Shape: two foreign keys to one table (task.owner_id and task.reviewer_id -> person)
CREATE TABLE task (task_id INTEGER PRIMARY KEY, title TEXT NOT NULL,
                   owner_id INTEGER NOT NULL REFERENCES person(person_id),
                   reviewer_id INTEGER REFERENCES person(person_id));
INSERT INTO task VALUES (1, 'Write parser', 1, 2), (2, 'Review schema', 2, 1),
                        (3, 'Self-reviewed', 3, 3), (4, 'Unreviewed', 4, NULL);

-- Shape: self-reference (employee.manager_id -> employee); Bob's manager (4) is inserted later,
-- Eve is her own manager
CREATE TABLE employee (emp_id INTEGER PRIMARY KEY, name TEXT NOT NULL,
                       manager_id INTEGER REFERENCES employee(emp_id));
INSERT INTO employee VALUES (1, 'Ada', NULL);
INSERT INTO employee VALUES (2, 'Bob', 4);
INSERT INTO employee VALUES (3, 'Cy', 1);
INSERT INTO employee VALUES (4, 'Dee', 1);
INSERT INTO employee VALUES (5, 'Eve', 5);

-- Shape: NULL into an INTEGER PRIMARY KEY (SQLite assigns the rowid) and a column list without it
-- Shape: trigger (after insert on note, writes audit rows), created after the rows as .dump writes
-- it: a script whose trigger would fire for its own INSERTs is refused (Sluice does not run triggers)
CREATE TABLE note (note_id INTEGER PRIMARY KEY, body TEXT);
CREATE TABLE audit (audit_id INTEGER PRIMARY KEY, what TEXT NOT NULL);
INSERT INTO note VALUES (NULL, 'gets rowid 1');
INSERT INTO note VALUES (10, 'explicit 10');
INSERT INTO note VALUES (NULL, 'gets rowid 11');
INSERT INTO note (body) VALUES ('no key column: gets rowid 12');
INSERT INTO audit (what) VALUES ('note 1 added'), ('note 10 added'), ('note 11 added'), ('note 12 added');
CREATE TRIGGER note_audit AFTER INSERT ON note
BEGIN
  INSERT INTO audit (what) VALUES ('note ' || NEW.note_id || ' added');
END;

-- Shape: composite primary key that is not a link table (no foreign keys)
-- Shape: a generated column between stored ones (SQLite computes it; a dump holds no value for it)
CREATE TABLE price_history (sku TEXT NOT NULL, valid_from TEXT NOT NULL,
                            label TEXT GENERATED ALWAYS AS (sku || ' from ' || valid_from) VIRTUAL,
                            price NUMERIC(10,2), PRIMARY KEY (sku, valid_from));
INSERT INTO price_history VALUES ('A-1', '2024-01-01', 9.99), ('A-1', '2024-06-01', 10.49),
                                 ('B-2', '2024-01-01', 100);

-- Shape: table with no key at all, holding two identical rows
CREATE TABLE event_log (at TEXT, level TEXT, message TEXT);
INSERT INTO event_log VALUES ('2024-03-01 10:00:00', 'WARN', 'disk 91% full');
INSERT INTO event_log VALUES ('2024-03-01 10:00:00', 'WARN', 'disk 91% full');
INSERT INTO event_log VALUES ('2024-03-01 10:05:00', 'INFO', NULL);

-- Shape: value types: BLOB (00, FF, empty), digit-only TEXT with leading zeros, 64-bit extremes,
-- REAL, NUMERIC(10,2), DECIMAL, DOUBLE, FLOAT, NULLs, quotes/newlines/Unicode in text
CREATE TABLE sample_value (
  id INTEGER PRIMARY KEY, label TEXT, code TEXT, big INTEGER, data BLOB,
  measure REAL, amount NUMERIC(10,2), ratio DECIMAL, dbl DOUBLE, flt FLOAT
);
INSERT INTO sample_value VALUES (1, 'max', '007', 9223372036854775807, X'00FF', 1.98, 19.99, 0.1, 1e300, 3.5);
INSERT INTO sample_value VALUES (2, 'min', '0001234', -9223372036854775808, X'', 0.1, 100, 2.5, 0.1, 1.98);
INSERT INTO sample_value VALUES (3, 'it''s "quoted"', '000', 0, X'FF00FF000A0D', 1e300, 0.1, 3, -1e-300, 0.1);
INSERT INTO sample_value VALUES (4, 'line1
line2 – ünïcödé ✓', '12', 42, X'DEADBEEF', -2.5, 1234567.89, 0.333, 2.0, -0.5);
INSERT INTO sample_value VALUES (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

-- Shape: view (must not become a table nor be imported twice)
CREATE VIEW book_list AS
  SELECT b.title, group_concat(a.name, ', ') AS authors
  FROM book b JOIN book_author ba USING (book_id) JOIN author a USING (author_id)
  GROUP BY b.book_id;

-- Shape: FTS5 virtual table (its dump also writes the shadow tables doc_fts_data, _idx, _content,
-- _docsize, _config through PRAGMA writable_schema)
CREATE VIRTUAL TABLE doc_fts USING fts5(title, body);
INSERT INTO doc_fts (rowid, title, body) VALUES (1, 'Sluice', 'bulk import into a clean store');
INSERT INTO doc_fts (rowid, title, body) VALUES (2, 'SQLite', 'a small fast database engine');
INSERT INTO doc_fts (rowid, title, body) VALUES (3, 'Dump', 'what sqlite3 .dump writes');

-- Shape: odd names: keywords as table and column names ("order", "group", "select"),
-- spaces, a double quote inside a name, Unicode names; a foreign key between odd names
CREATE TABLE "order" ("order id" INTEGER PRIMARY KEY, "group" TEXT, "select" INTEGER,
                      "café" TEXT, "say ""hi""" TEXT);
CREATE TABLE "line item" ("line no" INTEGER PRIMARY KEY,
                          "order" INTEGER REFERENCES "order"("order id"),
                          "unit price" REAL);
CREATE TABLE "quote""d" (id INTEGER PRIMARY KEY, "value" TEXT);
CREATE TABLE "café" (id INTEGER PRIMARY KEY, "naïve name" TEXT, "日本語" TEXT);
INSERT INTO "order" VALUES (1, 'alpha', 1, 'crème', 'hello'), (2, 'beta', 0, NULL, 'he said "hi"');
INSERT INTO "line item" VALUES (1, 1, 2.5), (2, 1, 3.75), (3, 2, 10);
INSERT INTO "quote""d" VALUES (1, 'q1'), (2, 'q2');
INSERT INTO "café" VALUES (1, 'Zoë', 'はい'), (2, 'Noël', '東京');

-- Shape: table name written in another case in INSERT (SQLite names are case-insensitive)
CREATE TABLE items (item_id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ITEMS VALUES (1, 'upper-case table name');
INSERT INTO Items (ITEM_ID, Name) VALUES (2, 'mixed-case table and columns');

-- Shape: one-to-one extension tables whose primary key is also a reference: declared
-- (person_detail) and joined by name only (person_badge.person_id beside person.person_id);
-- a DATE column of calendar days
CREATE TABLE person_detail (person_id INTEGER PRIMARY KEY REFERENCES person(person_id),
                            born DATE, bio TEXT);
INSERT INTO person_detail VALUES (1, '1906-12-09', 'wrote the first compiler'), (3, '1930-05-11', NULL);
CREATE TABLE person_badge (person_id INTEGER PRIMARY KEY, badge TEXT NOT NULL);
INSERT INTO person_badge VALUES (2, 'gold'), (4, 'silver');

-- Shape: an empty parent table, and a child whose reference into it is NULL in every row
CREATE TABLE region (region_id INTEGER PRIMARY KEY, name TEXT NOT NULL, opened DATE);
CREATE TABLE office (office_id INTEGER PRIMARY KEY, city TEXT NOT NULL,
                     region_id INTEGER REFERENCES region(region_id));
INSERT INTO office VALUES (1, 'Wellington', NULL), (2, 'Lyon', NULL);

COMMIT;
