/// Hash indexes of uniqueness keys over the objects a store keeps in memory (the in-memory store,
/// atomic stores): built at the first lookup of each (entity, properties), then kept in step by the
/// store's saves — so a save's key lookups cost its keys, not the store's size.
struct StoredKeyIndexes {
    private struct ID: Hashable {
        struct Property: Hashable {
            let isRelationship: Bool
            let index: Int
        }
        /// The entity's position in the model.
        let entity: Int
        let properties: [Property]

        /// An object's key: attribute values, and to-one destinations as `ManagedObjectID.keyValue`.
        func key(of object: some StoredObject) -> [AttributeValue] {
            properties.map {
                $0.isRelationship
                    ? (object.storedToOne[$0.index]?.keyValue ?? .null) : object.storedAttributes[$0.index]
            }
        }
    }

    private var indexes: [ID: [[AttributeValue]: Set<ManagedObjectID>]] = [:]
    private let model: ManagedObjectModel

    init(model: ManagedObjectModel) { self.model = model }

    /// The IDs of the objects of `entity` (sub-entities included) whose key on `properties` is one of
    /// `keys` (`properties.count` values each, one key after another).
    /// - Parameter all: every stored object, read once to build the index.
    mutating func objectIDs<Objects: Sequence>(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription],
        all: () -> Objects
    ) -> [ManagedObjectID] where Objects.Element: StoredObject {
        let id = ID(
            entity: entity.index,
            properties: properties.map { .init(isRelationship: $0 is RelationshipDescription, index: $0.index) })
        if indexes[id] == nil {
            var index: [[AttributeValue]: Set<ManagedObjectID>] = [:]
            for object in all() where object.entity.isKind(of: entity) {
                index[id.key(of: object), default: []].insert(object.objectID)
            }
            indexes[id] = index
        }
        let index = indexes[id]!
        var found: [ManagedObjectID] = []
        var start = keys.startIndex
        while start < keys.endIndex {
            found += index[Array(keys[start..<start + properties.count])] ?? []
            start += properties.count
        }
        return found
    }

    /// Keeps the indexes in step with an object stored (`adding`) or taken out; an update is the
    /// old values taken out, then the new added.
    mutating func update(_ object: some StoredObject, adding: Bool) {
        guard !indexes.isEmpty else { return }
        // The IDs copied out first: iterating `indexes.keys` while mutating `indexes` would share its
        // storage and copy a whole index per object (quadratic over a run).
        for id in Array(indexes.keys) where object.entity.isKind(of: model.entities[id.entity]) {
            let key = id.key(of: object)
            if adding {
                indexes[id]![key, default: []].insert(object.objectID)
            } else {
                indexes[id]![key]?.remove(object.objectID)
            }
        }
    }
}
