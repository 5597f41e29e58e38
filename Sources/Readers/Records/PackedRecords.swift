/// Records kept compactly once their batch is done (records waiting for a parent, a million of
/// which may wait): each record's fields, places and context number in a few bytes of one shared
/// array — about the size of its text plus a byte or two per field — read back one at a time.
/// Integers of the caller's own (a group's place and size) can go between the records. The bytes
/// are kept in chunks of about a megabyte, so growing never copies (nor holds twice) what is there.
public struct PackedRecords: Sendable {
    /// The chunks; an offset is a chunk's number times 2^32 plus the place in it. A value or record
    /// never spans two chunks (a new chunk starts between them), so reading one moves inside a chunk.
    private var chunks: [[UInt8]] = [[]]
    private static let chunkBytes = 1 << 20
    /// The records' contexts, by number (records of one input share a few).
    private var contexts: [Record.Context] = []
    private var contextNumbers: [ObjectIdentifier: Int] = [:]

    public init() {}

    /// The bytes held.
    public var byteCount: Int { chunks.reduce(0) { $0 + $1.count } }

    /// Where the next value appended goes.
    public var end: Int { (chunks.count - 1) << 32 | chunks[chunks.count - 1].count }

    /// Frees the chunks wholly before `offset` (values read for the last time).
    public mutating func release(before offset: Int) {
        for chunk in 0..<min(offset >> 32, chunks.count - 1) where !chunks[chunk].isEmpty { chunks[chunk] = [] }
    }

    /// Starts a new chunk when the last is full (between values only).
    private mutating func makeRoom() {
        guard chunks[chunks.count - 1].count >= Self.chunkBytes else { return }
        chunks.append([])
        chunks[chunks.count - 1].reserveCapacity(Self.chunkBytes + 4096)
    }

    public mutating func append(integer value: Int) {
        makeRoom()
        appendInChunk(value)
    }

    private mutating func appendInChunk(_ value: Int) {
        // Zigzag, then 7 bits a byte.
        var rest = UInt64(bitPattern: Int64((value << 1) ^ (value >> 63)))
        let last = chunks.count - 1
        while rest >= 0x80 {
            chunks[last].append(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        chunks[last].append(UInt8(rest))
    }

    /// The integer at `offset`, which moves past it.
    public func integer(at offset: inout Int) -> Int {
        var chunk = offset >> 32, place = offset & 0xffff_ffff
        if place == chunks[chunk].count {  // the end of a chunk: the next value starts the next one
            chunk += 1
            place = 0
        }
        var value: UInt64 = 0, shift: UInt64 = 0
        while true {
            let byte = chunks[chunk][place]
            place += 1
            value |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        offset = chunk << 32 | place
        return Int(Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1))
    }

    private mutating func append(optional value: Int?) { appendInChunk(value.map { $0 + 1 } ?? 0) }

    private func optional(at offset: inout Int) -> Int? {
        let value = integer(at: &offset)
        return value == 0 ? nil : value - 1
    }

    public mutating func append(_ record: Record) {
        makeRoom()
        let id = ObjectIdentifier(record.context)
        let context: Int
        if let known = contextNumbers[id] {
            context = known
        } else {
            context = contexts.count
            contexts.append(record.context)
            contextNumbers[id] = context
        }
        appendInChunk(context)
        appendInChunk(record.line)
        appendInChunk(record.column)
        append(optional: record.number)
        append(optional: record.parentRecord)
        append(optional: record.ordinal == record.number ? nil : record.ordinal)
        appendInChunk(record.count)
        let last = chunks.count - 1
        for index in 0..<record.count {
            let slot = record.slot(index)
            appendInChunk(
                (slot.isNull ? 1 : 0) | (slot.isBlob ? 2 : 0) | (slot.isStatedNull ? 4 : 0) | (slot.isString ? 8 : 0))
            appendInChunk(Int(slot.column))
            appendInChunk(Int(slot.lineDelta))
            appendInChunk(Int(slot.end - slot.start))
            record.withBytes(index) { chunks[last].append(contentsOf: $0) }
        }
    }

    /// The record at `offset`, which moves past it; it has storage of its own.
    public func record(at offset: inout Int) -> Record {
        let context = contexts[integer(at: &offset)]
        let chunk = offset >> 32  // the rest of the record is in this chunk
        let line = integer(at: &offset), column = integer(at: &offset)
        let number = optional(at: &offset), parent = optional(at: &offset), ordinal = optional(at: &offset)
        let count = integer(at: &offset)
        // The fields' headers first, to size the buffer.
        var scan = offset, total = 0
        for _ in 0..<count {
            for _ in 0..<3 { _ = integer(at: &scan) }
            let length = integer(at: &scan)
            total += length
            scan += length
        }
        let buffer = RecordBuffer(byteCapacity: max(total, 1), slotCapacity: max(count, 1))
        var start = 0
        for index in 0..<count {
            let flags = integer(at: &offset)
            let fieldColumn = integer(at: &offset), lineDelta = integer(at: &offset), length = integer(at: &offset)
            chunks[chunk].withUnsafeBufferPointer {
                if length > 0 {
                    (buffer.bytes + start).update(from: $0.baseAddress! + (offset & 0xffff_ffff), count: length)
                }
            }
            offset += length
            (buffer.slots + index).initialize(
                to: Record.Slot(
                    start: Int32(start), end: Int32(start + length), column: Int32(fieldColumn),
                    lineDelta: Int32(lineDelta), isNull: flags & 1 != 0, isBlob: flags & 2 != 0,
                    isStatedNull: flags & 4 != 0, isString: flags & 8 != 0))
            start += length
        }
        var record = Record(
            context: context, line: line, column: column, number: number,
            storage: Record.Storage(
                buffer: buffer, byteStart: 0, byteCount: Int32(total), slotStart: 0, count: Int32(count)))
        record.parentRecord = parent
        if let ordinal { record.ordinal = ordinal }
        return record
    }
}
