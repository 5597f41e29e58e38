import Foundation

/// A fetched property (Core Data's `NSFetchedPropertyDescription`): a weak, one-way relationship
/// defined by a fetch. Reading it (`ManagedObject.fetchedObjects(forKey:)`, or `value(forKey:)`)
/// fetches the destination entity's objects that match `predicate`, in which `$FETCH_SOURCE` is the
/// object read and `$FETCH_SOURCE.path` a value of it (`city == $FETCH_SOURCE.city`). The result is
/// kept until the object is refreshed (`refresh(_:mergeChanges:)`), turns into a fault or its
/// context resets: later changes do not update it, as in Core Data. Nothing is stored, no inverse is
/// kept, and a pipeline cannot map into it.
public final class FetchedPropertyDescription: PropertyDescription, @unchecked Sendable {
    public let destinationEntityName: String
    /// The predicate as written.
    public let predicateFormat: String
    public let sortDescriptors: [FetchSortDescriptor]
    /// The predicate, parsed when the model is built.
    @exclusivity(unchecked) public internal(set) var predicate: FetchPredicate?
    @exclusivity(unchecked) public internal(set) unowned var destinationEntity: EntityDescription! = nil

    public init(name: String, destination: String, predicate: String, sortDescriptors: [FetchSortDescriptor] = []) {
        self.destinationEntityName = destination
        self.predicateFormat = predicate
        self.sortDescriptors = sortDescriptors
        super.init(name: name, isOptional: true, columnName: nil)
    }

    /// The variable naming the object the property is read from.
    static let sourceVariable = "FETCH_SOURCE"

    /// The fetch for `object`: `$FETCH_SOURCE` (and key paths after it) replaced by its values.
    func request(for object: ManagedObject) throws -> FetchRequest {
        var variables: [String: PredicateArgument] = [:]
        for name in predicate?.variableNames ?? [] {
            let path = name.split(separator: ".").map(String.init)
            guard path.first == Self.sourceVariable else { continue }
            switch KeyPathEvaluator.value(of: Array(path.dropFirst()), in: object) {
            case .value(let value): variables[name] = .value(value)
            case .subject(let subject): variables[name] = .objectID(subject.predicateObjectID)
            case .objectID(let id): variables[name] = .objectID(id)
            case .collection(let items):
                variables[name] = .list(
                    items.compactMap { item in
                        switch item {
                        case .value(let value): return .value(value)
                        case .subject(let subject): return .objectID(subject.predicateObjectID)
                        case .objectID(let id): return .objectID(id)
                        case .collection: return nil
                        }
                    })
            }
        }
        return FetchRequest(
            entityName: destinationEntityName, predicate: try predicate?.substituting(variables),
            sortDescriptors: sortDescriptors)
    }
}
