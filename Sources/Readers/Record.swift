import Foundation

/// Reads records one at a time: a throwing pull iterator (iteration can fail and cannot restart).
///
/// ```swift
/// var reader = try CSVReader(path: "orders.csv")
/// while let record = try reader.next() { print(record.string(0) ?? "NULL") }
/// ```
public protocol RecordReader {
    /// The next record, or `nil` at the end of the input.
    /// - Throws: `ReaderError`; after a recoverable one (`isRecoverable`) the next call goes on with the
    ///   following record.
    mutating func next() throws -> Record?
}

/// The field names shared by the records of one kind (a CSV header, a table's columns, XML field paths).
public final class RecordSchema: Sendable {
    public let names: [String]
    private let indexByName: [String: Int]

    public init(names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        for (i, name) in names.enumerated() where index[name] == nil { index[name] = i }
        indexByName = index
    }

    /// The index of the first field called `name`.
    public func index(of name: String) -> Int? { indexByName[name] }
}

/// One record of an input: its fields as bytes (valid UTF-8), which may be null, and where it came from.
///
/// Bytes stay bytes until a field is asked for as a string; `withBytes(_:_:)` gives them without a copy.
/// A reader reuses a record's storage for the next record once nobody holds the record any more, so
/// reading allocates nothing per record in the usual loop.
public struct Record: Sendable {
    /// What the records of one kind from one input share: the file, field names, the record kind.
    public final class Context: Sendable {
        public let file: String
        public let schema: RecordSchema?
        /// For nested records (XML children): which kind of record this is (`nil` for top-level records).
        public let kind: String?

        public init(file: String, schema: RecordSchema? = nil, kind: String? = nil) {
            self.file = file
            self.schema = schema
            self.kind = kind
        }
    }

    public let context: Context
    /// The 1-based line and byte column where the record starts, and its 1-based number in the input.
    public let line: Int
    public let column: Int
    public let number: Int?
    /// For nested records: the number of the record this one belongs to.
    public var parentRecord: Int?

    /// Where the record starts.
    public var position: SourcePosition {
        SourcePosition(file: context.file, line: line, column: column, record: number)
    }
    /// Field names, when the input has them.
    public var schema: RecordSchema? { context.schema }
    public var kind: String? { context.kind }

    /// The record's bytes and field slots: a stretch of a buffer that readers fill with many records.
    @usableFromInline var storage: Storage

    /// Where a record is in its buffer.
    @usableFromInline struct Storage: Sendable {
        @usableFromInline let buffer: RecordBuffer
        @usableFromInline let byteStart: Int32
        let byteCount: Int32
        @usableFromInline let slotStart: Int32
        @usableFromInline let count: Int32
    }

    @usableFromInline struct Slot: Sendable {
        @usableFromInline var start: Int32
        @usableFromInline var end: Int32
        /// 1-based byte column of the field's first byte.
        var column: Int32
        /// Lines between the record's first line and the field's.
        var lineDelta: Int32
        @usableFromInline var isNull: Bool
    }

    init(context: Context, line: Int, column: Int, number: Int?, storage: Storage) {
        self.context = context
        self.line = line
        self.column = column
        self.number = number
        self.storage = storage
    }

    /// A record of the given field values (`nil` for null), for tests and writers.
    public init(fields: [String?], context: Context, line: Int = 1, number: Int? = nil) {
        var builder = RecordBuilder()
        for field in fields {
            let start = builder.length
            if let field {
                var text = field
                text.withUTF8 { builder.append($0.baseAddress!, $0.count) }
            }
            builder.endField(start: start, column: 1, lineDelta: 0, isNull: field == nil)
        }
        self.init(context: context, line: line, column: 1, number: number, storage: builder.finish())
    }

