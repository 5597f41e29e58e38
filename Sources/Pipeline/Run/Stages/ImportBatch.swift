import ObjectGraph
import Readers

/// A batch on its way through a context's stages (map → link → write): the records of a batch
/// (top-level records with their nested children), each with its mapped values, its object once
/// it has one, and its rejection once it has one.
struct ImportBatch {
    /// One record of the batch.
    struct Item {
        var record: Record
        var mapped: MappedRecord
        /// Its kind in the source's `RecordKinds`.
        var kind: Int
        /// For children: the item of the parent record.
        var parent: Int?
        var object: ManagedObject?
        var reject: RecordReject?
        /// The item of the group's top-level record (itself for a top-level record).
        var top = 0
        /// For top-level records: where the record is in its input.
        var origin: PendingRecords.Origin?
        /// The group waits for a parent that has not arrived (`PendingRecords`).
        var waits = false
        /// Written by a batch insert (no object in the context).
        var bulkID: ManagedObjectID?
        /// Its object is the stored object of its key, updated and linked as the record says
        /// (`StoredMatch`), instead of a new one merged into it at the save.
        var isStored = false
        /// For a record of links: the links it added that were not there before (owner, to-many,
        /// destination), undone when it is rejected.
        var links: [(owner: ManagedObject, relationship: String, destination: ManagedObject)] = []
    }

    var items: [Item] = []
    /// Batch `number` of its source, or `nil` for records that waited for a parent (`origins` given).
    var number: Int?
    /// For a retry: the origins of the waiting groups tried again.
    var retried: [PendingRecords.Origin]?
    /// Records read per kind (not counted again when retried).
    var readByKind: [Int] = []
    /// Rows per kind left out as their SQL said (`INSERT OR IGNORE` repeating a key): unchanged.
    var ignoredByKind: [Int: Int] = [:]
    /// Records per kind left out by their source's `where`.
    var filteredByKind: [Int: Int] = [:]

    /// Whether the item and its group still go on (not rejected, not waiting).
    func isLive(_ index: Int) -> Bool { items[index].reject == nil && !items[index].waits }

    /// The live record whose own object is `objectID` (not one that links to it).
    func record(of objectID: ManagedObjectID) -> Int? {
        items.indices.first { isLive($0) && items[$0].object?.objectID == objectID }
    }

    /// The item whose object has `objectID`, whose links added to or linked that object, or whose
    /// lookup created that object.
    func owner(of objectID: ManagedObjectID) -> Int? {
        if let index = record(of: objectID) { return index }
        if let index = items.indices.first(where: { index in
            isLive(index)
                && items[index].links.contains { $0.owner.objectID == objectID || $0.destination.objectID == objectID }
        }) {
            return index
        }
        return items.indices.first { index in
            guard isLive(index), let object = items[index].object else { return false }
            return object.entity.relationships.contains {
                !$0.isToMany && object.relatedObject(forKey: $0.name)?.objectID == objectID
            }
        }
    }
}
