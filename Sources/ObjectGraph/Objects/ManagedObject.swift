import Foundation
import OrderedCollections

/// An object of the graph: an instance of one entity, living in exactly one context.
///
/// Values sit in flat arrays indexed by property (`entity.attributes[i]` ↔ `self[attributeAt: i]`),
/// read and written by name (`object["name"]`, `value(forKey:)`) or by a precomputed index. Subclass
/// it to add typed accessors and behaviour; override the life-cycle hooks (`awakeFromInsert`,
/// `awakeFromFetch`, `didTurnIntoFault`, `willSave`, `didSave`) and validation methods
/// (`propertyValidators`, `validateAttribute(_:forKey:)`,
/// `validateForInsert/Update/Delete`), calling `super`.
///
/// ```swift
/// final class Employee: ManagedObject {
/// var name: String? { get { string(forKey: "name") } set { self["name"] = newValue.map { .string($0) } ?? .null } }
///     override func awakeFromInsert() { super.awakeFromInsert(); self["hiredAt"] = .date(Date()) }
/// }
/// ```
///
/// Objects are not `Sendable`: use them only on their context's queue; pass `objectID` elsewhere.
open class ManagedObject: Hashable, CustomStringConvertible {
    public let entity: EntityDescription
    @exclusivity(unchecked) public internal(set) var objectID: ManagedObjectID

    // The context registers every object whose `context` is set and clears the field when it lets go
    // of the object (save of a delete, reset, deinit), so the pointer never dangles.
    @exclusivity(unchecked) unowned(unsafe) var context: ManagedObjectContext?
    // `@exclusivity(unchecked)` (on every stored `var` here and in `ToManyStorage`): these are read
    // and written for every object of a bulk import. They are only touched on the owning context's
    // queue, and no code passes them `inout` across a call that could reach the same object, so the
    // run-time exclusivity check (about 10% of an insert, measured with `make bench`) proves nothing
    // the code structure does not already.
    @exclusivity(unchecked) var attributeValues: [AttributeValue]
    @exclusivity(unchecked) var relationshipSlots: [RelationshipSlot]
    @exclusivity(unchecked) var faultState: Bool = false
    /// The faults fetched with this one (`fetchBatchSize`), loaded together when one of them fires.
    @exclusivity(unchecked) var faultBatch: FaultBatch?
    @exclusivity(unchecked) var changeState: ChangeState = .none
    @exclusivity(unchecked) var isInChangedList = false
    /// The row version this object was read with (0 for never-saved objects).
    var version: Int64 {
        get {
            if let row = writtenRow {
                knownVersion = StoreRow.contentVersion(of: row.values, toOnes: row.toOnes)
                writtenRow = nil
            }
            return knownVersion
        }
        set {
            knownVersion = newValue
            writtenRow = nil
        }
    }
    @exclusivity(unchecked) private var knownVersion: Int64 = 0
    /// The row a save wrote of this object into a store that versions rows by content: the version
    /// is its hash, computed when first asked for (`noteWritten(_:version:)`).
    @exclusivity(unchecked) private var writtenRow: (values: [AttributeValue], toOnes: [ManagedObjectID?])?

    /// A save wrote `row` of this object: its version is `version` (a store that counts them), or
    /// the row's content hash (`nil`: a store that versions by content), computed when asked.
    func noteWritten(_ row: StoreRow, version: Int64?) {
        if let version {
            self.version = version
        } else {
            writtenRow = (row.attributeValues, row.toOneDestinations)
        }
    }
    /// Whether the object counts as a user of its row's snapshot at the coordinator: objects of root
    /// contexts filled from a stored row (fetch, fault, a key conflict), until they turn into a fault
    /// or leave the context. Objects this context inserted and saved hold none: their values are the
    /// context's own, and a pure import pays nothing for snapshots.
    @exclusivity(unchecked) var holdsSnapshot = false
    /// Whether changes call `willChangeValue(forKey:)` / `didChangeValue(forKey:)` (the object has
    /// observers, or its class asks for them).
    @exclusivity(unchecked) var isObserved = false
    /// Attribute values and to-one destinations as last committed, captured at the first change.
    @exclusivity(unchecked) var original: (attributes: [AttributeValue], toOne: [ManagedObject?])?

    enum ChangeState { case none, inserted, updated, deleted, insertedThenDeleted }

