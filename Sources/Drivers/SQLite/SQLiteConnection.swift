import CSQLite
import Foundation

/// One connection to a SQLite database file, owning the `sqlite3` handle and closing it in `deinit`.
///
/// A connection is not thread-safe by itself: its owner serialises access (stores do so through
/// their coordinator). Prepared statements are cached per SQL text, so hot paths never re-prepare.
///
/// ```swift
/// let db = try SQLiteConnection(path: "/tmp/x.sqlite")
/// try db.execute("CREATE TABLE t(a INTEGER)")
/// let insert = try db.cachedStatement("INSERT INTO t VALUES (?)")
/// try insert.bind(Int64(1), at: 1); try insert.stepToEnd()
/// ```
public final class SQLiteConnection {
    /// How the file is opened.
    public enum Mode: Sendable {
        case readOnly
        case readWrite
        case readWriteCreate
    }

    let handle: OpaquePointer
    public let path: String
    private var statementCache: [String: SQLiteStatement] = [:]

    /// Opens (and with `.readWriteCreate`, creates) the database at `path`.
    /// - Throws: `SQLiteError` when the file cannot be opened.
    public init(path: String, mode: Mode = .readWriteCreate) throws {
        var flags: Int32 = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        switch mode {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let error = SQLiteError(code: rc, connection: db, sql: nil)
            sqlite3_close_v2(db)
            throw SQLiteError(code: error.code, message: "\(error.message) (opening \(path))")
        }
        self.handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more SQL statements that return no rows of interest.
    /// - Throws: `SQLiteError` naming the SQL.
    public func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(message)
            throw SQLiteError(code: rc, message: text, sql: sql)
        }
    }

    /// Prepares a new statement the caller owns.
    public func makeStatement(_ sql: String) throws -> SQLiteStatement {
        try SQLiteStatement(connection: self, sql: sql)
    }

    /// Returns the prepared statement for `sql`, preparing it on first use; it is reset before reuse.
    public func cachedStatement(_ sql: String) throws -> SQLiteStatement {
        if let statement = statementCache[sql] {
            try statement.reset()
            return statement
        }
        let statement = try makeStatement(sql)
        statementCache[sql] = statement
        return statement
    }

    /// The rowid of the last successful INSERT on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Keeps the database's WAL and shared-memory files when this connection closes (SQLite's
    /// `SQLITE_FCNTL_PERSIST_WAL`): a connection to a file about to be replaced by a rename must not
    /// remove, by name, the WAL another program opens for the new file.
    public func keepWALOnClose() {
        var keep: Int32 = 1
        _ = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &keep)
    }

    /// The version of the SQLite library linked at run time, e.g. "3.40.1".
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}
