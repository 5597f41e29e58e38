import CSQLite
import Foundation

/// A prepared SQLite statement; finalized in `deinit`.
///
/// Binding a parameter index out of range is a programmer error and traps; stepping reports data and
/// constraint failures as thrown `SQLiteError`s.
public final class SQLiteStatement {
    let handle: OpaquePointer
    unowned let connection: SQLiteConnection
    public let sql: String
    /// Large texts and blobs bound without SQLite's copy, kept alive here until the statement is
    /// done with them (stepped to its end, reset, or finalized): a 60 MB value is not held twice.
    private var kept: [Kept] = []

    private enum Kept {
        case text(String)
        case blob(Data)
    }

    /// Values of at least this many bytes are bound in place (`kept`); smaller ones are copied, which
    /// costs less than keeping them.
    public static let inPlaceBytes = 1 << 16

    init(connection: SQLiteConnection, sql: String) throws {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw SQLiteError(code: rc, connection: connection.handle, sql: sql)
        }
        self.handle = statement
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Number of `?` parameters.
    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    private func check(_ rc: Int32, index: Int32) {
        precondition(
            rc == SQLITE_OK, "binding parameter \(index) of \(sql) failed: \(String(cString: sqlite3_errstr(rc)))")
    }

    public func bindNull(at index: Int32) { check(sqlite3_bind_null(handle, index), index: index) }
    public func bind(_ value: Int64, at index: Int32) { check(sqlite3_bind_int64(handle, index, value), index: index) }
    public func bind(_ value: Double, at index: Int32) {
        check(sqlite3_bind_double(handle, index, value), index: index)
    }
    public func bind(_ value: String, at index: Int32) {
        var text = value
        guard text.utf8.count >= Self.inPlaceBytes else { return text.withUTF8 { bindText(utf8: $0, at: index) } }
        // The native storage `withUTF8` gives the bytes of stays where it is while `kept` holds it.
        let rc = text.withUTF8 { bytes in
            UnsafeRawPointer(bytes.baseAddress!).withMemoryRebound(to: CChar.self, capacity: 1) {
                sqlite3_bind_text64(handle, index, $0, sqlite3_uint64(bytes.count), nil, UInt8(SQLITE_UTF8))
            }
        }
        kept.append(.text(text))
        check(rc, index: index)
    }
    /// Binds UTF-8 text from a buffer (copied now, so the buffer may go away after the call).
    public func bindText(utf8 bytes: UnsafeBufferPointer<UInt8>, at index: Int32) {
        let rc = UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!).withMemoryRebound(
            to: CChar.self, capacity: 1
        ) {
            sqlite3_bind_text64(handle, index, $0, sqlite3_uint64(bytes.count), Self.transient, UInt8(SQLITE_UTF8))
        }
        check(rc, index: index)
    }
    public func bind(_ value: Data, at index: Int32) {
        let inPlace = value.count >= Self.inPlaceBytes
        // A large `Data` is one heap storage whose bytes stay where they are while `kept` holds it.
        let rc = value.withUnsafeBytes { raw in
            sqlite3_bind_blob64(
                handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(raw.count),
                inPlace ? nil : Self.transient)
        }
        if inPlace { kept.append(.blob(value)) }
        check(rc, index: index)
    }
    public func bind(_ value: SQLiteValue, at index: Int32) {
        switch value {
        case .null: bindNull(at: index)
        case .integer(let v): bind(v, at: index)
        case .real(let v): bind(v, at: index)
        case .text(let v): bind(v, at: index)
        case .blob(let v): bind(v, at: index)
        }
    }

    /// SQLite's "copy the bytes now" destructor.
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Advances to the next row. Returns `false` when the statement is done.
    /// - Throws: `SQLiteError` naming the SQL.
    @discardableResult
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE:
            if !kept.isEmpty { releaseKept() }
            return false
        default:
            let error = SQLiteError(code: rc, connection: connection.handle, sql: sql)
            if !kept.isEmpty { releaseKept() }
            throw error
        }
    }

    /// Lets the values bound in place go: the statement is reset and forgets its bindings first, so
    /// SQLite never reads them again.
    private func releaseKept() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        kept.removeAll()
    }

    /// Steps until the statement is done (for INSERT, UPDATE, DELETE, DDL).
    public func stepToEnd() throws { while try step() {} }

    /// Resets for re-execution and clears bindings.
    public func reset() throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        kept.removeAll()
    }

    public var columnCount: Int { Int(sqlite3_column_count(handle)) }
    public func columnName(_ index: Int32) -> String { String(cString: sqlite3_column_name(handle, index)) }
    public func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }
    public func isText(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_TEXT }
    public func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }
    /// The bytes of a text or blob value (0 for NULL; a number's text length).
    public func byteCount(_ index: Int32) -> Int { Int(sqlite3_column_bytes(handle, index)) }
    public func double(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }
    /// The column as text (embedded NUL bytes kept), or `nil` for NULL.
    public func string(_ index: Int32) -> String? {
        guard let text = sqlite3_column_text(handle, index) else { return nil }
        return String(
            decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, index))), as: UTF8.self)
    }
    /// The column in its own storage class.
    public func value(_ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(int64(index))
        case SQLITE_FLOAT: return .real(double(index))
        case SQLITE_TEXT: return .text(string(index) ?? "")
        case SQLITE_BLOB: return .blob(data(index) ?? Data())
        default: return .null
        }
    }
    public func data(_ index: Int32) -> Data? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}
