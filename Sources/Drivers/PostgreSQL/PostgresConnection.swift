import CLibPQ
import Foundation

/// A failed PostgreSQL call: the server's SQLSTATE (`23505`, `42P01`, … — empty for a failure on
/// the client's side, such as a refused connection), its message, detail and hint.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    public let sqlState: String
    public let message: String
    public let detail: String?
    public let hint: String?

    public var description: String {
        var text = sqlState.isEmpty ? message : "\(message) (SQLSTATE \(sqlState))"
        if let detail { text += "; \(detail)" }
        if let hint { text += "; hint: \(hint)" }
        return text
    }
}

/// One connection to a PostgreSQL server through libpq, used by one thread at a time (it is not
/// Sendable). Statements take their values as parameters (`$1`, `$2`, …), never spliced into the
/// SQL; results come back as text, as the server writes them, `nil` for NULL.
///
/// ```swift
/// let connection = try PostgresConnection(conninfo: "postgresql://localhost/shop")
/// let rows = try connection.query("SELECT name FROM customers WHERE id = $1", ["42"])
/// ```
public final class PostgresConnection {
    let handle: OpaquePointer
    /// Prepared statements by SQL text and parameter types: their server-side names.
    var prepared: [PreparedKey: String] = [:]
    /// The COPY `streamCopy` left open, its SQL and when it began (uptime nanoseconds).
    var stream: (sql: String, copy: PostgresCopy, began: UInt64)?
    /// Why an open COPY failed: the transaction is aborted and every call but `ROLLBACK` says so
    /// (a COMMIT would otherwise end it quietly as a rollback).
    var streamFailure: PostgresError?

    struct PreparedKey: Hashable {
        let sql: String
        let types: [UInt32]
    }

    /// Connects with a libpq connection string or URL (the password, `sslmode` and the rest as libpq
    /// reads them: from the string, `PGPASSWORD`, `~/.pgpass`, a service file).
    /// - Throws: `PostgresError` when the connection fails (the server's message, without the password).
    public init(conninfo: String) throws {
        guard let handle = PQconnectdb(conninfo) else {
            throw PostgresError(sqlState: "", message: "out of memory connecting", detail: nil, hint: nil)
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(handle)
            throw PostgresError(sqlState: "", message: message, detail: nil, hint: nil)
        }
        self.handle = handle
        // Notices (`… already exists, skipping`) are not errors; they are not printed.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
    }

    deinit { PQfinish(handle) }

    /// The server process serving the connection (`pg_stat_activity.pid`).
    public var backendPID: Int32 { PQbackendPID(handle) }

    /// Runs one or more statements without parameters or results (DDL, `BEGIN`, `COMMIT`).
    public func execute(_ sql: String) throws {
        if sql == "ROLLBACK" { abandonStream() } else { try endStream() }
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result)
    }

    /// Runs a statement with text parameters and returns its rows, each value as text (`nil`: NULL).
    public func query(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        try endStream()
        // C strings that live through the call (`nil`: SQL NULL).
        let copies: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.flatMap { strdup($0) } }
        defer { for copy in copies { free(copy) } }
        let values: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
        let result = values.withUnsafeBufferPointer { buffer in
            PQexecParams(handle, sql, Int32(parameters.count), nil, buffer.baseAddress, nil, nil, 0)
        }
        defer { PQclear(result) }
        try check(result)
        let rows = Int(PQntuples(result)), columns = Int(PQnfields(result))
        return (0..<rows).map { row in
            (0..<columns).map { column in
                PQgetisnull(result, Int32(row), Int32(column)) == 1
                    ? nil : String(cString: PQgetvalue(result, Int32(row), Int32(column)))
            }
        }
    }

    /// Throws the result's error, if it is one.
    func check(_ result: OpaquePointer?) throws {
        guard let result else {
            throw PostgresError(
                sqlState: "", message: String(cString: PQerrorMessage(handle)), detail: nil, hint: nil)
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_COPY_IN: return
        default:
            func field(_ code: Character) -> String? {
                PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
            }
            throw PostgresError(
                sqlState: field("C") ?? "",
                message: field("M") ?? String(cString: PQresultErrorMessage(result)),
                detail: field("D"), hint: field("H"))
        }
    }
}
