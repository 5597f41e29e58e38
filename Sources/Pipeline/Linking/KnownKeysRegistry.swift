import Foundation

/// The keys a run's lookups have learned, one `KnownKeys` per entity and key: what lookups found
/// in the store and what batch inserts wrote, so later records find their destinations without
/// asking the store. Shared by a run's contexts.
final class KnownKeysRegistry: @unchecked Sendable {
    // @unchecked: `byName` is only touched with `lock` held (each `KnownKeys` locks itself).
    private let lock = NSLock()
    private var byName: [String: KnownKeys] = [:]

    /// - Parameter lookups: every lookup of the run, so that batch inserts of their entities can
    ///   tell them the keys they write before the first record looks one up.
    init(lookups: [PipelineConfig.Lookup]) {
        for lookup in lookups { _ = knownKeys(for: lookup) }
    }

    private static func name(_ entity: String, _ attributes: [String]) -> String {
        entity + "|" + attributes.joined(separator: ",")
    }

    /// The known keys of `lookup`'s entity and key (one per entity and key, made on first use).
    func knownKeys(for lookup: PipelineConfig.Lookup) -> KnownKeys {
        let name = Self.name(lookup.entity, lookup.key.map(\.attribute))
        return lock.withLock {
            if let known = byName[name] { return known }
            let known = KnownKeys()
            byName[name] = known
            return known
        }
    }

    /// The run's keys of one attribute of `entity` that lookups use, by attribute name.
    func singleKeys(of entity: String) -> [(attribute: String, known: KnownKeys)] {
        let prefix = entity + "|"
        return lock.withLock {
            byName.compactMap { name, known in
                guard name.hasPrefix(prefix) else { return nil }
                let attribute = String(name.dropFirst(prefix.count))
                return attribute.contains(",") ? nil : (attribute, known)
            }
        }
    }
}
