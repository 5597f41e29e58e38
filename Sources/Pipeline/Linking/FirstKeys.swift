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

    /// Keys that are one small non-negative integer (ids, the usual case), by value; sparse ids go
    /// to the arena instead.
    private var integers = IntegerFirstLines()
    /// Pages allocated (256 KiB each).
    var pageCount: Int { integers.pageCount }
    private var arena: [UInt8] = []
    private var entries: [Entry] = []
    private var firstByHash: [Int: Int32] = [:]
    /// The record's key being built (`append` after `begin`).
    private var key: [UInt8] = []
    /// Whether a part of the key being built is null: such keys are not compared.
    private var hasNull = false

    /// Registers a one-integer key (`0..<IntegerFirstLines.limit`, written as its digits) first seen
    /// at `line` (`record` its number); returns where it appeared first when it did before. With
    /// `insert` false a new key is only looked for, not registered.
    func register(integer value: Int, line: Int, record: Int?, insert: Bool = true) -> (line: Int, record: Int?)? {
        switch integers.register(value, line: line, insert: insert) {
        case .new: return nil
        case .first(let line): return (line, nil)
        case .elsewhere: return registerDigits(of: value, line: line, record: record, insert: insert)
        }
    }

    /// A one-integer key of a page kept in the arena: its digits, as the general path keys them.
    private func registerDigits(of value: Int, line: Int, record: Int?, insert: Bool) -> (line: Int, record: Int?)? {
        begin()
        var digits = String(value)
        digits.withUTF8 { append(UnsafeRawBufferPointer($0)) }
        return register(line: line, record: record, insert: insert)
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
    func register(line: Int, record: Int?, insert: Bool = true) -> (line: Int, record: Int?)? {
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
        guard insert else { return nil }
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
/// its mapping reads the keys from: the source's key, and the entity's other uniqueness constraints
/// (`Mapping.repeatKeys`). Not made for sources whose key is not read from fields as they are
/// (`#row`) or that filter records (`where`: the first record may be skipped).
final class KeyRepeats {
    /// What becomes of a record whose key appeared before.
    enum Outcome {
        /// It updates the object the first record made: `duplicates: last-wins`, or an SQL row's
        /// `OR REPLACE`, for the source's key.
        case update
        /// It is rejected (or left out, for an SQL row's `OR IGNORE`), naming where the key came first.
        case repeated(Repeat)
    }

    /// Where a repeated key appeared first, and which of `Mapping.repeatKeys` it is (0: the source's key).
    struct Repeat {
        var first: SourcePosition
        var key: Int
    }

    /// Whether a repeat of the source's key is rejected (`duplicates: reject`), or updates the object.
    let rejects: Bool
    private let nulls: [[UInt8]]
    private var checks: [Check]
    private var context: Record.Context?

    private final class Check {
        let key: Int
        let names: [String]
        let keys = FirstKeys()
        var fields: [Int]?
        init(key: Int, names: [String]) {
            self.key = key
            self.names = names
        }
    }

    init?(_ source: PipelineConfig.Source) {
        let mapping = source.mapping
        guard mapping.filter == nil else { return nil }
        checks = mapping.repeatKeys.enumerated().compactMap { index, parts in
            let names = parts.map(\.from)
            guard !names.isEmpty, !names.contains(Record.ordinalFieldName) else { return nil }
            return Check(key: index, names: names)
        }
        guard !checks.isEmpty else { return nil }
        rejects = source.duplicates == .reject
        nulls = source.format == .csv ? source.csv.nullMarkers.map { Array($0.utf8) } : []
    }

    /// Registers the record's keys; `nil` when none appeared before. A record that is rejected
    /// registers none of its keys (a later record may hold them).
    func repeated(_ record: Record) -> Outcome? {
        if record.context !== context {
            context = record.context
            for check in checks {
                let fields = check.names.map { name -> Int? in
                    if let schema = record.schema { return schema.index(of: name) }
                    return Int(name).map { $0 - 1 }  // CSV without a header: columns by number
                }
                check.fields = fields.allSatisfy { $0 != nil } ? fields.map { $0! } : nil
            }
        }
        // One key (the usual case): looked up and registered at once.
        guard checks.count > 1 else { return verdict(checks[0], look(checks[0], record, insert: true), record) }
        var outcome: Outcome?, updated: SourcePosition?
        for check in checks {
            let first = look(check, record, insert: false)
            switch verdict(check, first, record) {
            case .repeated(let repeated)?:
                // An update of the first record may hold that record's other keys.
                if let updated, let first, first.line == updated.line,
                    first.record == nil || updated.record == nil || first.record == updated.record
                {
                    continue
                }
                return .repeated(repeated)
            case .update?:
                outcome = .update
                updated = first
            case nil: break
            }
        }
        for check in checks { _ = look(check, record, insert: true) }
        return outcome
    }

    /// What a repeat of `check`'s key first seen at `first` makes of the record.
    private func verdict(_ check: Check, _ first: SourcePosition?, _ record: Record) -> Outcome? {
        guard let first else { return nil }
        let repeated = Outcome.repeated(Repeat(first: first, key: check.key))
        // The source's key: as the row's conflict clause says, else as `duplicates` says.
        guard check.key == 0 else { return repeated }
        switch record.conflict {
        case .replace?: return .update
        case .ignore?: return repeated
        case nil: return rejects ? repeated : .update
        }
    }

    /// Where the record's key of `check` appeared first (registering it when new, with `insert`).
    private func look(_ check: Check, _ record: Record, insert: Bool) -> SourcePosition? {
        guard let fields = check.fields else { return nil }
        let keys = check.keys
        if fields.count == 1, fields[0] < record.count, !record.isNull(fields[0]),
            let value = record.withBytes(fields[0], IntegerFirstLines.smallInteger)
        {
            return keys.register(integer: value, line: record.line, record: record.number, insert: insert).map {
                first in SourcePosition(file: record.context.file, line: first.line, column: 1, record: first.record)
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
        return keys.register(line: record.line, record: record.number, insert: insert).map { first in
            SourcePosition(file: record.context.file, line: first.line, column: 1, record: first.record)
        }
    }
}
