import Foundation

/// Something a predicate can be evaluated against: a managed object, or a store's row.
///
/// Stores that evaluate predicates in memory (the in-memory store, atomic stores) wrap their rows in
/// a type conforming to this protocol and use `FetchPredicate.compiled(for:)`, so every store answers
/// exactly as the context does for pending changes.
public protocol PredicateSubject {
    var predicateObjectID: ManagedObjectID { get }
    /// The value of one property: `.value` for attributes and empty to-ones, `.subject` for a to-one
    /// destination, `.collection` of subjects for to-many relationships.
    func predicateValue(forKey key: String) -> PredicateValue
}

/// A value met while evaluating a predicate.
public enum PredicateValue {
    case value(AttributeValue)
    case subject(any PredicateSubject)
    case objectID(ManagedObjectID)
    case collection([PredicateValue])

    var scalar: AttributeValue? { if case .value(let v) = self { return v } else { return nil } }

    var identity: ManagedObjectID? {
        switch self {
        case .subject(let s): return s.predicateObjectID
        case .objectID(let id): return id
        default: return nil
        }
    }
}
