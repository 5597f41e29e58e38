import Drivers
import Foundation
import Testing

@Suite struct SQLiteStatementTests {
    private static let everyStorageClass: [SQLiteValue] = [
        .null, .integer(0), .integer(Int64.min), .integer(Int64.max), .real(-0.5), .real(1e300),
        .real(Double.leastNonzeroMagnitude), .text(""), .text("naïve ☕ \u{1F600}"), .text("a\u{0}b"),
        .blob(Data()), .blob(Data([0, 1, 254, 255])),
    ]

    @Test func everyValueBindsAndReadsBackInItsStorageClass() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.execute("CREATE TABLE t(v)")
            let insert = try db.makeStatement("INSERT INTO t VALUES (?)")
            for value in Self.everyStorageClass {
                try insert.reset()
                insert.bind(value, at: 1)
                try insert.stepToEnd()
            }
            let select = try db.makeStatement("SELECT v, typeof(v) FROM t ORDER BY rowid")
            var read: [SQLiteValue] = []
            var types: [String] = []
            while try select.step() {
                read.append(select.value(0))
                types.append(select.string(1) ?? "?")
            }
            #expect(read == Self.everyStorageClass)
            #expect(
                types == [
                    "null", "integer", "integer", "integer", "real", "real", "real", "text", "text", "text", "blob",
                    "blob",
                ])
        }
    }

    /// Texts and blobs of `SQLiteStatement.inPlaceBytes` and more are bound without SQLite's copy:
    /// each row still gets its own values, through multi-row statements, failed steps and resets.
    @Test func largeValuesBoundInPlaceKeepEachRowsOwnBytes() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.execute("CREATE TABLE t(k INTEGER UNIQUE NOT NULL, s TEXT, b BLOB)")
            let size = SQLiteStatement.inPlaceBytes + 3
            func text(_ row: Int) -> String { String(repeating: "\(row % 10)é", count: size / 2) }
            func blob(_ row: Int) -> Data { Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ row) }) }
            let pair = try db.makeStatement("INSERT INTO t VALUES (?, ?, ?), (?, ?, ?)")
            for row in [1, 3] {
                try pair.reset()
                for (offset, key) in [row, row + 1].enumerated() {
                    let base = Int32(offset * 3)
                    pair.bind(Int64(key), at: base + 1)
                    pair.bind(text(key), at: base + 2)
                    pair.bind(blob(key), at: base + 3)
                }
                try pair.stepToEnd()
            }
            // A step that fails lets its values go too; the statement runs again with new ones.
            let one = try db.makeStatement("INSERT INTO t VALUES (?, ?, ?)")
            for key in [4, 5] {
                try one.reset()
                one.bind(Int64(key), at: 1)
                one.bind(text(key), at: 2)
                one.bind(blob(key), at: 3)
                if key == 4 {
                    #expect(throws: SQLiteError.self) { try one.stepToEnd() }
                } else {
                    try one.stepToEnd()
                }
            }
            // A step after the statement finished reads no value it let go: its parameters are NULL.
            #expect {
                try one.stepToEnd()
            } throws: {
                ($0 as? SQLiteError)?.message.contains("NOT NULL") == true
            }
            let select = try db.makeStatement("SELECT k, s, b FROM t ORDER BY k")
            var keys: [Int64] = []
            while try select.step() {
                let key = select.int64(0)
                keys.append(key)
                #expect(select.string(1) == text(Int(key)) && select.data(2) == blob(Int(key)))
            }
            #expect(keys == [1, 2, 3, 4, 5])
        }
    }

    @Test func typedAccessorsReadEachStorageClass() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            let select = try db.makeStatement("SELECT ?, ?, ?, ?, ?, ?")
            select.bind(Int64(-42), at: 1)
            select.bind(2.25, at: 2)
            select.bind("a\u{0}b\u{E9}", at: 3)
            select.bind(Data([9, 8, 7]), at: 4)
            select.bindNull(at: 5)
            select.bind(Int64(12345), at: 6)
            #expect(try select.step())
            #expect(select.int64(0) == -42 && select.double(1) == 2.25)
            #expect(select.string(2) == "a\u{0}b\u{E9}" && select.byteCount(2) == 5 && select.isText(2))
            #expect(select.data(3) == Data([9, 8, 7]) && select.byteCount(3) == 3 && !select.isText(3))
            #expect(select.isNull(4) && select.string(4) == nil && select.data(4) == nil && select.int64(4) == 0)
            #expect(select.value(4) == .null && select.byteCount(4) == 0)
            // A number read as text is its decimal text.
            #expect(!select.isText(5) && select.string(5) == "12345" && select.byteCount(5) == 5)
            #expect(try !select.step())
        }
    }

    @Test func emptyTextAndEmptyBlobAreNotNull() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            let select = try db.makeStatement("SELECT ?, ?, typeof(?1), typeof(?2)")
            select.bind("", at: 1)
            select.bind(Data(), at: 2)
            #expect(try select.step())
            #expect(!select.isNull(0) && select.string(0) == "" && select.value(0) == .text(""))
            #expect(!select.isNull(1) && select.data(1) == Data() && select.value(1) == .blob(Data()))
            #expect(select.string(2) == "text" && select.string(3) == "blob")
        }
    }

    @Test func textBoundFromABufferIsCopiedAtOnce() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            let select = try db.makeStatement("SELECT ?")
            var bytes = Array("before".utf8)
            bytes.withUnsafeBufferPointer { select.bindText(utf8: $0, at: 1) }
            bytes.replaceSubrange(0..<bytes.count, with: Array("AFTER!".utf8))
            #expect(try select.step())
            #expect(select.string(0) == "before")
            try select.reset()
            [UInt8]().withUnsafeBufferPointer { select.bindText(utf8: $0, at: 1) }
            #expect(try select.step())
            #expect(select.value(0) == .text(""))
        }
    }

    @Test func resetClearsBindingsAndRunsTheStatementAgain() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.execute("CREATE TABLE t(a, b)")
            let insert = try db.makeStatement("INSERT INTO t VALUES (?, ?)")
            insert.bind(Int64(1), at: 1)
            insert.bind("one", at: 2)
            try insert.stepToEnd()
            try insert.reset()
            insert.bind(Int64(2), at: 1)
            try insert.stepToEnd()
            let select = try db.makeStatement("SELECT a, b FROM t ORDER BY a")
            var rows: [[SQLiteValue]] = []
            while try select.step() { rows.append([select.value(0), select.value(1)]) }
            #expect(rows == [[.integer(1), .text("one")], [.integer(2), .null]])
        }
    }

    @Test func resetInTheMiddleOfAQueryStartsItOver() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1), (2), (3)")
            let select = try db.makeStatement("SELECT a FROM t WHERE a >= ? ORDER BY a")
            select.bind(Int64(2), at: 1)
            #expect(try select.step() && select.int64(0) == 2)
            try select.reset()
            select.bind(Int64(1), at: 1)
            var values: [Int64] = []
            while try select.step() { values.append(select.int64(0)) }
            #expect(values == [1, 2, 3])
        }
    }

    @Test func columnsAndParametersAreDescribed() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.execute("CREATE TABLE t(id INTEGER, name TEXT)")
            let insert = try db.makeStatement("INSERT INTO t VALUES (?, :name)")
            #expect(insert.parameterCount == 2 && insert.columnCount == 0)
            #expect(insert.sql == "INSERT INTO t VALUES (?, :name)")
            let select = try db.makeStatement("SELECT id, name AS label, 1 + 1, NULL AS missing FROM t")
            #expect(select.parameterCount == 0 && select.columnCount == 4)
            #expect((0..<4).map { select.columnName($0) } == ["id", "label", "1 + 1", "missing"])
        }
    }

    @Test func stepErrorsCarryTheCodeAndTheStatementsSQL() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.execute("CREATE TABLE t(a INTEGER PRIMARY KEY, b NOT NULL, c CHECK (c > 0))")
            let sql = "INSERT INTO t VALUES (?, ?, ?)"
            let insert = try db.makeStatement(sql)
            insert.bind(Int64(1), at: 1)
            insert.bind("b", at: 2)
            insert.bind(Int64(1), at: 3)
            try insert.stepToEnd()
            var failures: [SQLiteError] = []
            for (a, b, c) in [(Int64(1), "b", Int64(1)), (2, "", 1), (3, "b", -1)] {
                try insert.reset()
                insert.bind(a, at: 1)
                if !b.isEmpty { insert.bind(b, at: 2) }
                insert.bind(c, at: 3)
                failures.append(try #require(throws: SQLiteError.self) { try insert.step() })
            }
            #expect(failures.allSatisfy { $0.sql == sql && $0.isConstraintViolation })
            // SQLITE_CONSTRAINT_PRIMARYKEY, SQLITE_CONSTRAINT_NOTNULL, SQLITE_CONSTRAINT_CHECK.
            #expect(failures.map(\.code.rawValue) == [1555, 1299, 275])
            #expect(failures[1].message == "NOT NULL constraint failed: t.b")
            try insert.reset()
            insert.bind(Int64(2), at: 1)
            insert.bind("b", at: 2)
            try insert.stepToEnd()
            #expect(db.changes == 1 && db.lastInsertRowID == 2)
        }
    }

    @Test func cachedStatementIsTheSameStatementResetAndUnbound() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1), (2)")
            let sql = "SELECT a, ? FROM t ORDER BY a"
            let first = try db.cachedStatement(sql)
            first.bind("bound", at: 1)
            #expect(try first.step() && first.int64(0) == 1 && first.string(1) == "bound")
            let again = try db.cachedStatement(sql)
            #expect(again === first)
            #expect(try again.step() && again.int64(0) == 1 && again.isNull(1))
            #expect(try db.cachedStatement("SELECT a FROM t") !== first)
            #expect(try db.makeStatement(sql) !== first)
        }
    }

    @Test func finalizedStatementsReleaseTheirTablesAndLocks() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1), (2), (3)")
            do {
                let select = try db.makeStatement("SELECT a FROM t")
                #expect(try select.step())
                let error = try #require(throws: SQLiteError.self) { try db.execute("DROP TABLE t") }
                #expect(error.code.primary == .locked)
            }
            try db.execute("DROP TABLE t; CREATE TABLE u(b)")
            let insert = try db.cachedStatement("INSERT INTO u VALUES (?)")
            insert.bind(Int64(7), at: 1)
            try insert.stepToEnd()
            #expect(db.changes == 1)
        }
    }

    @Test func closingAConnectionWithCachedStatementsReleasesTheFile() throws {
        try withTemporaryFolder { folder in
            let writer = try openDatabase(in: folder)
            try writer.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1), (2)")
            do {
                let reader = try openDatabase(in: folder)
                let select = try reader.cachedStatement("SELECT a FROM t")
                #expect(try select.step())
                let busy = try #require(throws: SQLiteError.self) { try writer.execute("INSERT INTO t VALUES (3)") }
                #expect(busy.code == .busy)
            }
            try writer.execute("INSERT INTO t VALUES (3)")
            #expect(writer.changes == 1 && writer.lastInsertRowID == 3)
        }
    }
}
