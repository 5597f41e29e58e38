import Foundation

extension ManagedObjectContext {
    /// What a fetch returns, by the request's result type.
    public enum FetchResult {
        case objects([ManagedObject])
        case objectIDs([ManagedObjectID])
        case dictionaries([[String: FetchedValue]])
        case count(Int)
    }

    /// Runs a fetch request of any result type.
    /// - Throws: `FetchRequestError` for an unknown entity or key path; `StoreError` from the store.
    public func execute(_ request: FetchRequest) throws -> FetchResult {
        checkQueue()
        switch request.resultType {
        case .objects: return .objects(try fetch(request))
        case .objectIDs: return .objectIDs(try fetchObjectIDs(request))
        case .dictionaries: return .dictionaries(try fetchDictionaries(request))
        case .count: return .count(try count(for: request))
        }
    }

    /// The objects matching the request, unsaved changes included (unless the request says otherwise):
    /// inserted objects that match are returned, deleted ones are not, updated ones are tested on their
    /// current values.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        checkQueue()
        try throwIfStoreFailed()
        return try fetchMerged(request)
    }

    public func fetchObjectIDs(_ request: FetchRequest) throws -> [ManagedObjectID] {
        checkQueue()
        var faultRequest = request
        faultRequest.returnsObjectsAsFaults = true
        return try fetch(faultRequest).map(\.objectID)
    }

    /// Dictionaries of the requested attributes (all when `propertiesToFetch` is nil) and to-one
    /// relationships (as object IDs).
    public func fetchDictionaries(_ request: FetchRequest) throws -> [[String: FetchedValue]] {
        checkQueue()
        let entity = try entity(for: request)
        let keys = request.propertiesToFetch ?? entity.attributes.map(\.name)
        for key in keys
        where entity.attribute(named: key) == nil && entity.relationship(named: key).map({ !$0.isToMany }) != true {
            throw FetchRequestError(
                "propertiesToFetch names \(key.debugDescription), which is not an attribute or to-one relationship of "
                    + "\(entity.name)"
            )
        }
        return try fetch(request).map { object in
            var dictionary: [String: FetchedValue] = [:]
            for key in keys {
                if let index = object.entity.attributeIndexByName[key] {
                    dictionary[key] = .attribute(object[attributeAt: index])
                } else {
                    dictionary[key] = .objectID(object.relatedObject(forKey: key)?.objectID)
                }
            }
            return dictionary
        }
    }

    /// The number of objects the request would return (limit and offset applied).
    public func count(for request: FetchRequest) throws -> Int {
        checkQueue()
        try throwIfStoreFailed()
        let entity = try entity(for: request)
        if request.predicate != nil { _ = try request.predicate!.compiled(for: entity) }
        if !hasPendingChanges(for: entity, request), request.fetchLimit == 0, request.fetchOffset == 0 {
            return try source.sourceCount(matching: storeRequest(request, entity: entity).unpaged)
        }
        return try fetchMerged(request).count
    }

    // MARK: Internals

    /// Registered objects for `ids`, as faults where not loaded yet; with a batch size, the faults of
    /// each run of `batchSize` IDs load together.
    private func faults(for ids: [ManagedObjectID], batchSize: Int) -> [ManagedObject] {
        let objects = ids.map { object(with: $0) }
        guard batchSize > 0 else { return objects }
        var start = 0
        while start < objects.count {
            let slice = objects[start..<min(start + batchSize, objects.count)]
            let batch = FaultBatch(ids: slice.filter(\.faultState).map(\.objectID))
            for object in slice where object.faultState { object.faultBatch = batch }
            start += batchSize
        }
        return objects
    }

    private func entity(for request: FetchRequest) throws -> EntityDescription {
        guard let entity = managedObjectModel.entity(named: request.entityName) else {
            throw FetchRequestError(
                "fetch request names entity \(request.entityName.debugDescription), which the model does not have")
        }
        return entity
    }

    private func matchesEntity(_ object: ManagedObject, _ entity: EntityDescription, _ request: FetchRequest) -> Bool {
        request.includesSubentities ? object.entity.isKind(of: entity) : object.entity === entity
    }

    private func hasPendingChanges(for entity: EntityDescription, _ request: FetchRequest) -> Bool {
        request.includesPendingChanges
            && changedObjects.contains { $0.changeState != .none && matchesEntity($0, entity, request) }
    }

    private func storeRequest(_ request: FetchRequest, entity: EntityDescription) -> StoreFetchRequest {
        StoreFetchRequest(
            entity: entity, predicate: request.predicate, sortDescriptors: request.sortDescriptors,
            includesSubentities: request.includesSubentities,
            fetchLimit: request.fetchLimit, fetchOffset: request.fetchOffset)
    }

    private func fetchMerged(_ request: FetchRequest) throws -> [ManagedObject] {
        let entity = try entity(for: request)
        let predicate = try request.predicate?.compiled(for: entity)
        let sorts = try request.sortDescriptors.map { descriptor -> (path: [String], descriptor: FetchSortDescriptor) in
            let path = descriptor.path
            if try entity.checkKeyPath(path) {
                throw FetchRequestError(
                    "cannot sort \(entity.name) by \(descriptor.keyPath): it passes through a to-many relationship")
            }
            return (path, descriptor)
        }
        let pending = hasPendingChanges(for: entity, request)
        let full = storeRequest(request, entity: entity)
        var objects: [ManagedObject]
        let storesMerged: Bool
        if request.returnsObjectsAsFaults || request.fetchBatchSize > 0 {
            let (ids, merged) = try source.sourceObjectIDs(matching: pending ? full.unpaged : full)
            objects = faults(for: ids, batchSize: request.fetchBatchSize)
            storesMerged = merged
        } else {
            let (rows, merged) = try source.sourceRows(matching: pending ? full.unpaged : full)
            objects = materialize(rows)
            storesMerged = merged
        }
        guard pending || storesMerged else { return objects }

        if pending {
            var seen = Set<ObjectIdentifier>()
            objects = objects.filter { object in
                seen.insert(ObjectIdentifier(object))
                switch object.changeState {
                case .deleted, .insertedThenDeleted: return false
                case .updated: return predicate?.evaluate(object) ?? true
                default: return true
                }
            }
            for object in changedObjects
            where (object.changeState == .inserted || object.changeState == .updated)
                && matchesEntity(object, entity, request) && !seen.contains(ObjectIdentifier(object))
            {
                if predicate?.evaluate(object) ?? true {
                    seen.insert(ObjectIdentifier(object))
                    objects.append(object)
                }
            }
        }
        return KeyPathEvaluator.sortedAndPaged(
            objects, by: sorts, offset: request.fetchOffset, limit: request.fetchLimit
        ) { $0 }
    }
}
