import Foundation

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
        /// For rows of an SQL INSERT with a conflict clause: what becomes of a row whose key repeats.
        public let conflict: Conflict?
        /// The input types its values (JSON: a string is marked `isString`; anything else is not text).
        public let isTyped: Bool

        public init(
            file: String, schema: RecordSchema? = nil, kind: String? = nil, conflict: Conflict? = nil,
            isTyped: Bool = false
        ) {
            self.file = file
            self.schema = schema
            self.kind = kind
            self.conflict = conflict
            self.isTyped = isTyped
        }

        /// The same context for rows of an INSERT with `conflict`.
        public func with(conflict: Conflict?) -> Context {
            Context(file: file, schema: schema, kind: kind, conflict: conflict, isTyped: isTyped)
        }
    }

    public let context: Context
    /// The 1-based line and byte column where the record starts, and its 1-based number in the input.
    public let line: Int
    public let column: Int
    public let number: Int?
    /// For nested records: the number of the record this one belongs to.
    public var parentRecord: Int?
    /// For a table's rows: a SQLite file's row's rowid (when it has one), a dump's row's 1-based
    /// place among its table's rows; else `number`. What a mapping's `#row` field gives.
    public var ordinal: Int? {
        get { tableRow ?? number }
        set { tableRow = newValue }
    }
    private var tableRow: Int?

    /// What SQLite does with a row whose key an earlier row holds, as the row's INSERT says
    /// (`INSERT OR REPLACE`, `REPLACE INTO`, `INSERT OR IGNORE`); `nil`: the row is refused.
    public enum Conflict: UInt8, Sendable {
        /// The later row replaces the earlier.
        case replace
        /// The later row is left out; the earlier stays.
        case ignore
    }
    /// For a row of an SQL INSERT with a conflict clause: what becomes of it when its key repeats
    /// (kept by the context, which rows of one statement share).
    public var conflict: Conflict? { context.conflict }

    /// The field name a mapping gives to read `ordinal` (a key for rows of a table without one, so
    /// that a re-import finds them again).
    public static let ordinalFieldName = "#row"

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
        /// The field holds a SQL BLOB, as lowercase hexadecimal text.
        var isBlob = false
        /// The input wrote null (JSON's `null`) rather than leaving the field out.
        var isStatedNull = false
        /// The input wrote the value as a string (JSON's `"…"`), not a number or a word.
        var isString = false
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

    init(byteFields: [[UInt8]?], blobs: Set<Int> = [], context: Context, line: Int, column: Int, number: Int?) {
        var builder = RecordBuilder()
        for (index, field) in byteFields.enumerated() {
            let start = builder.length
            if let field, !field.isEmpty { field.withUnsafeBufferPointer { builder.append($0.baseAddress!, $0.count) } }
            builder.endField(
                start: start, column: column, lineDelta: 0, isNull: field == nil, isBlob: blobs.contains(index))
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

    /// The bytes of all the record's fields (what it holds in memory, about).
    public var totalByteCount: Int { Int(storage.byteCount) }

    /// The number of bytes in field `index`.
    @inlinable public func byteCount(_ index: Int) -> Int {
        let slot = slot(index)
        return Int(slot.end - slot.start)
    }

    /// Whether field `index` holds a SQL BLOB (its text is the bytes in lowercase hexadecimal).
    public func isBlob(_ index: Int) -> Bool { slot(index).isBlob }

    /// Whether field `index` is a null the input wrote (JSON's `null`), not a member it left out.
    public func isStatedNull(_ index: Int) -> Bool { slot(index).isStatedNull }

    /// Whether field `index` was written as a string (JSON's `"007"`), not a number or a word:
    /// inference keeps such a column text.
    public func isString(_ index: Int) -> Bool { slot(index).isString }

    /// Whether field `index` was written as a number or a word of a typed input (JSON's `8001`,
    /// `true`), not as a string: only JSON's records say so.
    public func isTyped(_ index: Int) -> Bool { context.isTyped && !slot(index).isNull && !slot(index).isString }

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
                start: start, column: Int(slot.column), lineDelta: Int(slot.lineDelta), isNull: slot.isNull,
                isBlob: slot.isBlob)
        }
        storage = builder.finish()
    }
}
