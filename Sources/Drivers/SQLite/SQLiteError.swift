import CSQLite

/// An error reported by SQLite, with the result code, SQLite's own message and the SQL involved.
///
/// The description is one sentence a cron log can act on, for example
/// `SQLite error 19 (constraint failed): UNIQUE constraint failed: t.a — while running: INSERT INTO t VALUES (?)`.
/// Match failures by named code, never by message text:
///
/// ```swift
/// catch let error as SQLiteError where error.code.primary == .constraint { … }
/// ```
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The primary or extended SQLite result code.
    public let code: SQLiteResultCode
    /// SQLite's message for the failure.
    public let message: String
    /// The statement that failed, when there was one.
    public let sql: String?

    public init(code: SQLiteResultCode, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    init(code: Int32, message: String, sql: String? = nil) {
        self.init(code: SQLiteResultCode(rawValue: code), message: message, sql: sql)
    }

    init(code: Int32, connection: OpaquePointer?, sql: String? = nil) {
        let text =
            connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        self.init(code: code, message: text, sql: sql)
    }

    /// Whether the primary code is `.constraint` (a UNIQUE, NOT NULL, CHECK or foreign key failed).
    public var isConstraintViolation: Bool { code.primary == .constraint }

    public var description: String {
        var text = "SQLite error \(code.rawValue) (\(code)): \(message)"
        // A statement of a few lines is shown whole; a longer one (a table of 2,000 columns) by its start.
        if let sql { text += " — while running: " + (sql.count > 300 ? sql.prefix(300) + " …" : sql) }
        return text
    }
}
