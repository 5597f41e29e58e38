import CLibPQ
import Foundation

/// The rows of a statement run with binary results: values in PostgreSQL's binary format, read in
/// place (`PostgresBinary` decodes them). Rows and columns count from 0.
public final class PostgresResult {
    private let result: OpaquePointer
    public let rowCount: Int
    public let columnCount: Int
    /// The rows an INSERT, UPDATE, DELETE or COPY touched.
    public let affectedRows: Int

    init(_ result: OpaquePointer) {
        self.result = result
        rowCount = Int(PQntuples(result))
        columnCount = Int(PQnfields(result))
        affectedRows = Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    deinit { PQclear(result) }

    public func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(result, Int32(row), Int32(column)) == 1 }

    /// The value's bytes, valid while the result lives (empty for NULL).
    public func bytes(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer {
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        guard let start = PQgetvalue(result, Int32(row), Int32(column)) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: start, count: length)
    }

    /// An integer column (smallint, integer or bigint); `nil` for NULL.
    public func integer(_ row: Int, _ column: Int) -> Int64? {
        isNull(row, column) ? nil : PostgresBinary.anyInteger(bytes(row, column))
    }

    /// A text column; `nil` for NULL.
    public func string(_ row: Int, _ column: Int) -> String? {
        isNull(row, column) ? nil : String(decoding: bytes(row, column), as: UTF8.self)
    }

    public func columnName(_ column: Int) -> String { String(cString: PQfname(result, Int32(column))) }
}

extension PostgresConnection {
    /// Runs a statement with binary parameters and binary results, prepared once per SQL text and
    /// parameter types on this connection.
    @discardableResult
    public func run(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        let types = parameters.map(\.type.rawValue)
        let key = PreparedKey(sql: sql, types: types)
        let name: String
        if let known = prepared[key] {
            name = known
        } else {
            name = "s\(prepared.count + 1)"
            let made = types.withUnsafeBufferPointer {
                PQprepare(handle, name, sql, Int32(types.count), $0.baseAddress)
            }
            defer { PQclear(made) }
            try check(made)
            prepared[key] = name
        }
        let lengths = parameters.map { Int32($0.bytes?.count ?? 0) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        let buffers: [UnsafeMutablePointer<CChar>?] = parameters.map { value -> UnsafeMutablePointer<CChar>? in
            guard let bytes = value.bytes else { return nil }
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, bytes.count))
            for (offset, byte) in bytes.enumerated() { buffer[offset] = CChar(bitPattern: byte) }
            return buffer
        }
        defer { for buffer in buffers { buffer?.deallocate() } }
        let values: [UnsafePointer<CChar>?] = buffers.map { $0.map { UnsafePointer($0) } }
        let result = values.withUnsafeBufferPointer { values in
            lengths.withUnsafeBufferPointer { lengths in
                formats.withUnsafeBufferPointer { formats in
                    PQexecPrepared(
                        handle, name, Int32(parameters.count), values.baseAddress, lengths.baseAddress,
                        formats.baseAddress, 1)
                }
            }
        }
        guard let result else { throw PostgresError(sqlState: "", message: lastError, detail: nil, hint: nil) }
        do { try check(result) } catch {
            PQclear(result)
            throw error
        }
        return PostgresResult(result)
    }

    /// Runs `COPY … FROM STDIN (FORMAT binary)`: `body` writes the rows into a `PostgresCopy`,
    /// which sends them as its buffer fills. Returns the number of rows copied. When `body` throws,
    /// the copy is abandoned (the server discards it) and the error rethrown.
    @discardableResult
    public func copyIn(_ sql: String, _ body: (PostgresCopy) throws -> Void) throws -> Int {
        let started = PQexec(handle, sql)
        defer { PQclear(started) }
        try check(started)
        guard PQresultStatus(started) == PGRES_COPY_IN else {
            throw PostgresError(sqlState: "", message: "\(sql) did not start a copy", detail: nil, hint: nil)
        }
        let copy = PostgresCopy(connection: self)
        var failure: Error?
        do {
            try body(copy)
            try copy.finish()
        } catch {
            failure = error
        }
        let ended = PQputCopyEnd(handle, failure == nil ? nil : "abandoned by the client")
        var copied = 0
        var serverError: Error?
        while let result = PQgetResult(handle) {
            do { try check(result) } catch { serverError = serverError ?? error }
            if PQresultStatus(result) == PGRES_COMMAND_OK { copied = Int(String(cString: PQcmdTuples(result))) ?? 0 }
            PQclear(result)
        }
        if let failure { throw failure }
        if let serverError { throw serverError }
        if ended != 1 {
            throw PostgresError(sqlState: "", message: lastError, detail: nil, hint: nil)
        }
        return copied
    }

    /// The connection's last error message.
    var lastError: String {
        String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func send(_ bytes: [UInt8]) throws {
        let sent = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
        }
        if sent != 1 { throw PostgresError(sqlState: "", message: lastError, detail: nil, hint: nil) }
    }
}

/// The rows of a binary COPY being written: `startRow(fields:)`, then each field (`add`), in the
/// column order the COPY statement names. Sent to the server 256 KiB at a time.
public final class PostgresCopy {
    private let connection: PostgresConnection
    private var buffer: [UInt8] = []
    public private(set) var rows = 0

    init(connection: PostgresConnection) {
        self.connection = connection
        buffer.reserveCapacity(300_000)
        buffer += Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00] + [0, 0, 0, 0] + [0, 0, 0, 0]
    }

    public func startRow(fields: Int) throws {
        if buffer.count >= 262_144 {
            try connection.send(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
        append(UInt16(fields))
        rows += 1
    }

    public func addNull() { append(UInt32(bitPattern: -1)) }

    public func add(_ bytes: some Collection<UInt8>) {
        append(UInt32(bytes.count))
        buffer.append(contentsOf: bytes)
    }

    public func add(_ value: PostgresValue) {
        if let bytes = value.bytes { add(bytes) } else { addNull() }
    }

    public func add(bigint value: Int64) {
        append(UInt32(8))
        append(UInt64(bitPattern: value))
    }

    public func add(integer value: Int32) {
        append(UInt32(4))
        append(UInt32(bitPattern: value))
    }

    public func add(smallint value: Int16) {
        append(UInt32(2))
        append(UInt16(bitPattern: value))
    }

    /// A float8 or float4 field by its bit pattern.
    public func add(bits value: UInt64) {
        append(UInt32(8))
        append(value)
    }

    public func add(bits value: UInt32) {
        append(UInt32(4))
        append(value)
    }

    /// A numeric field from plain decimal text; false (nothing written) when it is not one.
    public func add(numericPlainUTF8 text: UnsafeBufferPointer<UInt8>) -> Bool {
        let lengthAt = buffer.count
        append(UInt32(0))
        guard PostgresBinary.appendNumeric(plainUTF8: text, to: &buffer) else {
            buffer.removeLast(4)
            return false
        }
        let length = UInt32(buffer.count - lengthAt - 4).bigEndian
        withUnsafeBytes(of: length) { bytes in
            for offset in 0..<4 { buffer[lengthAt + offset] = bytes[offset] }
        }
        return true
    }

    private func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    func finish() throws {
        append(UInt16(0xFFFF))
        try connection.send(buffer)
        buffer.removeAll()
    }
}
