import CSQLite
import Foundation

/// A value as SQLite stores it: one of its five storage classes.
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// Reads an `sqlite3_value` (a function argument).
    init(_ value: OpaquePointer?) {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            let count = Int(sqlite3_value_bytes(value))
            guard let bytes = sqlite3_value_text(value) else {
                self = .text("")
                return
            }
            self = .text(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0, let bytes = sqlite3_value_blob(value) else {
                self = .blob(Data())
                return
            }
            self = .blob(Data(bytes: bytes, count: count))
        default: self = .null
        }
    }

    /// Sets this value as the result of a function call.
    func setResult(of context: OpaquePointer?) {
        switch self {
        case .null: sqlite3_result_null(context)
        case .integer(let v): sqlite3_result_int64(context, v)
        case .real(let v): sqlite3_result_double(context, v)
        case .text(let v):
            // With its byte count, so text holding U+0000 is returned whole (as `bind` stores it).
            var text = v
            text.withUTF8 { bytes in
                UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!).withMemoryRebound(
                    to: CChar.self, capacity: 1
                ) {
                    sqlite3_result_text64(
                        context, $0, sqlite3_uint64(bytes.count), SQLiteStatement.transient, UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let v):
            v.withUnsafeBytes { raw in
                sqlite3_result_blob64(
                    context, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(raw.count),
                    SQLiteStatement.transient)
            }
        }
    }
}
