import CSQLite

/// An error reported by SQLite, with the result code, SQLite's own message and the SQL involved.
///
/// The description is one sentence a cron log can act on, for example
/// `SQLite error 19 (constraint failed): UNIQUE constraint failed: t.a — while running: INSERT INTO t VALUES (?)`.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The primary or extended SQLite result code.
    public let code: Int32
    /// SQLite's message for the failure.
    public let message: String
    /// The statement that failed, when there was one.
    public let sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    init(code: Int32, connection: OpaquePointer?, sql: String? = nil) {
        let text =
            connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        self.init(code: code, message: text, sql: sql)
    }

    public var description: String {
        let name = String(cString: sqlite3_errstr(code))
        var text = "SQLite error \(code) (\(name)): \(message)"
        if let sql { text += " — while running: \(sql)" }
        return text
    }
}
