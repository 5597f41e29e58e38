import CSQLite
import Foundation

/// Boxes a Swift closure for SQLite's `void *` user data; SQLite releases it through `destroy`.
private final class FunctionBox {
    let body: ([SQLiteValue]) throws -> SQLiteValue
    init(_ body: @escaping ([SQLiteValue]) throws -> SQLiteValue) { self.body = body }
}

private final class CollationBox {
    let compare: (String, String) -> Int
    init(_ compare: @escaping (String, String) -> Int) { self.compare = compare }
}

extension SQLiteConnection {
    /// Registers a deterministic SQL function implemented in Swift, callable from every statement of
    /// this connection as `name(arg, ...)`.
    ///
    /// ```swift
    /// try db.createFunction("twice", argumentCount: 1) { args in
    ///     if case .integer(let v) = args[0] { return .integer(v * 2) } else { return .null }
    /// }
    /// ```
    /// A thrown error becomes an SQL error of the statement calling the function.
    /// - Parameter argumentCount: the number of arguments, or -1 for any number.
    public func createFunction(
        _ name: String, argumentCount: Int32,
        _ body: @escaping ([SQLiteValue]) throws -> SQLiteValue
    ) throws {
        let box = Unmanaged.passRetained(FunctionBox(body)).toOpaque()
        let rc = sqlite3_create_function_v2(
            handle, name, argumentCount, SQLITE_UTF8 | SQLITE_DETERMINISTIC, box,
            { context, count, arguments in
                let box = Unmanaged<FunctionBox>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
                var values: [SQLiteValue] = []
                values.reserveCapacity(Int(count))
                for index in 0..<Int(count) { values.append(SQLiteValue(arguments?[index])) }
                do {
                    try box.body(values).setResult(of: context)
                } catch {
                    sqlite3_result_error(context, "\(error)", -1)
                }
            },
            nil, nil,
            { pointer in if let pointer { Unmanaged<FunctionBox>.fromOpaque(pointer).release() } })
        guard rc == SQLITE_OK else { throw SQLiteError(code: rc, connection: handle, sql: nil) }
    }

    /// Registers a collation implemented in Swift, usable as `COLLATE name` in this connection's SQL.
    /// `compare` returns a negative number, zero or a positive number, like `strcmp`.
    public func createCollation(_ name: String, _ compare: @escaping (String, String) -> Int) throws {
        let box = Unmanaged.passRetained(CollationBox(compare)).toOpaque()
        let rc = sqlite3_create_collation_v2(
            handle, name, SQLITE_UTF8, box,
            { pointer, leftCount, left, rightCount, right in
                let box = Unmanaged<CollationBox>.fromOpaque(pointer!).takeUnretainedValue()
                let a = String(decoding: UnsafeRawBufferPointer(start: left, count: Int(leftCount)), as: UTF8.self)
                let b = String(decoding: UnsafeRawBufferPointer(start: right, count: Int(rightCount)), as: UTF8.self)
                return Int32(clamping: box.compare(a, b))
            },
            { pointer in if let pointer { Unmanaged<CollationBox>.fromOpaque(pointer).release() } })
        guard rc == SQLITE_OK else { throw SQLiteError(code: rc, connection: handle, sql: nil) }
    }
}