    init(byteFields: [[UInt8]?], context: Context, line: Int, column: Int, number: Int?) {
        var builder = RecordBuilder()
        for field in byteFields {
            let start = builder.length
            if let field, !field.isEmpty { field.withUnsafeBufferPointer { builder.append($0.baseAddress!, $0.count) } }
            builder.endField(start: start, column: column, lineDelta: 0, isNull: field == nil)
        }
        self.init(context: context, line: line, column: column, number: number, storage: builder.finish())
    }

    @inlinable public var count: Int { Int(storage.count) }

    /// Whether field `index` is null (a null marker, an absent XML node, SQL NULL).
    @inlinable public func isNull(_ index: Int) -> Bool { slot(index).isNull }

    @inlinable func slot(_ index: Int) -> Slot {
        precondition(index >= 0 && index < count, "field \(index) of a record with \(count) fields")
        return storage.buffer.slots[Int(storage.slotStart) + index]
    }

    /// Calls `body` with the bytes of field `index` (empty for null), valid only inside `body`.
    @inlinable public func withBytes<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let slot = slot(index)
        return try withExtendedLifetime(storage.buffer) {
            try body(
                UnsafeRawBufferPointer(
                    start: storage.buffer.bytes + Int(storage.byteStart) + Int(slot.start),
                    count: Int(slot.end - slot.start)))
        }
    }

    /// Calls `body` with all the record's bytes (its fields' bytes, in the order they were read).
    func withAllBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withExtendedLifetime(storage.buffer) {
            try body(
                UnsafeRawBufferPointer(
                    start: storage.buffer.bytes + Int(storage.byteStart), count: Int(storage.byteCount)))
        }
    }

    /// The record with storage of its own: what to keep after its batch, so that it does not hold
    /// the other records of the buffer it was read into.
    public func compacted() -> Record {
        var copy = self
        let buffer = RecordBuffer(byteCapacity: max(Int(storage.byteCount), 1), slotCapacity: max(count, 1))
        withAllBytes {
            if $0.count > 0 {
                buffer.bytes.update(from: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: $0.count)
            }
        }
        buffer.slots.initialize(from: storage.buffer.slots + Int(storage.slotStart), count: count)
        copy.storage = Storage(
            buffer: buffer, byteStart: 0, byteCount: storage.byteCount, slotStart: 0, count: storage.count)
        return copy
    }

    /// The number of bytes in field `index`.
    @inlinable public func byteCount(_ index: Int) -> Int {
        let slot = slot(index)
        return Int(slot.end - slot.start)
    }

    /// The bytes of field `index`.
    public func bytes(_ index: Int) -> [UInt8] { withBytes(index) { Array($0) } }

    /// Field `index` as a string, `nil` when null.
    public func string(_ index: Int) -> String? {
        if isNull(index) { return nil }
        return withBytes(index) { String(decoding: $0, as: UTF8.self) }
    }

    /// The field called `name` as a string (`nil` when null or when there is no such field).
    public subscript(name: String) -> String? {
        guard let index = schema?.index(of: name), index < count else { return nil }
        return string(index)
    }

    /// Every field as a string (`nil` for null).
    public var strings: [String?] { (0..<count).map(string) }

    /// Where field `index` starts.
    public func position(ofField index: Int) -> SourcePosition {
        var position = self.position
        let slot = slot(index)
        position.line += Int(slot.lineDelta)
        position.column = Int(slot.column)
        return position
    }

    /// Replaces the bytes of field `index` (for lossy decoding), keeping the other fields.
    mutating func replaceBytes(ofField index: Int, with bytes: [UInt8]) {
        var builder = RecordBuilder()
        for i in 0..<count {
            let start = builder.length
            let slot = slot(i)
            if i == index {
                bytes.withUnsafeBufferPointer { if $0.count > 0 { builder.append($0.baseAddress!, $0.count) } }
            } else {
                withBytes(i) {
                    if $0.count > 0 { builder.append($0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count) }
                }
            }
            builder.endField(
                start: start, column: Int(slot.column), lineDelta: Int(slot.lineDelta), isNull: slot.isNull)
        }
        storage = builder.finish()
    }
}

