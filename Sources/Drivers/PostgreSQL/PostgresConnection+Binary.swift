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
        try endStream()
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
        try endStream()
        let copy = try beginCopy(sql)
        do {
            try body(copy)
            try copy.finish()
        } catch {
            _ = try? endCopy(abandoning: true)
            throw error
        }
        return try endCopy(abandoning: false)
    }

    /// Appends rows to a `COPY … FROM STDIN (FORMAT binary)` that stays open after the call, so the
    /// server inserts them while the caller goes on. The COPY ends — the server's error, if any,
    /// thrown then — at the connection's next other call, at `endStream()`, at a `streamCopy` of
    /// other SQL, or at the first call `restartAfter` seconds after it began (a statement timeout
    /// applies to about that much). The rows `body` writes are sent together at its end; when it
    /// throws, they are dropped and the COPY goes on.
    public func streamCopy(
        _ sql: String, restartAfter seconds: Double = 1, _ body: (PostgresCopy) throws -> Void
    ) throws {
        if let open = stream,
            open.sql != sql || DispatchTime.now().uptimeNanoseconds - open.began > UInt64(seconds * 1e9)
        {
            try endStream()
        }
        try endStream(ifFailed: true)
        if stream == nil { stream = (sql, try beginCopy(sql), DispatchTime.now().uptimeNanoseconds) }
        let copy = stream!.copy
        copy.beginBatch()
        do {
            try body(copy)
        } catch {
            if !copy.dropBatch() { fail(stream: error) }
            throw error
        }
        do { try copy.sendBatch() } catch {
            fail(stream: error)
            throw error
        }
    }

    /// Ends the COPY `streamCopy` left open, if any: throws the server's error for its rows.
    /// `ifFailed`: only throws the failure of an earlier one.
    public func endStream(ifFailed: Bool = false) throws {
        if let streamFailure { throw streamFailure }
        guard !ifFailed, let open = stream else { return }
        stream = nil
        do {
            try open.copy.finish()
            _ = try endCopy(abandoning: false)
        } catch {
            fail(stream: error)
            throw streamFailure!
        }
    }

    /// Gives an open COPY up (the server discards it and aborts the transaction): before a rollback.
    func abandonStream() {
        if stream != nil {
            stream = nil
            _ = try? endCopy(abandoning: true)
        }
        streamFailure = nil
    }

    private func fail(stream error: Error) {
        if stream != nil {
            stream = nil
            _ = try? endCopy(abandoning: true)
        }
        streamFailure =
            error as? PostgresError
            ?? PostgresError(sqlState: "", message: "a COPY was abandoned: \(error)", detail: nil, hint: nil)
    }

    private func beginCopy(_ sql: String) throws -> PostgresCopy {
        let started = PQexec(handle, sql)
        defer { PQclear(started) }
        try check(started)
        guard PQresultStatus(started) == PGRES_COPY_IN else {
            throw PostgresError(sqlState: "", message: "\(sql) did not start a copy", detail: nil, hint: nil)
        }
        return PostgresCopy(connection: self)
    }

    /// Ends the COPY in progress (its rows sent, or abandoned) and reads its result: rows copied.
    private func endCopy(abandoning: Bool) throws -> Int {
        let ended = PQputCopyEnd(handle, abandoning ? "abandoned by the client" : nil)
        var copied = 0
        var serverError: Error?
        while let result = PQgetResult(handle) {
            do { try check(result) } catch { serverError = serverError ?? error }
            if PQresultStatus(result) == PGRES_COMMAND_OK { copied = Int(String(cString: PQcmdTuples(result))) ?? 0 }
            PQclear(result)
        }
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

    func flush() throws {
        if PQflush(handle) != 0 { throw PostgresError(sqlState: "", message: lastError, detail: nil, hint: nil) }
    }

    func send(_ bytes: UnsafeRawBufferPointer) throws {
        let sent = PQputCopyData(handle, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
        if sent != 1 { throw PostgresError(sqlState: "", message: lastError, detail: nil, hint: nil) }
    }
}

/// The rows of a binary COPY being written: `startRow(fields:)`, then each field (`add`), in the
/// column order the COPY statement names. Written into one buffer (the hot path of a load: plain
/// stores, no array growth checks) and sent to the server 256 KiB at a time.
public final class PostgresCopy {
    private let connection: PostgresConnection
    private var buffer: UnsafeMutableRawPointer
    private var capacity = 1 << 19
    private var count = 0
    public private(set) var rows = 0
    /// When the buffer holds this much at the start of a row, it is sent.
    private static let sendAt = 1 << 18
    /// A streamed batch (`streamCopy`) is held until its end, up to this much.
    private static let heldAtMost = 1 << 24
    /// The streamed batch being written: where it began, and whether part of it is sent already.
    private var batch: (start: Int, rows: Int, sent: Bool)?

    init(connection: PostgresConnection) {
        self.connection = connection
        buffer = .allocate(byteCount: capacity, alignment: 8)
        add(raw: Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00] + [0, 0, 0, 0] + [0, 0, 0, 0])
    }

    deinit { buffer.deallocate() }

    public func startRow(fields: Int) throws {
        if count >= (batch == nil ? Self.sendAt : Self.heldAtMost) {
            try connection.send(UnsafeRawBufferPointer(start: buffer, count: count))
            count = 0
            batch?.sent = true
        }
        append(UInt16(fields))
        rows += 1
    }

    public func addNull() { append(UInt32(bitPattern: -1)) }

    public func add(_ bytes: some Collection<UInt8>) {
        append(UInt32(bytes.count))
        add(raw: bytes)
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

    /// A numeric field (`PostgresBinary.numericWords`).
    public func add(numericMantissa mantissa: UInt128, exponent: Int, isNegative: Bool) {
        let lengthAt = count
        append(UInt32(0))
        PostgresBinary.numericWords(mantissa: mantissa, exponent: exponent, isNegative: isNegative) { append($0) }
        buffer.storeBytes(of: UInt32(count - lengthAt - 4).bigEndian, toByteOffset: lengthAt, as: UInt32.self)
    }

    private func reserve(_ bytes: Int) {
        guard count + bytes > capacity else { return }
        while count + bytes > capacity { capacity *= 2 }
        let grown = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        grown.copyMemory(from: buffer, byteCount: count)
        buffer.deallocate()
        buffer = grown
    }

    @inline(__always) private func append<T: FixedWidthInteger>(_ value: T) {
        reserve(MemoryLayout<T>.size)
        buffer.storeBytes(of: value.bigEndian, toByteOffset: count, as: T.self)
        count += MemoryLayout<T>.size
    }

    private func add(raw bytes: some Collection<UInt8>) {
        reserve(bytes.count)
        let target = UnsafeMutableRawBufferPointer(start: buffer + count, count: bytes.count)
        if bytes.withContiguousStorageIfAvailable({ target.copyMemory(from: UnsafeRawBufferPointer($0)) }) == nil {
            _ = target.initializeMemory(as: UInt8.self, from: bytes)
        }
        count += bytes.count
    }

    func beginBatch() { batch = (count, rows, false) }

    /// Forgets the rows of the batch; false when part of it was sent already (the COPY is spoilt).
    func dropBatch() -> Bool {
        guard let held = batch else { return true }
        batch = nil
        guard !held.sent else { return false }
        (count, rows) = (held.start, held.rows)
        return true
    }

    /// Sends the batch to the server, now.
    func sendBatch() throws {
        batch = nil
        try connection.send(UnsafeRawBufferPointer(start: buffer, count: count))
        count = 0
        try connection.flush()
    }

    func finish() throws {
        append(UInt16(0xFFFF))
        try connection.send(UnsafeRawBufferPointer(start: buffer, count: count))
        count = 0
    }
}
