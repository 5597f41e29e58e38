import Foundation
import ObjectGraph

/// IDs of stored objects of one entity by the values of one key, learned while a run resolves
/// lookups and writes batch inserts, so a key is looked up in the store once per run at most rather
/// than once per batch. Bounded: when it holds `capacity` entries it starts over (memory stays flat
/// however large the input). Shared by the run's workers under a lock.
///
/// Keys of one integer attribute whose IDs are integer references of one entity and store — the
/// common case — are kept compact: one by one (16 bytes a key instead of an array and an object), and
/// where consecutive keys have consecutive references (a sequentially numbered input inserted in
/// order) as runs of any length in one entry.
public final class KnownKeys: @unchecked Sendable {
    // @unchecked: every stored property is only touched with `lock` held.
    private let lock = NSLock()
    /// Keys of several attributes.
    private var ids: [[AttributeValue]: ManagedObjectID] = [:]
    /// Keys of one attribute not held compactly (text, decimals, IDs of another entity or store).
    private var singles: [AttributeValue: ManagedObjectID] = [:]
    private var integers: [Int64: Int64] = [:]
    /// Keys `key ..< key + count` → references `reference ..< reference + count`, sorted by key.
    private var runs: [Run] = []
    private var template: ManagedObjectID?
    public let capacity: Int

    private struct Run {
        var key: Int64
        var reference: Int64
        var count: Int64
    }

    /// Consecutive keys of at least this many become a run instead of single entries.
    private static let shortestRun = 16

    public init(capacity: Int = 200_000) {
        self.capacity = capacity
    }

    /// Entries held (a run is one).
    public var count: Int { lock.withLock { entries } }

    private var entries: Int { ids.count + singles.count + integers.count + runs.count }

    /// The IDs held for keys (of any number of attributes).
    func objectIDs(for keys: Set<[AttributeValue]>) -> [([AttributeValue], ManagedObjectID)] {
        lock.withLock {
            guard entries > 0 else { return [] }
            return keys.compactMap { key in
                if key.count == 1 { return single(key[0]).map { (key, $0) } }
                return ids[key].map { (key, $0) }
            }
        }
    }

    /// The ID held for each key of one attribute, given as its value (`nil` where none is held).
    func objectIDs(forValues values: [AttributeValue?]) -> [ManagedObjectID?] {
        lock.withLock {
            guard entries > 0 else { return Array(repeating: nil, count: values.count) }
            return values.map { value in value.flatMap(single) }
        }
    }

    /// The ID of a key of one attribute (call with `lock` held).
    private func single(_ value: AttributeValue) -> ManagedObjectID? {
        guard case .integer(let key) = value, let template else { return singles.isEmpty ? nil : singles[value] }
        // The last run starting at or before the key.
        var low = 0, high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle].key <= key { low = middle + 1 } else { high = middle }
        }
        if low > 0, key < runs[low - 1].key + runs[low - 1].count {
            return template.withReference(.integer(runs[low - 1].reference + key - runs[low - 1].key))
        }
        if let reference = integers[key] { return template.withReference(.integer(reference)) }
        return singles.isEmpty ? nil : singles[value]
    }

    func remember(_ found: [KeyedObjectID]) {
        lock.withLock {
            makeRoom(for: found.count)
            var compact: [(key: Int64, reference: Int64)] = []
            for item in found {
                if item.key.count == 1 {
                    file(item.key[0], item.objectID, compact: &compact)
                } else {
                    ids[item.key] = item.objectID
                }
            }
            addIntegers(&compact)
        }
    }

    /// Remembers keys of one attribute (`values[i]` is the key of `objectIDs[i]`; `nil` IDs are skipped).
    func remember(values: [AttributeValue], objectIDs: [ManagedObjectID?]) {
        lock.withLock {
            makeRoom(for: values.count)
            var compact: [(key: Int64, reference: Int64)] = []
            compact.reserveCapacity(values.count)
            for (value, id) in zip(values, objectIDs) where !value.isNull {
                if let id { file(value, id, compact: &compact) }
            }
            addIntegers(&compact)
        }
    }

    /// Starts over when `incoming` more entries would pass the capacity (call with `lock` held).
    private func makeRoom(for incoming: Int) {
        guard entries + incoming > capacity else { return }
        ids.removeAll(keepingCapacity: true)
        singles.removeAll(keepingCapacity: true)
        integers.removeAll(keepingCapacity: true)
        runs.removeAll(keepingCapacity: true)
    }

    /// Files a key of one attribute: integer keys of integer references of the template's entity and
    /// store go to `compact` (for `addIntegers`), the rest to `singles` (call with `lock` held).
    private func file(_ value: AttributeValue, _ id: ManagedObjectID, compact: inout [(key: Int64, reference: Int64)]) {
        if case .integer(let key) = value, case .integer(let reference) = id.reference {
            if template == nil { template = id }
            if let template, template.entityName == id.entityName, template.storeIdentifier == id.storeIdentifier {
                compact.append((key, reference))
                return
            }
        }
        singles[value] = id
    }

    /// Files integer pairs as runs (long stretches of consecutive keys and references) or single entries.
    private func addIntegers(_ pairs: inout [(key: Int64, reference: Int64)]) {
        guard !pairs.isEmpty else { return }
        if !pairs.indices.dropFirst().allSatisfy({ pairs[$0 - 1].key < pairs[$0].key }) {
            pairs.sort { $0.key < $1.key }
        }
        var found: [Run] = []
        var start = 0
        while start < pairs.count {
            var end = start + 1
            while end < pairs.count, pairs[end].key == pairs[end - 1].key + 1,
                pairs[end].reference == pairs[end - 1].reference + 1
            { end += 1 }
            if end - start >= Self.shortestRun {
                found.append(Run(key: pairs[start].key, reference: pairs[start].reference, count: Int64(end - start)))
            } else {
                for pair in pairs[start..<end] { integers[pair.key] = pair.reference }
            }
            start = end
        }
        guard !found.isEmpty else { return }
        // Merge the new runs into the sorted list, joining runs that continue each other.
        var merged: [Run] = []
        merged.reserveCapacity(runs.count + found.count)
        var old = 0, new = 0
        while old < runs.count || new < found.count {
            let next: Run
            if new == found.count || (old < runs.count && runs[old].key <= found[new].key) {
                next = runs[old]
                old += 1
            } else {
                next = found[new]
                new += 1
            }
            if let last = merged.last, last.key + last.count == next.key, last.reference + last.count == next.reference
            {
                merged[merged.count - 1].count += next.count
            } else {
                merged.append(next)
            }
        }
        runs = merged
    }
}
