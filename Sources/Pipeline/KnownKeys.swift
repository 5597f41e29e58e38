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
    private var ids: [[AttributeValue]: ManagedObjectID] = [:]
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
    public var count: Int { lock.withLock { ids.count + integers.count + runs.count } }

    func objectIDs(for keys: Set<[AttributeValue]>) -> [([AttributeValue], ManagedObjectID)] {
        lock.withLock {
            guard !ids.isEmpty || !integers.isEmpty || !runs.isEmpty else { return [] }
            return keys.compactMap { key in
                if key.count == 1, let id = integerID(key[0]) { return (key, id) }
                return ids[key].map { (key, $0) }
            }
        }
    }

    /// Like `objectIDs(for:)` for keys of one attribute, given as their values.
    func objectIDs(forValues values: Set<AttributeValue>) -> [(AttributeValue, ManagedObjectID)] {
        lock.withLock {
            guard !ids.isEmpty || !integers.isEmpty || !runs.isEmpty else { return [] }
            return values.compactMap { value in
                if let id = integerID(value) { return (value, id) }
                return ids.isEmpty ? nil : ids[[value]].map { (value, $0) }
            }
        }
    }

    /// The ID of an integer key held compactly (call with `lock` held).
    private func integerID(_ value: AttributeValue) -> ManagedObjectID? {
        guard case .integer(let key) = value, let template else { return nil }
        if let reference = integers[key] { return template.withReference(.integer(reference)) }
        // The last run starting at or before the key.
        var low = 0, high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle].key <= key { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let run = runs[low - 1]
        guard key < run.key + run.count else { return nil }
        return template.withReference(.integer(run.reference + key - run.key))
    }

    func remember(_ found: [KeyedObjectID]) {
        remember(found.lazy.map { ($0.key, $0.objectID) })
    }

    /// Remembers keys of one attribute (`values[i]` is the key of `objectIDs[i]`; `nil` IDs are skipped).
    func remember(values: [AttributeValue], objectIDs: [ManagedObjectID?]) {
        remember(zip(values, objectIDs).lazy.compactMap { value, id in value.isNull ? nil : id.map { ([value], $0) } })
    }

    private func remember<Pairs: Collection>(_ pairs: Pairs) where Pairs.Element == ([AttributeValue], ManagedObjectID) {
        lock.withLock {
            if ids.count + integers.count + runs.count + pairs.count > capacity {
                ids.removeAll(keepingCapacity: true)
                integers.removeAll(keepingCapacity: true)
                runs.removeAll(keepingCapacity: true)
            }
            var compact: [(key: Int64, reference: Int64)] = []
            for (key, id) in pairs {
                if key.count == 1, case .integer(let value) = key[0], case .integer(let reference) = id.reference {
                    if template == nil { template = id }
                    if let template, template.entityName == id.entityName, template.storeIdentifier == id.storeIdentifier {
                        compact.append((value, reference))
                        continue
                    }
                }
                ids[key] = id
            }
            addIntegers(&compact)
        }
    }

    /// Files integer pairs as runs (long stretches of consecutive keys and references) or single entries.
    private func addIntegers(_ pairs: inout [(key: Int64, reference: Int64)]) {
        guard !pairs.isEmpty else { return }
        if !pairs.indices.dropFirst().allSatisfy({ pairs[$0 - 1].key < pairs[$0].key }) { pairs.sort { $0.key < $1.key } }
        var found: [Run] = []
        var start = 0
        while start < pairs.count {
            var end = start + 1
            while end < pairs.count, pairs[end].key == pairs[end - 1].key + 1, pairs[end].reference == pairs[end - 1].reference + 1 { end += 1 }
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
                next = runs[old]; old += 1
            } else {
                next = found[new]; new += 1
            }
            if let last = merged.last, last.key + last.count == next.key, last.reference + last.count == next.reference {
                merged[merged.count - 1].count += next.count
            } else {
                merged.append(next)
            }
        }
        runs = merged
    }
}
