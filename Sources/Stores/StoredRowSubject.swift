import Foundation
import ObjectGraph

/// A stored row seen by the in-memory predicate evaluator, for the parts of a request a database
/// store's SQL cannot express exactly; relationships load from the store on demand.
struct StoredRowSubject: PredicateSubject {
    let store: any PersistentStore
    let row: StoreRow

    var predicateObjectID: ManagedObjectID { row.objectID }

    func predicateValue(forKey key: String) -> PredicateValue {
        if let index = row.entity.attributeIndex(named: key) { return .value(row.attributeValues[index]) }
        guard let index = row.entity.relationshipIndex(named: key) else { return .value(.null) }
        let relationship = row.entity.relationships[index]
        if relationship.isToMany {
            let ids = (try? store.destinations(of: relationship, for: row.objectID)) ?? []
            let rows = (try? store.rows(for: ids)) ?? []
            let byID = Dictionary(rows.map { ($0.objectID, $0) }, uniquingKeysWith: { a, _ in a })
            return .collection(
                ids.map { id in byID[id].map { .subject(StoredRowSubject(store: store, row: $0)) } ?? .objectID(id) })
        }
        guard let id = row.toOneDestinations[index] else { return .value(.null) }
        if let target = try? store.row(for: id) { return .subject(StoredRowSubject(store: store, row: target)) }
        return .objectID(id)
    }
}
