/// A description of what to fetch: entity, predicate, order, paging and result type.
///
/// ```swift
/// var request = FetchRequest(entityName: "Employee")
/// request.predicate = try FetchPredicate(format: "department.name == %@", "Sales")
/// request.sortDescriptors = [FetchSortDescriptor("name")]
/// let employees = try context.fetch(request)
/// ```
public struct FetchRequest: Sendable {
    public enum ResultType: Sendable {
        case objects, objectIDs, dictionaries, count
    }

    public var entityName: String
    public var predicate: FetchPredicate?
    public var sortDescriptors: [FetchSortDescriptor] = []
    /// 0 means no limit.
    public var fetchLimit: Int = 0
    public var fetchOffset: Int = 0
    /// Whether objects of sub-entities match too.
    public var includesSubentities = true
    /// Whether unsaved inserts, updates and deletes of the context count (they do by default).
    public var includesPendingChanges = true
    public var resultType: ResultType = .objects
    /// Whether `.objects` results are faults whose values load on first access (one row fetch each,
    /// or one per batch with `fetchBatchSize`) instead of objects filled from the fetch itself.
    public var returnsObjectsAsFaults = false
    /// When above 0, `.objects` results are faults grouped in batches of this size: touching one
    /// object loads its whole batch with one store request, so walking a large result keeps only the
    /// touched batches in memory.
    public var fetchBatchSize = 0
    /// For `.dictionaries`: the attributes and to-one relationships to include (all attributes when nil).
    public var propertiesToFetch: [String]?

    public init(entityName: String, predicate: FetchPredicate? = nil, sortDescriptors: [FetchSortDescriptor] = []) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }
}

/// One value of a dictionary fetch result: an attribute value or the ID of a to-one destination.
public enum FetchedValue: Sendable, Hashable {
    case attribute(AttributeValue)
    case objectID(ManagedObjectID?)
}
