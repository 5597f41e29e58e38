import Drivers
import Foundation
import Testing

@Suite struct SQLiteErrorTests {
    @Test func resultCodesAreSQLitesNumbersWithSQLitesNames() {
        let named: [(SQLiteResultCode, Int32, String)] = [
            (.ok, 0, "not an error"), (.error, 1, "SQL logic error"), (.busy, 5, "database is locked"),
            (.locked, 6, "database table is locked"), (.readOnly, 8, "attempt to write a readonly database"),
            (.constraint, 19, "constraint failed"), (.cannotOpen, 14, "unable to open database file"),
            (.notADatabase, 26, "file is not a database"), (.row, 100, "another row available"),
            (.done, 101, "no more rows available"),
        ]
        for (code, number, name) in named {
            #expect(code.rawValue == number && code.description == name)
        }
    }

    @Test func anExtendedCodeKeepsItsPrimaryCode() {
        let unique = SQLiteResultCode(rawValue: 2067)  // SQLITE_CONSTRAINT_UNIQUE
        #expect(unique != .constraint && unique.primary == .constraint)
        #expect(unique.description == "constraint failed")
        #expect(SQLiteResultCode.busy.primary == .busy)
        #expect(Set([unique, .constraint, unique.primary]).count == 2)
    }

    @Test func constraintViolationsAreRecognisedByTheirPrimaryCode() {
        #expect(SQLiteError(code: SQLiteResultCode(rawValue: 1299), message: "NOT NULL").isConstraintViolation)
        #expect(SQLiteError(code: .constraint, message: "x").isConstraintViolation)
        #expect(!SQLiteError(code: .busy, message: "x").isConstraintViolation)
    }

    @Test func descriptionNamesTheCodeTheMessageAndTheSQL() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.execute("CREATE TABLE t(a UNIQUE); INSERT INTO t VALUES (1)")
            let sql = "INSERT INTO t VALUES (1)"
            let error = try #require(throws: SQLiteError.self) { try db.execute(sql) }
            #expect(error.code.rawValue == 2067 && error.sql == sql)
            #expect(
                error.description
                    == "SQLite error 2067 (constraint failed): UNIQUE constraint failed: t.a — while running: \(sql)")
        }
    }

    @Test func aLongStatementIsShownByItsStart() {
        let sql = "SELECT " + (1...200).map { "c\($0)" }.joined(separator: ", ") + " FROM t"
        let error = SQLiteError(code: .error, message: "no such table: t", sql: sql)
        #expect(
            error.description == "SQLite error 1 (SQL logic error): no such table: t — while running: "
                + sql.prefix(300) + " …")
        let withoutSQL = SQLiteError(code: .ioError, message: "disk I/O error")
        #expect(withoutSQL.description == "SQLite error 10 (disk I/O error): disk I/O error")
    }

    @Test func aReadOnlyConnectionRefusesWritesWithTheReadOnlyCode() throws {
        try withTemporaryFolder { folder in
            try openDatabase(in: folder).execute("CREATE TABLE t(a); INSERT INTO t VALUES (1)")
            let path = folder.appendingPathComponent("test.sqlite").path
            let db = try SQLiteConnection(path: path, mode: .readOnly)
            #expect(db.path == path)
            let error = try #require(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (2)") }
            #expect(error.code.primary == .readOnly)
            let select = try db.makeStatement("SELECT count(*) FROM t")
            #expect(try select.step() && select.int64(0) == 1)
        }
    }

    @Test func openingAMissingFileWithoutCreateFailsAndNamesThePath() throws {
        try withTemporaryFolder { folder in
            let path = folder.appendingPathComponent("missing.sqlite").path
            for mode in [SQLiteConnection.Mode.readOnly, .readWrite] {
                let error = try #require(throws: SQLiteError.self) { try SQLiteConnection(path: path, mode: mode) }
                #expect(error.code.primary == .cannotOpen)
                #expect(error.message.contains(path))
            }
            #expect(!FileManager.default.fileExists(atPath: path))
            _ = try SQLiteConnection(path: path, mode: .readWriteCreate)
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func aFileThatIsNotADatabaseIsReportedAsSuch() throws {
        try withTemporaryFolder { folder in
            let url = folder.appendingPathComponent("text.sqlite")
            try Data(String(repeating: "this is not a database\n", count: 200).utf8).write(to: url)
            let db = try SQLiteConnection(path: url.path, mode: .readWrite)
            let error = try #require(throws: SQLiteError.self) { try db.execute("SELECT * FROM sqlite_master") }
            #expect(error.code == .notADatabase)
            #expect(error.sql == "SELECT * FROM sqlite_master")
        }
    }

    @Test func theLinkedLibraryVersionIsReported() {
        let parts = SQLiteConnection.libraryVersion.split(separator: ".")
        #expect(parts.count >= 3 && parts.first == "3" && parts.allSatisfy { Int($0) != nil })
    }
}