/// Bytes and field slots of records: a builder fills it with one record after another.
///
/// `@unchecked Sendable`: a buffer is written only by the `RecordBuilder` that owns it, and only past
/// the records it has published (those are never written again, and a buffer holding one is never
/// reallocated); it starts over only while no `Record` refers to it (`isKnownUniquelyReferenced`).
/// Its fields are `@exclusivity(unchecked)` for the same reason: the tokenizers fill them byte by byte.
@usableFromInline final class RecordBuffer: @unchecked Sendable {
    @exclusivity(unchecked) @usableFromInline var bytes: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) var byteCapacity: Int
    @exclusivity(unchecked) @usableFromInline var slots: UnsafeMutablePointer<Record.Slot>
    @exclusivity(unchecked) var slotCapacity: Int

    init(byteCapacity: Int = 256, slotCapacity: Int = 16) {
        self.byteCapacity = byteCapacity
        self.slotCapacity = slotCapacity
        bytes = .allocate(capacity: byteCapacity)
        slots = .allocate(capacity: slotCapacity)
    }

    deinit {
        bytes.deallocate()
        slots.deallocate()
    }
}

/// Builds records into shared buffers: readers append field bytes, end fields, and publish. Records
/// follow each other in a buffer, so a batch of records costs a few allocations, not a few per record;
/// a record that outgrows the room left moves (its bytes so far) to a new buffer.
struct RecordBuilder {
    private(set) var buffer: RecordBuffer
    /// The record being built: its bytes and slots so far, and the room it has.
    private var bytes: UnsafeMutablePointer<UInt8>
    private var byteCapacity: Int
    private(set) var length = 0
    private var slots: UnsafeMutablePointer<Record.Slot>
    private var slotCapacity: Int
    private(set) var count = 0
    /// Where the record being built starts in `buffer`.
    private var byteStart = 0
    private var slotStart = 0
    /// `buffer` holds published records: it is never reallocated, only left for a new one.
    private var holdsRecords = false
    /// A record was published; the next one starts after it.
    private var published = false
    /// The size of a new buffer.
    private let bufferBytes: Int
    private let bufferSlots: Int

    /// A builder for one record or a few (tests, writers).
    init() { self.init(bufferBytes: 256, bufferSlots: 16) }

    /// A builder for a reader's records, `bufferBytes` and `bufferSlots` to a buffer.
    init(bufferBytes: Int, bufferSlots: Int) {
        self.bufferBytes = bufferBytes
        self.bufferSlots = bufferSlots
        buffer = RecordBuffer(byteCapacity: bufferBytes, slotCapacity: bufferSlots)
        bytes = buffer.bytes
        byteCapacity = bufferBytes
        slots = buffer.slots
        slotCapacity = bufferSlots
    }

    /// The builder of a reader: buffers of 32 KB and 2,048 fields.
    static func forReader() -> RecordBuilder { RecordBuilder(bufferBytes: 1 << 15, bufferSlots: 1 << 11) }

    /// Starts a record (again, if one was started and not published): after the last published
    /// record, or at the start of the buffer when no record holds it any more.
    mutating func begin() {
        if published {
            published = false
            if isKnownUniquelyReferenced(&buffer) {
                byteStart = 0
                slotStart = 0
                holdsRecords = false
            } else {
                byteStart += length
                slotStart += count
                holdsRecords = true
                // Little room left: the next record starts a new buffer rather than moving later.
                if buffer.byteCapacity - byteStart < bufferBytes / 8
                    || buffer.slotCapacity - slotStart < bufferSlots / 8
                {
                    buffer = RecordBuffer(byteCapacity: bufferBytes, slotCapacity: bufferSlots)
                    byteStart = 0
                    slotStart = 0
                    holdsRecords = false
                }
            }
            bytes = buffer.bytes + byteStart
            byteCapacity = buffer.byteCapacity - byteStart
            slots = buffer.slots + slotStart
            slotCapacity = buffer.slotCapacity - slotStart
        }
        length = 0
        count = 0
    }