    enum RelationshipSlot {
        case one(ManagedObject?)
        case many(ToManyStorage)
    }

    /// Creates an object of `entity`, inserted into `context` when one is given (its values start at
    /// the model's defaults, then `awakeFromInsert` runs).
    public required init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        self.entity = entity
        self.objectID = ManagedObjectID.makeTemporary(in: entity.temporaryIDScope)
        self.attributeValues = entity.defaultAttributeValues
        self.relationshipSlots = entity.relationships.map {
            $0.isToMany ? .many(ToManyStorage(loaded: true)) : .one(nil)
        }
        isObserved = Self.notifiesPropertyChanges
        if let context { context.insert(self) }
    }

    /// The context the object belongs to, or `nil` once it was reset, deleted and saved, or never inserted.
    public var managedObjectContext: ManagedObjectContext? { context }

    // MARK: Life cycle hooks

    /// Runs once in the object's life, when it is first inserted into a context.
    open func awakeFromInsert() {}
    /// Runs when the object's values are loaded from a store. Change tracking is off meanwhile, as in
    /// Core Data: values set here (a transient computed from stored ones) do not make the object
    /// updated, are not undoable and notify no observer. Do not touch relationships.
    open func awakeFromFetch() {}
    /// Runs before the object's values are released (refresh, reset); they can still be read.
    open func willTurnIntoFault() {}
    /// Runs when the object's values are released (refresh, reset).
    open func didTurnIntoFault() {}
    /// Runs when the object is deleted, before its delete rules change its destinations.
    open func prepareForDeletion() {}
    /// Runs in `save()` before validation, once for each inserted, updated and deleted object of
    /// the save (objects it changes are saved too, and get their own call; objects only derived
    /// values change get none). Set values here with care: every change makes the object updated
    /// (set a value only when it differs).
    open func willSave() {}
    /// Runs after a save wrote the object (inserted, updated or deleted: `isDeleted` tells).
    open func didSave() {}

    // MARK: Property change notification (see `observe(_:_:)`)

    /// Whether objects of the class call `willChangeValue(forKey:)` / `didChangeValue(forKey:change:)`
    /// around every change even without observers. Override to return `true` in a subclass that
    /// overrides those methods; objects nobody observes pay nothing for them otherwise.
    open class var notifiesPropertyChanges: Bool { false }
    /// Called before a change of `key` when the object is observed (see `notifiesPropertyChanges`).
    open func willChangeValue(forKey key: String) {}
    /// Called after a change of `key` when the object is observed; the default calls the observers.
    open func didChangeValue(forKey key: String, change: PropertyChange) {
        context?.notifyPropertyObservers(change)
    }

    // MARK: Validation (called by save; override and call super)

    /// A custom check of every attribute value, run after the model's rules for that attribute. Throw
    /// a `ValidationFailure` (see `validationFailure(key:value:rule:message:)`) or a `ValidationError`.
    /// The default accepts every value. For one property, `propertyValidators` reads better.
    open func validateAttribute(_ value: AttributeValue, forKey key: String) throws {}

    /// Validators of single properties, by name: Core Data's `validate<Key>` methods. Each runs
    /// after the model's rules pass for its property (an attribute or a relationship), at every save
    /// and in `validateValue(_:forKey:)`, with the value as `value(forKey:)` gives it.
    ///
    /// ```swift
    /// override class var propertyValidators: [String: PropertyValidator] {
    ///     ["email": PropertyValidator(Employee.validateEmail)]
    /// }
    /// func validateEmail(_ value: Any?) throws { … }
    /// ```
    open class var propertyValidators: [String: PropertyValidator] { [:] }

    /// Checks an inserted object before save: the model's rules for every property, then custom
    /// validators. Override to add whole-object checks; combine with `super` through
    /// `ValidationError.collect` to report every failure.
    open func validateForInsert() throws { try validateProperties() }

    /// Checks an updated object before save; the same checks as for insert by default.
    open func validateForUpdate() throws { try validateProperties() }

    /// Checks a deleted object before save: a Deny relationship that still has destinations fails.
    open func validateForDelete() throws { try validateDenyRules() }

    // MARK: State

    /// Whether the values are not loaded yet (they load on first access).
    public var isFault: Bool { faultState }
    public var isInserted: Bool { changeState == .inserted }
    public var isUpdated: Bool { changeState == .updated }
    public var isDeleted: Bool { changeState == .deleted || changeState == .insertedThenDeleted }
    public var hasChanges: Bool { changeState != .none }

    /// Whether a to-many relationship's destinations are not loaded yet.
    public func hasFault(forRelationshipNamed name: String) -> Bool {
        if faultState { return true }
        guard case .many(let storage) = relationshipSlots[relationshipIndex(name)] else { return false }
        return storage.members == nil
    }

    /// Attribute values that differ from the last committed state, by name.
    public func changedValues() -> [String: AttributeValue] {
        guard let original else {
            return changeState == .inserted
                ? Dictionary(uniqueKeysWithValues: entity.attributes.map { ($0.name, attributeValues[$0.index]) }) : [:]
        }
        var changes: [String: AttributeValue] = [:]
        for attribute in entity.attributes
        where attributeValues[attribute.index] != original.attributes[attribute.index] {
            changes[attribute.name] = attributeValues[attribute.index]
        }
        return changes
    }

    /// Attribute values as last read from or written to the store (`nil` for never-saved objects).
    public func committedValues() -> [String: AttributeValue]? {
        guard changeState != .inserted, version > 0 else { return nil }
        willAccess()
        let values = original?.attributes ?? attributeValues
        return Dictionary(uniqueKeysWithValues: entity.attributes.map { ($0.name, values[$0.index]) })
    }

    @inline(__always) func willAccess() {
        if ManagedObjectContext.checksQueue { context?.checkQueue(using: self) }
        if faultState { context?.fulfillFault(self) }
        precondition(!faultState, "\(objectID) is a fault with no context to load it from (was its context reset?)")
    }

    @inline(__always) func willChange() {
        willAccess()
        context?.noteChange(self)
    }

    /// Before an edit of a to-many relationship: the object becomes updated, but its attribute values
    /// are not needed (nor loaded) for that.
    @inline(__always) func willChangeToMany() {
        if ManagedObjectContext.checksQueue { context?.checkQueue(using: self) }
        context?.noteToManyChange(self)
    }

    // MARK: Attributes

    func attributeIndex(_ key: String) -> Int {
        guard let index = entity.attributeIndexByName[key] else {
            preconditionFailure("\(entity.name) has no attribute named \(key.debugDescription)")
        }
        return index
    }

    func relationshipIndex(_ key: String) -> Int {
        guard let index = entity.relationshipIndexByName[key] else {
            preconditionFailure("\(entity.name) has no relationship named \(key.debugDescription)")
        }
        return index
    }

    /// The value of an attribute, by name.
    public subscript(key: String) -> AttributeValue {
        get { self[attributeAt: attributeIndex(key)] }
        set { self[attributeAt: attributeIndex(key)] = newValue }
    }

    /// The value of an attribute, by its index in `entity.attributes` (the fast path).
    public subscript(attributeAt index: Int) -> AttributeValue {
        get {
            willAccess()
            return attributeValues[index]
        }
        set {
            willChange()
            if isObserved || context?.recordsUndo == true { return setWatchedAttribute(index, newValue) }
            attributeValues[index] = newValue
        }
    }

    /// Key-value access: attributes as Swift values (`Int64`, `String`, `Decimal`, `Date`, ...), to-one
    /// relationships as `ManagedObject?`, to-many as `[ManagedObject]`.
    public func value(forKey key: String) -> Any? {
        if let index = entity.attributeIndexByName[key] { return self[attributeAt: index].anyValue }
        if let property = entity.fetchedProperty(named: key) { return fetchedObjects(of: property) }
        let relationship = entity.relationships[relationshipIndex(key)]
        return relationship.isToMany ? relatedObjects(forKey: key) : relatedObject(forKey: key)
    }

    /// Key-value writes: attribute values as Swift values or `AttributeValue`, relationships as a
    /// `ManagedObject?` or an array/set of them. A value of no attribute kind is a programmer error.
    public func setValue(_ value: Any?, forKey key: String) {
        if let index = entity.attributeIndexByName[key] {
            guard let converted = AttributeValue(value) else {
                preconditionFailure("\(type(of: value!)) cannot be stored in attribute \(entity.name).\(key)")
            }
            self[attributeAt: index] = converted
            return
        }
        let relationship = entity.relationships[relationshipIndex(key)]
        if relationship.isToMany {
            guard let objects = Self.members(of: value) else {
                preconditionFailure("to-many relationship \(entity.name).\(key) takes an array or set of objects")
            }
            setRelatedObjects(objects, forKey: key)
        } else {
            guard value == nil || value is ManagedObject else {
                preconditionFailure("to-one relationship \(entity.name).\(key) takes a ManagedObject or nil")
            }
            setRelatedObject(value as? ManagedObject, forKey: key)
        }
    }

    /// The objects of a to-many value as key-value writes take it (nil, an array, a set or an ordered
    /// set of objects); `nil` for anything else.
    static func members(of value: Any?) -> [ManagedObject]? {
        switch value {
        case nil: return []
        case let array as [ManagedObject]: return array
        case let set as Set<ManagedObject>: return Array(set)
        case let set as OrderedSet<ManagedObject>: return Array(set)
        default: return nil
        }
    }

    public func string(forKey key: String) -> String? {
        if case .string(let v) = self[key] { return v } else { return nil }
    }
    public func integer(forKey key: String) -> Int64? {
        if case .integer(let v) = self[key] { return v } else { return nil }
    }
    public func double(forKey key: String) -> Double? {
        switch self[key] {
        case .double(let v): return v
        case .float(let v): return Double(v)
        default: return nil
        }
    }
    public func decimal(forKey key: String) -> Decimal? {
        if case .decimal(let v) = self[key] { return v } else { return nil }
    }
    public func bool(forKey key: String) -> Bool? {
        if case .boolean(let v) = self[key] { return v } else { return nil }
    }
    public func date(forKey key: String) -> Date? { if case .date(let v) = self[key] { return v } else { return nil } }
    public func data(forKey key: String) -> Data? {
        if case .binary(let v) = self[key] { return v } else { return nil }
    }
    public func uuid(forKey key: String) -> UUID? { if case .uuid(let v) = self[key] { return v } else { return nil } }
    public func url(forKey key: String) -> URL? { if case .uri(let v) = self[key] { return v } else { return nil } }

    // MARK: Identity

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String {
        if faultState { return "<\(entity.name) \(objectID): fault>" }
        let values = entity.attributes.map { "\($0.name): \(attributeValues[$0.index])" }
        return "<\(entity.name) \(objectID)> {\(values.joined(separator: ", "))}"
    }

    /// Builds a failure about this object, for custom validation.
    public func validationFailure(
        key: String?, value: AttributeValue? = nil, rule: ValidationRule, message: String
    ) -> ValidationFailure {
        ValidationFailure(
            objectID: objectID, entityName: entity.name, key: key,
            value: value.flatMap { $0.isNull ? nil : $0.description }, rule: rule,
            message: message)
    }

    // MARK: Fault support

    /// Releases values and relationships (breaking reference cycles) and becomes a fault.
    func turnIntoFault(notify: Bool) {
        if notify, !faultState, type(of: self) != ManagedObject.self { willTurnIntoFault() }
        if holdsSnapshot {
            holdsSnapshot = false
            context?.snapshotReleased(objectID)
        }
        attributeValues = []
        relationshipSlots = []
        original = nil
        faultState = true
        context?.forgetFetchedObjects(of: self)
        faultBatch = nil
        if notify { didTurnIntoFault() }
    }

    /// Fills values from a store row.
    func fill(from row: StoreRow, in context: ManagedObjectContext) {
        var values = row.attributeValues
        for index in entity.transientAttributeIndexes { values[index] = entity.attributes[index].defaultValue }
        attributeValues = values
        // A fault may already hold to-many edits (see `editableStorage(of:)`); they are kept.
        let pending = faultState ? relationshipSlots : []
        relationshipSlots = entity.relationships.map { relationship in
            if relationship.isToMany {
                if relationship.index < pending.count, case .many(let storage) = pending[relationship.index] {
                    return .many(storage)
                }
                return .many(ToManyStorage(storedBy: relationship))
            }
            return .one(row.toOneDestinations[relationship.index].map { context.object(with: $0) })
        }
        version = row.version
        faultState = false
        faultBatch = nil
    }
}

/// IDs of faults fetched together; the first one to fire loads the rest with one store request.
final class FaultBatch {
    var ids: [ManagedObjectID]
    init(ids: [ManagedObjectID]) { self.ids = ids }
}
