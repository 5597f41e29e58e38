import Foundation

extension ManagedObject {
    /// The objects of a fetched property (see `FetchedPropertyDescription`): fetched on first read,
    /// then the same until the object is refreshed, turns into a fault or its context resets.
    /// - Throws: what the fetch throws (a store error).
    public func fetchedObjects(forKey key: String) throws -> [ManagedObject] {
        guard let property = entity.fetchedProperty(named: key) else {
            preconditionFailure("\(entity.name) has no fetched property named \(key.debugDescription)")
        }
        guard let context else { preconditionFailure("\(objectID) is in no context: a fetched property needs one") }
        return try context.fetchedObjects(of: property, for: self)
    }

    /// `value(forKey:)` of a fetched property: a store failure is kept as the context's
    /// `storeFailure` (its next save, fetch and count throw it) and reads as no objects.
    func fetchedObjects(of property: FetchedPropertyDescription) -> [ManagedObject] {
        guard let context else { preconditionFailure("\(objectID) is in no context: a fetched property needs one") }
        do {
            return try context.fetchedObjects(of: property, for: self)
        } catch {
            context.noteStoreFailure(error, "could not fetch \(property) of \(objectID)", objectID: objectID)
            return []
        }
    }
}

extension ManagedObjectContext {
    func fetchedObjects(of property: FetchedPropertyDescription, for object: ManagedObject) throws -> [ManagedObject] {
        checkQueue()
        let key = ObjectIdentifier(object)
        // Objects that left the context since (deleted and saved, deleted elsewhere) leave the result.
        if let cached = fetchedResults[key]?[property.index] { return cached.filter { $0.context === self } }
        let objects = try fetch(try property.request(for: object))
        fetchedResults[key, default: [:]][property.index] = objects
        return objects
    }

    /// A refreshed object's fetched properties are fetched again on their next read.
    func forgetFetchedObjects(of object: ManagedObject) {
        if !fetchedResults.isEmpty { fetchedResults.removeValue(forKey: ObjectIdentifier(object)) }
    }
}