    /// The byte at `index` of the record so far.
    subscript(index: Int) -> UInt8 { bytes[index] }

    /// Drops bytes from the end (trimming).
    mutating func truncate(to newLength: Int) { length = newLength }

    /// Whether bytes `start..<length` equal `marker`.
    func currentField(from start: Int, equals marker: [UInt8]) -> Bool {
        guard length - start == marker.count else { return false }
        return marker.withUnsafeBufferPointer { marker in
            marker.isEmpty || memcmp(marker.baseAddress!, bytes + start, marker.count) == 0
        }
    }

    @inline(__always) mutating func append(_ source: UnsafePointer<UInt8>, _ n: Int) {
        if length + n > byteCapacity { grow(bytes: length + n, slots: count) }
        (bytes + length).update(from: source, count: n)
        length += n
    }

    @inline(__always) mutating func append(_ byte: UInt8) {
        if length + 1 > byteCapacity { grow(bytes: length + 1, slots: count) }
        bytes[length] = byte
        length += 1
    }

    /// Makes room for `neededBytes` and `neededSlots`: grows the buffer when it holds no published
    /// record, else moves the record so far to a new buffer.
    private mutating func grow(bytes neededBytes: Int, slots neededSlots: Int) {
        var newBytes = max(byteCapacity, 16), newSlots = max(slotCapacity, 4)
        while newBytes < neededBytes { newBytes *= 2 }
        while newSlots < neededSlots { newSlots *= 2 }
        if holdsRecords {
            let moved = RecordBuffer(byteCapacity: max(bufferBytes, newBytes), slotCapacity: max(bufferSlots, newSlots))
            moved.bytes.update(from: bytes, count: length)
            moved.slots.initialize(from: slots, count: count)
            buffer = moved
            byteStart = 0
            slotStart = 0
            holdsRecords = false
        } else {
            if newBytes > buffer.byteCapacity {
                let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newBytes)
                grown.update(from: buffer.bytes, count: length)
                buffer.bytes.deallocate()
                buffer.bytes = grown
                buffer.byteCapacity = newBytes
            }
            if newSlots > buffer.slotCapacity {
                let grown = UnsafeMutablePointer<Record.Slot>.allocate(capacity: newSlots)
                grown.moveInitialize(from: buffer.slots, count: count)
                buffer.slots.deallocate()
                buffer.slots = grown
                buffer.slotCapacity = newSlots
            }
        }
        bytes = buffer.bytes
        byteCapacity = buffer.byteCapacity
        slots = buffer.slots
        slotCapacity = buffer.slotCapacity
    }

    @inline(__always) mutating func endField(start: Int, column: Int, lineDelta: Int, isNull: Bool) {
        addField(start: start, end: length, column: column, lineDelta: lineDelta, isNull: isNull)
    }

    /// Adds a field whose bytes are `start..<end` of the record's bytes.
    @inline(__always) mutating func addField(start: Int, end: Int, column: Int, lineDelta: Int, isNull: Bool) {
        if count == slotCapacity { grow(bytes: length, slots: count + 1) }
        (slots + count).initialize(
            to: Record.Slot(
                start: Int32(truncatingIfNeeded: start), end: Int32(truncatingIfNeeded: end),
                column: Int32(truncatingIfNeeded: column), lineDelta: Int32(truncatingIfNeeded: lineDelta),
                isNull: isNull))
        count += 1
    }

    /// Publishes the record's bytes and fields.
    mutating func finish() -> Record.Storage {
        published = true
        return Record.Storage(
            buffer: buffer, byteStart: Int32(truncatingIfNeeded: byteStart),
            byteCount: Int32(truncatingIfNeeded: length),
            slotStart: Int32(truncatingIfNeeded: slotStart), count: Int32(truncatingIfNeeded: count))
    }
}
