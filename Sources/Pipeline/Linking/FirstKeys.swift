import Readers

/// The keys a source's records have had so far in a run, each with where it first appeared: a
/// record that repeats a key of its own input is told apart from an upsert of a row stored before
/// the run, and rejected naming both places (the first record stays). Keys are the key fields'
/// bytes, compared exactly; kept compactly (the bytes in one arena, entries chained by hash), about
/// 40 bytes per key beyond its bytes. Used by the reading thread only, in input order, so which
/// record counts as first never depends on how batches reach the contexts.
final class FirstKeys {
    private struct Entry {
        var offset: Int
        var length: Int32
        /// The next entry with the same hash, or -1.
        var next: Int32
        var line: Int32
        var record: Int32
    }

    /// Keys that are one small non-negative integer (ids, the usual case): the first line by value,
    /// in pages of 65,536 allocated as values arrive (4 bytes a value: 1,000,000 dense ids take 4 MB).
    /// A page is allocated only while the pages hold at least one key per 16 slots (past the first
    /// four): sparse ids go to the arena instead, and a page that went there stays there.
    private var pages: [[Int32]?] = []
    private var hashedPages = Set<Int>()
    private var allocatedPages = 0, pagedKeys = 0
    /// Pages allocated (256 KiB each).
    var pageCount: Int { allocatedPages }
    static let integerLimit = 1 << 26
    private var arena: [UInt8] = []
    private var entries: [Entry] = []
    private var firstByHash: [Int: Int32] = [:]
    /// The record's key being built (`append` after `begin`).
    private var key: [UInt8] = []
    /// Whether a part of the key being built is null: such keys are not compared.
    private var hasNull = false

    /// Registers a one-integer key (`0..<integerLimit`, written as its digits) first seen at `line`
    /// (`record` its number); returns where it appeared first when it did before.
    func register(integer value: Int, line: Int, record: Int?) -> (line: Int, record: Int?)? {
        let page = value >> 16, slot = value & 0xFFFF
        if page >= pages.count { pages += repeatElement(nil, count: page + 1 - pages.count) }
        if pages[page] == nil {
            guard !hashedPages.contains(page), allocatedPages < 4 || pagedKeys >= allocatedPages << 12 else {
                hashedPages.insert(page)
                begin()
                var digits = String(value)
                digits.withUTF8 { append(UnsafeRawBufferPointer($0)) }
                return register(line: line, record: record)
            }
            pages[page] = [Int32](repeating: 0, count: 1 << 16)
            allocatedPages += 1
        }
        let first = pages[page]![slot]
        if first != 0 { return (Int(first), nil) }
        pages[page]![slot] = Int32(clamping: max(line, 1))
        pagedKeys += 1
        return nil
    }

    func begin() {
        key.removeAll(keepingCapacity: true)
        hasNull = false
    }

    /// Adds a field of the key (its length first, so that parts cannot run into each other).
    func append(_ bytes: UnsafeRawBufferPointer?) {
        guard let bytes else {
            hasNull = true
            return
        }
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: bytes.count)) { key.append(contentsOf: $0) }
        key.append(contentsOf: bytes)
    }

    /// Registers the key built since `begin` for the record at `line` (`record` its number);
    /// returns where the key appeared first when it did before, `nil` when it is new (or null).
    func register(line: Int, record: Int?) -> (line: Int, record: Int?)? {
        guard !hasNull else { return nil }
        let hash = key.hashValue
        var index = firstByHash[hash] ?? -1
        while index >= 0 {
            let entry = entries[Int(index)]
            if Int(entry.length) == key.count, arena[entry.offset..<entry.offset + key.count].elementsEqual(key) {
                return (Int(entry.line), entry.record < 0 ? nil : Int(entry.record))
            }
            index = entry.next
        }
        entries.append(
            Entry(
                offset: arena.count, length: Int32(truncatingIfNeeded: key.count), next: firstByHash[hash] ?? -1,
                line: Int32(clamping: line), record: Int32(clamping: record ?? -1)))
        arena.append(contentsOf: key)
        firstByHash[hash] = Int32(entries.count - 1)
        return nil
    }
}

/// A source's check for records repeating a key of an earlier record (`FirstKeys`), on the fields
/// its mapping reads the key from. Not made for sources whose key is not read from fields as they
/// are (`#row`).
final class KeyRepeats {
    /// Whether a repeat is rejected (`duplicates: reject`), or updates the object (`last-wins`).
    let rejects: Bool
    private let names: [String]
    private let nulls: [[UInt8]]
    private let keys = FirstKeys()
    private var context: Record.Context?
    private var fields: [Int]?

    init?(_ source: PipelineConfig.Source) {
        let mapping = source.mapping
        // With a `where` filter the first record may be skipped, and the next one is then the first
        // to import: not told from here.
        let names = mapping.repeatKey.map(\.from)
        guard !names.isEmpty, mapping.filter == nil, !names.contains(Record.ordinalFieldName) else { return nil }
        rejects = source.duplicates == .reject
        self.names = names
        nulls = source.format == .csv ? source.csv.nullMarkers.map { Array($0.utf8) } : []
    }

    /// Registers the record's key; returns where the key appeared first when it did before.
    func repeated(_ record: Record) -> SourcePosition? {
        if record.context !== context {
            context = record.context
            let fields = names.map { name -> Int? in
                if let schema = record.schema { return schema.index(of: name) }
                return Int(name).map { $0 - 1 }  // CSV without a header: columns by number
            }
            self.fields = fields.allSatisfy { $0 != nil } ? fields.map { $0! } : nil
        }
        guard let fields else { return nil }
        if fields.count == 1, fields[0] < record.count, !record.isNull(fields[0]),
            let value = record.withBytes(fields[0], Self.smallInteger)
        {
            return keys.register(integer: value, line: record.line, record: record.number).map { first in
                SourcePosition(file: record.context.file, line: first.line, column: 1, record: first.record)
            }
        }
        keys.begin()
        for field in fields {
            guard field < record.count, !record.isNull(field) else {
                keys.append(nil)
                continue
            }
            record.withBytes(field) { bytes in
                keys.append(nulls.contains { $0.elementsEqual(bytes) } ? nil : bytes)
            }
        }
        return keys.register(line: record.line, record: record.number).map { first in
            SourcePosition(file: record.context.file, line: first.line, column: 1, record: first.record)
        }
    }

    /// Digits of a non-negative integer below `FirstKeys.integerLimit`, written as a number writes
    /// itself (no sign, no leading zero): only such text is the same key exactly when it is the same value.
    static func smallInteger(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let first = bytes.first, first &- 48 < 10, first != 48 || bytes.count == 1, bytes.count <= 8 else {
            return nil
        }
        var value = 0
        for byte in bytes {
            guard byte &- 48 < 10 else { return nil }
            value = value * 10 + Int(byte &- 48)
        }
        return value < FirstKeys.integerLimit ? value : nil
    }
}
