import Foundation
import ObjectGraph

/// The keys the records of `mode: sync` sources held, per entity: what a sync keeps. Keys are kept
/// as hashes (a million keys: some 16 MB); two keys of one hash only ever keep an object that
/// should go, never delete one that should stay. Records rejected before their key was known are
/// counted: a sync then deletes nothing. Shared by the run's contexts.
final class SeenKeys: @unchecked Sendable {
    // @unchecked: `hashes` and `unknown` are only touched with `lock` held.
    private let lock = NSLock()
    private var hashes: [String: Set<Int>] = [:]
    private var unknown: [String: Int] = [:]

    static func hash(_ key: [AttributeValue]) -> Int {
        var hasher = Hasher()
        key.hash(into: &hasher)
        return hasher.finalize()
    }

    /// Notes a batch's keys of `entity`, and how many of its records had none to give.
    func add(_ keys: [[AttributeValue]], unknown count: Int, entity: String) {
        let found = keys.map(Self.hash)
        lock.withLock {
            hashes[entity, default: []].formUnion(found)
            if count > 0 { unknown[entity, default: 0] += count }
        }
    }

    func contains(_ key: [AttributeValue], entity: String) -> Bool {
        lock.withLock { hashes[entity]?.contains(Self.hash(key)) ?? false }
    }

    func unknownCount(of entity: String) -> Int { lock.withLock { unknown[entity] ?? 0 } }
}

/// What `mode: replace` and `mode: sync` delete, through `StoredDeletion` (delete rules apply), with
/// the deletions counted in the run's report.
struct LoadModes {
    let config: PipelineConfig
    let coordinator: PersistentStoreCoordinator
    let rejects: RejectsCollector

    /// The first source of each entity among the `mode` sources that `matching` takes, in pipeline order.
    private func entities(
        _ mode: PipelineConfig.LoadMode, matching: (PipelineConfig.Source) -> Bool = { _ in true }
    ) -> [PipelineConfig.Source] {
        var seen = Set<String>()
        return config.sources.filter { $0.mode == mode && matching($0) && seen.insert($0.mapping.entity).inserted }
    }

    /// Whether any source syncs (the run then notes the keys its records hold).
    var syncs: Bool { config.sources.contains { $0.mode == .sync } }

    /// Refuses a source without a key whose entity the target holds objects of already, under `mode:
    /// merge`: its records would be added again beside them (`mode: append` says that is meant).
    func refuseKeylessRepeats() throws {
        let deletion = StoredDeletion(coordinator: coordinator)
        for source in entities(.merge, matching: { $0.mapping.key.isEmpty && $0.mapping.links == nil }) {
            let stored = try deletion.count(source.mapping.entity)
            if stored > 0 {
                throw RunError.keylessRepeat(source: source.name, entity: source.mapping.entity, stored: stored)
            }
        }
    }

    /// `mode: replace`: deletes every stored object of the sources' entities, before they are read.
    func replace() throws {
        let deletion = StoredDeletion(coordinator: coordinator)
        for source in entities(.replace) {
            let stored = try deletion.stored(source.mapping.entity, key: [])
            try count(try deletion.delete(stored.map(\.id)))
        }
    }

    /// `mode: sync`, once every source is in: deletes the stored objects of the sources' entities
    /// (those the source's `where` selects, when it has one) whose key no record held — unless that
    /// is more than `sync.max_delete` of those stored before the run (`RunError.tooManyDeletions`),
    /// or records were rejected before their key was known (nothing deleted: returned as a note).
    func sync(_ seen: SeenKeys) throws -> [String] {
        var notes: [String] = []
        let deletion = StoredDeletion(coordinator: coordinator)
        for source in entities(.sync) {
            let entity = source.mapping.entity
            if seen.unknownCount(of: entity) > 0 {
                notes.append(
                    "mode: sync deleted no \(entity): \(seen.unknownCount(of: entity)) record(s) were rejected "
                        + "without a key that could be read, so what vanished from the input cannot be told")
                continue
            }
            // A source's `where` is its scope: stored objects it does not select are not its to delete.
            let (doomed, selected) = try deletion.unkept(
                entity, key: source.mapping.key, matching: source.mapping.filter
            ) { seen.contains($0, entity: entity) }
            guard !doomed.isEmpty else { continue }
            let before = selected - (rejects.currentReport.entities[entity]?.inserted ?? 0)
            guard source.maxDelete.allows(doomed.count, of: before) else {
                throw RunError.tooManyDeletions(
                    source: source.name, entity: entity, count: doomed.count, stored: before, limit: source.maxDelete)
            }
            try count(try deletion.delete(doomed))
        }
        return notes
    }

    private func count(_ deleted: [String: Int]) throws {
        guard !deleted.isEmpty else { return }
        try rejects.add(deleted.mapValues { RunReport.Counts(deleted: $0) }, rejected: [])
    }
}
