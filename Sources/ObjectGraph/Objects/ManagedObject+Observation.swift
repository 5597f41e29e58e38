import Foundation

/// One change of one property of an observed object (see `ManagedObject.observe(_:_:)`).
public struct PropertyChange {
    public enum Kind {
        case attribute(old: AttributeValue, new: AttributeValue)
        case toOne(old: ManagedObject?, new: ManagedObject?)
        case toMany(added: [ManagedObject], removed: [ManagedObject])
    }
    public let object: ManagedObject
    public let key: String
    public let kind: Kind
}

/// A registration of a property observer; `cancel()` ends it.
public final class PropertyObservation {
    weak var object: ManagedObject?
    let id: UInt64
    init(object: ManagedObject, id: UInt64) {
        self.object = object
        self.id = id
    }
    public func cancel() { object?.context?.removePropertyObserver(id, of: object) }
}

/// Per-property observation (what Core Data does with key-value observing) and primitive access.
extension ManagedObject {
    /// Calls `handler` after every change of the property `key` (every property when `nil`): values
    /// set, to-one destinations set (also as the inverse side of another object's change), to-many
    /// members added or removed — also when undo or redo changes them (a reorder of an ordered
    /// to-many, or an insert or delete undone, is no property change). On the context's queue.
    /// Requires the object to be in a context; the observation ends with `cancel()`, when the
    /// context resets, or when the object leaves it.
    public func observe(_ key: String?, _ handler: @escaping (PropertyChange) -> Void) -> PropertyObservation {
        guard let context else { preconditionFailure("\(objectID) is in no context: insert it before observing it") }
        precondition(
            key.map { entity.attributeIndexByName[$0] != nil || entity.relationshipIndexByName[$0] != nil } ?? true,
            "\(entity.name) has no attribute or relationship named \(key ?? "")")
        isObserved = true
        return PropertyObservation(object: self, id: context.addPropertyObserver(for: self, key: key, handler))
    }

    // MARK: Primitive accessors

    /// The stored value of an attribute, without firing observers (the fault still loads): what a
    /// custom accessor reads its backing value with.
    public func primitiveValue(forKey key: String) -> Any? {
        willAccess()
        if let index = entity.attributeIndexByName[key] { return attributeValues[index].anyValue }
        guard let index = entity.relationshipIndexByName[key] else {
            preconditionFailure("\(entity.name) has no property named \(key.debugDescription)")
        }
        switch relationshipSlots[index] {
        case .one(let destination): return destination
        case .many: return Array(members(of: entity.relationships[index]))
        }
    }

    /// Sets an attribute's value or a to-one destination without observers, undo registration or
    /// inverse maintenance (the object still becomes updated, so the change is saved): what a custom
    /// setter writes its backing value with, between its own `willChangeValue`/`didChangeValue`.
    public func setPrimitiveValue(_ value: Any?, forKey key: String) {
        willChange()
        if let index = entity.attributeIndexByName[key] {
            guard let converted = AttributeValue(value) else {
                preconditionFailure("\(type(of: value!)) cannot be stored in attribute \(entity.name).\(key)")
            }
            attributeValues[index] = converted
            return
        }
        let relationship = entity.relationships[relationshipIndex(key)]
        precondition(!relationship.isToMany, "setPrimitiveValue sets attributes and to-one relationships")
        guard value == nil || value is ManagedObject else {
            preconditionFailure("to-one relationship \(entity.name).\(key) takes a ManagedObject or nil")
        }
        relationshipSlots[relationship.index] = .one(value as? ManagedObject)
    }

    // MARK: The watched path (observed objects, contexts with an undo manager)

    func setWatchedAttribute(_ index: Int, _ value: AttributeValue) {
        let old = attributeValues[index]
        let key = entity.attributes[index].name
        if isObserved { willChangeValue(forKey: key) }
        context?.registerUndo(.attribute(self, index, old))
        attributeValues[index] = value
        if isObserved {
            didChangeValue(
                forKey: key, change: PropertyChange(object: self, key: key, kind: .attribute(old: old, new: value)))
        }
    }

    /// A to-one slot set (every to-one write goes through here).
    func setWatchedToOne(_ relationship: RelationshipDescription, _ destination: ManagedObject?) {
        guard case .one(let old) = relationshipSlots[relationship.index] else { return }
        if isObserved { willChangeValue(forKey: relationship.name) }
        context?.registerUndo(.toOne(self, relationship.index, old))
        relationshipSlots[relationship.index] = .one(destination)
        if isObserved {
            didChangeValue(
                forKey: relationship.name,
                change: PropertyChange(object: self, key: relationship.name, kind: .toOne(old: old, new: destination)))
        }
    }

    /// A to-many member added or removed (every to-many edit goes through here).
    func changeMember(
        _ member: ManagedObject, of relationship: RelationshipDescription, in storage: ToManyStorage, adding: Bool
    ) {
        guard isObserved || context?.recordsUndo == true else {
            if adding { storage.add(member) } else { storage.remove(member) }
            return
        }
        if isObserved { willChangeValue(forKey: relationship.name) }
        if adding {
            storage.add(member)
            context?.registerUndo(.removeMember(self, relationship.index, member))
        } else {
            let position = relationship.isOrdered ? storage.members?.firstIndex(of: member) : nil
            storage.remove(member)
            context?.registerUndo(.addMember(self, relationship.index, member, position))
        }
        if isObserved {
            let kind = PropertyChange.Kind.toMany(added: adding ? [member] : [], removed: adding ? [] : [member])
            didChangeValue(
                forKey: relationship.name, change: PropertyChange(object: self, key: relationship.name, kind: kind))
        }
    }
}
