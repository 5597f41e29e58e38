import Foundation
import OrderedCollections

/// The destinations of one to-many relationship of one object, and the edits since the last save.
///
/// `members` is `nil` while the relationship is a fault; edits made meanwhile are kept in `added` and
/// `removed` and applied when it loads, so inserting many objects under one parent never loads the
/// parent's whole collection.
final class ToManyStorage {
    @exclusivity(unchecked) var members: OrderedSet<ManagedObject>?
    @exclusivity(unchecked) var added: OrderedSet<ManagedObject> = []
    @exclusivity(unchecked) var removed: Set<ManagedObject> = []
    /// Set when an ordered relationship was reordered without adding or removing anything.
    @exclusivity(unchecked) var isReordered = false

    init(loaded: Bool) { members = loaded ? [] : nil }

    /// Storage for a relationship whose destinations are in the store (a fault until read), or —
    /// for a transient relationship, which no store holds — empty.
    init(storedBy relationship: RelationshipDescription) { members = relationship.isTransient ? [] : nil }

    /// Adds a destination. While a fault, `added` may name a destination the store already has; stores
    /// treat such adds as no-ops, as they treat removals of links that do not exist.
    func add(_ object: ManagedObject) {
        if members != nil {
            if members!.contains(object) { return }
            members!.append(object)
        }
        if !removed.isEmpty { removed.remove(object) }
        added.append(object)
    }

    func remove(_ object: ManagedObject) {
        if members != nil {
            guard members!.remove(object) != nil else { return }
        }
        added.remove(object)
        removed.insert(object)
    }

    func clearEdits() {
        added.removeAll()
        removed.removeAll()
        isReordered = false
    }
}
