import Drivers
import Foundation
import Testing

@Suite struct SQLiteConnectionTests {
    private func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("sluice-\(UUID().uuidString).sqlite").path
    }

    @Test func valuesRoundTripThroughARealDatabaseFile() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let db = try SQLiteConnection(path: path)
            try db.execute("CREATE TABLE t(i INTEGER, r REAL, s TEXT, b BLOB, n)")
            let insert = try db.cachedStatement("INSERT INTO t VALUES (?, ?, ?, ?, ?)")
            insert.bind(Int64.max, at: 1)
            insert.bind(0.1, at: 2)
            insert.bind("naïve ☕ \u{1F600}", at: 3)
            insert.bind(Data([0, 1, 255]), at: 4)
            insert.bindNull(at: 5)
            try insert.stepToEnd()
            #expect(db.changes == 1 && db.lastInsertRowID == 1)
            #expect(try db.cachedStatement("INSERT INTO t VALUES (?, ?, ?, ?, ?)") === insert)
        }
        let db = try SQLiteConnection(path: path, mode: .readOnly)
        let select = try db.makeStatement("SELECT i, r, s, b, n FROM t")
        #expect(try select.step())
        #expect(select.int64(0) == Int64.max && select.double(1) == 0.1)
        #expect(select.string(2) == "naïve ☕ \u{1F600}" && select.data(3) == Data([0, 1, 255]))
        #expect(select.isNull(4) && select.columnName(2) == "s")
        #expect(try !select.step())
        #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (1,1,1,1,1)") }
    }

    @Test func errorsNameTheCodeAndTheStatement() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let db = try SQLiteConnection(path: path)
        try db.execute("CREATE TABLE t(a UNIQUE)")
        let error = try #require(throws: SQLiteError.self) {
            try db.execute("INSERT INTO t VALUES (1); INSERT INTO t VALUES (1)")
        }
        #expect(error.description.contains("UNIQUE constraint failed: t.a"))
        #expect(error.sql?.contains("INSERT INTO t") == true)
        let syntax = try #require(throws: SQLiteError.self) { try db.makeStatement("SELEC 1") }
        #expect(syntax.description.contains("syntax error") && syntax.sql == "SELEC 1")
        #expect(throws: SQLiteError.self) { try SQLiteConnection(path: "/nonexistent-dir/x.sqlite") }
    }
}
