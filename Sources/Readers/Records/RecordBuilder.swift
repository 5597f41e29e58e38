import Foundation

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

    /// The bytes of the field being written, from `start` (valid only inside `body`).
    func withField<R>(from start: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        body(UnsafeBufferPointer(start: bytes + start, count: length - start))
    }

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

    @inline(__always) mutating func endField(
        start: Int, column: Int, lineDelta: Int, isNull: Bool, isBlob: Bool = false, isString: Bool = false
    ) {
        addField(
            start: start, end: length, column: column, lineDelta: lineDelta, isNull: isNull, isBlob: isBlob,
            isString: isString)
    }

    /// Adds a field whose bytes are `start..<end` of the record's bytes.
    @inline(__always) mutating func addField(
        start: Int, end: Int, column: Int, lineDelta: Int, isNull: Bool, isBlob: Bool = false,
        isStatedNull: Bool = false, isString: Bool = false
    ) {
        if count == slotCapacity { grow(bytes: length, slots: count + 1) }
        (slots + count).initialize(
            to: Record.Slot(
                start: Int32(truncatingIfNeeded: start), end: Int32(truncatingIfNeeded: end),
                column: Int32(truncatingIfNeeded: column), lineDelta: Int32(truncatingIfNeeded: lineDelta),
                isNull: isNull, isBlob: isBlob, isStatedNull: isStatedNull, isString: isString))
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
