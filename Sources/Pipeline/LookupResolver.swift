import Foundation
import ObjectGraph

/// Resolves the keys of one lookup (a to-one relationship found by its destination's key) to objects
/// of a context, a batch at a time, as the import advice has it: keys met before in the batch come
/// from a cache; the others are fetched together (`key IN {…}`, 500 keys per fetch, unsaved objects
/// of the context included); keys with no object create one (find-or-create) or stay unresolved
/// (must-exist). Call `reset()` whenever the context is reset.
public final class LookupResolver {
    public let lookup: PipelineConfig.Lookup
    public let entity: EntityDescription
    private let attributes: [AttributeDescription]
    private var cache: [[AttributeValue]: ManagedObject] = [:]
    /// How many fetches resolving took (one per 500 new keys of a batch).
    public private(set) var fetchCount = 0

    public init(lookup: PipelineConfig.Lookup, model: ManagedObjectModel) throws {
        guard let entity = model.entity(named: lookup.entity) else {
            throw PipelineFileError(issues: [ModelFileIssue(file: "", line: 0, column: 0, message: "the model has no entity \(lookup.entity)")])
        }
        self.lookup = lookup
        self.entity = entity
        attributes = lookup.key.compactMap { entity.attribute(named: $0.attribute) }
    }

    /// The object for each key (`nil` keys stay `nil`; so do unknown keys of a must-exist lookup).
    /// - Throws: fetch errors of the context's store.
    public func resolve(_ keys: [[AttributeValue]?], in context: ManagedObjectContext) throws -> [ManagedObject?] {
        var unknown: [AttributeValue] = [], seen = Set<[AttributeValue]>()
        for case let key? in keys where cache[key] == nil && seen.insert(key).inserted { unknown += key }
        var start = 0
        while start < unknown.count {
            let end = min(start + 500 * attributes.count, unknown.count)
            let keyRequest = StoreFetchRequest.rows(of: entity, matching: unknown[start..<end], on: attributes)
            fetchCount += 1
            for object in try context.fetch(FetchRequest(entityName: entity.name, predicate: keyRequest.predicate)) {
                let key = attributes.map { object[attributeAt: $0.index] }
                if cache[key] == nil { cache[key] = object }
            }
            start = end
        }
        return keys.map { key in
            guard let key else { return nil }
            if let object = cache[key] { return object }
            guard lookup.createsMissing else { return nil }
            let object = context.insertNewObject(forEntityName: entity.name)
            for (attribute, value) in zip(attributes, key) { object[attributeAt: attribute.index] = value }
            cache[key] = object
            return object
        }
    }

    /// Forgets the batch's objects (after the context's `reset()`).
    public func reset() { cache.removeAll(keepingCapacity: true) }
}
