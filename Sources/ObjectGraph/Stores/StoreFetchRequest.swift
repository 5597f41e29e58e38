import Foundation

/// What a fetch asks a store: the entity, a predicate already checked against the model, sorting,
/// paging. A store that cannot evaluate something may return a superset; the context re-checks.
public struct StoreFetchRequest: @unchecked Sendable {
    public var entity: EntityDescription
    public var predicate: FetchPredicate?
    public var sortDescriptors: [FetchSortDescriptor]
    public var includesSubentities: Bool
    /// 0 means no limit.
    public var fetchLimit: Int
    public var fetchOffset: Int
    public init(
        entity: EntityDescription, predicate: FetchPredicate?, sortDescriptors: [FetchSortDescriptor],
        includesSubentities: Bool, fetchLimit: Int, fetchOffset: Int
    ) {
        self.entity = entity
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.includesSubentities = includesSubentities
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
    }

    /// Applies the request to rows a store evaluates in memory: keeps the items whose subject matches
    /// the predicate, sorts them (ties keep their order) and pages them, with exactly the semantics
    /// contexts use for unsaved objects.
    /// - Throws: `FetchRequestError` for key paths the entity does not have.
    public func apply<T>(to items: [T], subject: (T) -> any PredicateSubject) throws -> [T] {
        let predicate = try self.predicate?.compiled(for: entity)
        let matches = predicate.map { test in items.filter { test.evaluate(subject($0)) } } ?? items
        return KeyPathEvaluator.sortedAndPaged(
            matches, by: sortDescriptors.map { ($0.path, $0) },
            offset: fetchOffset, limit: fetchLimit, subject: subject)
    }

    /// The same request without limit and offset.
    public var unpaged: StoreFetchRequest {
        var copy = self
        copy.fetchLimit = 0
        copy.fetchOffset = 0
        return copy
    }
}

extension StoreFetchRequest {
    /// A request for the rows of `entity` whose `attributes` hold one of the keys (`attributes.count`
    /// values each, one key after another): `a IN {...}` for one attribute, `(a == x AND b == y) OR ...`
    /// for several.
    public static func rows(
        of entity: EntityDescription, matching flatKeys: ArraySlice<AttributeValue>,
        on attributes: [AttributeDescription]
    ) -> StoreFetchRequest {
        let keys = stride(from: flatKeys.startIndex, to: flatKeys.endIndex, by: attributes.count).map {
            Array(flatKeys[$0..<$0 + attributes.count])
        }
        func equal(_ attribute: AttributeDescription, _ value: AttributeValue) -> FetchPredicate {
            .comparison(PredicateComparison(.keyPath([attribute.name]), .equal, .constant(value)))
        }
        let predicate: FetchPredicate
        if attributes.count == 1 {
            predicate = .comparison(
                PredicateComparison(.keyPath([attributes[0].name]), .in, .aggregate(keys.map { .constant($0[0]) })))
        } else {
            predicate = .or(keys.map { key in .and(zip(attributes, key).map(equal)) })
        }
        return StoreFetchRequest(
            entity: entity, predicate: predicate, sortDescriptors: [], includesSubentities: true,
            fetchLimit: 0, fetchOffset: 0)
    }
}
