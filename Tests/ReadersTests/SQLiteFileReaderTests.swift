import Drivers
import Foundation
import Readers
import TestSupport
import Testing

@Suite struct SQLiteFileReaderTests {
    static func makeDatabase(_ path: String) throws -> SQLiteConnection {
        let db = try SQLiteConnection(path: path)
        try db.execute("PRAGMA journal_mode = WAL")
        try db.execute("PRAGMA wal_autocheckpoint = 0")
        try db.execute(
            """
            CREATE TABLE customers (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, name VARCHAR(40));
            CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), total NUMERIC, \
            weight REAL, photo BLOB);
            INSERT INTO customers VALUES (1, 'ada@example.com', 'Ada'), (2, 'bob@example.com', NULL);
            INSERT INTO orders VALUES (10, 1, 12.5, 0.1, X'00FF10'), (11, 2, 3, -2.5e300, NULL);
            """)
        return db
    }

    @Test func tablesSchemasAndRowsAreReadWithTypesAsText() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("legacy.db").path
        let writer = try Self.makeDatabase(path)
        let reader = try SQLiteFileReader(path: path)
        #expect(reader.tables.map(\.name) == ["customers", "orders"])
        let customers = reader.tables[0], orders = reader.tables[1]
        #expect(customers.primaryKey == ["id"] && customers.uniqueKeys == [["email"]])
        #expect(
            customers.columns.map(\.declaredType) == ["INTEGER", "TEXT", "VARCHAR(40)"]
                && customers.columns[1].isNotNull)
        #expect(
            orders.foreignKeys == [
                TableSchema.ForeignKey(columns: ["customer_id"], table: "customers", referencedColumns: ["id"])
            ])
        var rows: [(String?, [String?])] = []
        while let record = try reader.next() { rows.append((record.kind, record.strings)) }
        #expect(rows.map(\.0) == ["customers", "customers", "orders", "orders"])
        #expect(rows[1].1 == ["2", "bob@example.com", nil])
        #expect(rows[2].1 == ["10", "1", "12.5", "0.1", "00ff10"])
        #expect(rows[3].1 == ["11", "2", "3", "-2.5e+300", nil])
        withExtendedLifetime(writer) {}
    }

    @Test func transactionsStillInTheWALFileAreRead() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("live.db").path
        let writer = try Self.makeDatabase(path)
        try writer.execute("INSERT INTO customers VALUES (3, 'cy@example.com', 'Cy')")
        // A copy of the database with its -wal file, as a backup of a live database would be.
        let copy = try directory.file("copy.db").path
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        #expect(FileManager.default.fileExists(atPath: copy + "-wal"))
        let reader = try SQLiteFileReader(path: copy, tables: ["customers"])
        var emails: [String?] = []
        while let record = try reader.next() { emails.append(record["email"]) }
        #expect(emails == ["ada@example.com", "bob@example.com", "cy@example.com"])
        withExtendedLifetime(writer) {}
    }

    @Test func notADatabaseOrAMissingTableIsAnError() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("text.db").path
        try Data("this is not a database, just text that is long enough to have a header".utf8).write(
            to: URL(fileURLWithPath: path))
        #expect { _ = try SQLiteFileReader(path: path) } throws: { ($0 as? ReaderError)?.kind == .sqlite }
        #expect { _ = try SQLiteFileReader(path: try directory.file("none.db").path) } throws: {
            ($0 as? ReaderError)?.kind == .io
        }
        let db = try directory.file("ok.db").path
        _ = try Self.makeDatabase(db)
        #expect { _ = try SQLiteFileReader(path: db, tables: ["nope"]) } throws: { error in
            (error as? ReaderError).map { $0.kind == .sqlite && $0.message.contains("nope") } ?? false
        }
    }
}
