import Drivers
import Foundation
import Testing

/// An error a Swift SQL function throws.
private struct FunctionFailure: Error, CustomStringConvertible {
    var description: String { "the argument is not a number" }
}

/// Something a registered closure keeps, to see when SQLite lets the closure go.
private final class Token {}

@Suite struct SQLiteFunctionTests {
    /// The single value `sql` returns, with `arguments` bound in order.
    private func scalar(_ db: SQLiteConnection, _ sql: String, _ arguments: SQLiteValue...) throws -> SQLiteValue {
        let statement = try db.makeStatement(sql)
        for (index, argument) in arguments.enumerated() { statement.bind(argument, at: Int32(index + 1)) }
        #expect(try statement.step())
        return statement.value(0)
    }

    @Test func swiftFunctionIsCallableFromSQL() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.createFunction("twice", argumentCount: 1) { arguments in
                if case .integer(let value) = arguments[0] { return .integer(value * 2) }
                return .null
            }
            try db.execute("CREATE TABLE t(a); INSERT INTO t VALUES (1), (2), (NULL), (20)")
            #expect(try scalar(db, "SELECT twice(21)") == .integer(42))
            #expect(try scalar(db, "SELECT sum(twice(a)) FROM t") == .integer(46))
            #expect(try scalar(db, "SELECT count(*) FROM t WHERE twice(a) IS NULL") == .integer(1))
        }
    }

    @Test func argumentsArriveInTheirStorageClasses() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            final class Calls { var arguments: [[SQLiteValue]] = [] }
            let calls = Calls()
            try db.createFunction("probe", argumentCount: -1) { arguments in
                calls.arguments.append(arguments)
                return .integer(Int64(arguments.count))
            }
            let count = try scalar(
                db, "SELECT probe(1, 2.5, 'text', x'00FF', NULL, ?, ?)", .text("a\u{0}b"), .blob(Data()))
            #expect(count == .integer(7))
            #expect(try scalar(db, "SELECT probe()") == .integer(0))
            #expect(
                calls.arguments == [
                    [
                        .integer(1), .real(2.5), .text("text"), .blob(Data([0, 255])), .null, .text("a\u{0}b"),
                        .blob(Data()),
                    ],
                    [],
                ])
        }
    }

    @Test func resultsComeBackInEveryStorageClass() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.createFunction("echo", argumentCount: 1) { $0[0] }
            let values: [SQLiteValue] = [
                .null, .integer(Int64.min), .real(0.1), .text(""), .text("caf\u{E9} \u{1F600}"), .text("a\u{0}b"),
                .blob(Data()), .blob(Data([0, 1, 2])),
            ]
            for value in values {
                #expect(try scalar(db, "SELECT echo(?)", value) == value)
            }
            #expect(try scalar(db, "SELECT length(CAST(echo(?) AS BLOB))", .text("a\u{0}bc")) == .integer(4))
        }
    }

    @Test func aThrownErrorFailsTheCallingStatementWithItsDescription() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.createFunction("strict", argumentCount: 1) { arguments in
                guard case .integer = arguments[0] else { throw FunctionFailure() }
                return arguments[0]
            }
            #expect(try scalar(db, "SELECT strict(5)") == .integer(5))
            let statement = try db.makeStatement("SELECT strict('five')")
            let error = try #require(throws: SQLiteError.self) { try statement.step() }
            #expect(error.code == .error)
            #expect(error.message == "the argument is not a number")
            #expect(error.sql == "SELECT strict('five')")
        }
    }

    @Test func callsWithTheWrongNumberOfArgumentsDoNotPrepare() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.createFunction("one", argumentCount: 1) { $0[0] }
            let error = try #require(throws: SQLiteError.self) { try db.makeStatement("SELECT one(1, 2)") }
            #expect(error.message.contains("wrong number of arguments"))
            #expect(throws: SQLiteError.self) { try db.makeStatement("SELECT missing(1)") }
        }
    }

    @Test func registeringAgainReplacesTheFunctionAndReleasesTheOldOne() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            weak var firstToken: Token?
            do {
                let token = Token()
                firstToken = token
                try db.createFunction("version", argumentCount: 0) { _ in
                    withExtendedLifetime(token) { .integer(1) }
                }
            }
            #expect(try scalar(db, "SELECT version()") == .integer(1))
            #expect(firstToken != nil)
            try db.createFunction("version", argumentCount: 0) { _ in .integer(2) }
            #expect(try scalar(db, "SELECT version()") == .integer(2))
            #expect(firstToken == nil)
        }
    }

    @Test func closingTheConnectionReleasesFunctionsAndCollations() throws {
        try withTemporaryFolder { folder in
            weak var functionToken: Token?
            weak var collationToken: Token?
            do {
                let db = try openDatabase(in: folder)
                let first = Token(), second = Token()
                functionToken = first
                collationToken = second
                try db.createFunction("f", argumentCount: 0) { _ in withExtendedLifetime(first) { .null } }
                try db.createCollation("c") { a, b in withExtendedLifetime(second) { a < b ? -1 : a == b ? 0 : 1 } }
                #expect(try scalar(db, "SELECT f() IS NULL AND 'a' < 'b' COLLATE c") == .integer(1))
            }
            #expect(functionToken == nil && collationToken == nil)
        }
    }

    @Test func registrationSQLiteRefusesIsAnError() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            let error = try #require(throws: SQLiteError.self) {
                try db.createFunction("toomany", argumentCount: 1000) { _ in .null }
            }
            #expect(error.code == .misuse)
            #expect(throws: SQLiteError.self) { try db.makeStatement("SELECT toomany()") }
        }
    }

    @Test func collationOrdersAndComparesWithTheSwiftFunction() throws {
        try withTemporaryFolder { folder in
            let db = try openDatabase(in: folder)
            try db.createCollation("BY_LENGTH") { a, b in
                a.count != b.count ? a.count - b.count : (a < b ? -1 : a == b ? 0 : 1)
            }
            try db.createCollation("CASELESS") { a, b in
                let x = a.lowercased(), y = b.lowercased()
                return x < y ? -1 : x == y ? 0 : 1
            }
            try db.execute("CREATE TABLE t(s TEXT); INSERT INTO t VALUES ('ccc'), ('\u{E9}'), ('bb'), ('aaaa'), ('a')")
            let select = try db.makeStatement("SELECT s FROM t ORDER BY s COLLATE BY_LENGTH")
            var ordered: [String] = []
            while try select.step() { ordered.append(select.string(0) ?? "") }
            #expect(ordered == ["a", "\u{E9}", "bb", "ccc", "aaaa"])
            #expect(try scalar(db, "SELECT 'Caf\u{C9}' = 'caf\u{E9}' COLLATE CASELESS") == .integer(1))
            #expect(try scalar(db, "SELECT 'Caf\u{C9}' = 'caf\u{E9}'") == .integer(0))
        }
    }
}
