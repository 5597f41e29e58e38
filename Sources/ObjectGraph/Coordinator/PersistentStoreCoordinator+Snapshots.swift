/// The snapshot table: the stored row each object of a root context was filled from, shared by
/// every root context of the coordinator and kept current by its saves.
extension PersistentStoreCoordinator {
    struct Snapshot {
        /// The row as last read or written; `nil` once a save deleted it.
        var row: StoreRow?
        var references: Int
    }

    /// Number of rows held as snapshots (each used by at least one object of a root context).
    public var snapshotCount: Int { performLocked { snapshots.count } }

    /// The version of the row an object of some root context last read or wrote, while one does.
    public func snapshotVersion(for objectID: ManagedObjectID) -> Int64? {
        performLocked { snapshots[objectID]?.row?.version }
    }

    /// One more object uses the snapshot of each row; a newer row replaces the one held.
    func retainSnapshots(_ rows: [StoreRow]) {
        guard !rows.isEmpty else { return }
        performLocked {
            snapshots.reserveCapacity(snapshots.count + rows.count)
            for row in rows {
                Self.retain(
                    &snapshots[row.objectID, default: Snapshot(row: nil, references: 0)], row,
                    byContent: versionsByContent)
            }
        }
    }

    /// Holds `row` as the snapshot of its object: a newer version replaces the row held (counted
    /// versions grow; a content version that differs belongs to a row read later, so newer).
    private static func retain(_ snapshot: inout Snapshot, _ row: StoreRow, byContent: Bool) {
        if snapshot.references == 0 {
            snapshot.row = row
        } else if let held = snapshot.row, byContent ? held.version != row.version : held.version < row.version {
            snapshot.row = row
        }
        snapshot.references += 1
    }

    /// One object fewer uses the snapshot of each ID; unused snapshots are dropped.
    func releaseSnapshots(_ objectIDs: [ManagedObjectID]) {
        guard !objectIDs.isEmpty else { return }
        performLocked {
            for id in objectIDs {
                guard let index = snapshots.index(forKey: id) else {
                    preconditionFailure("released the snapshot of \(id), which no object held")
                }
                if snapshots.values[index].references == 1 {
                    snapshots.remove(at: index)
                } else {
                    snapshots.values[index].references -= 1
                }
            }
        }
    }

    /// Keeps held snapshots current after a save: rewritten rows gain a version, deleted ones go
    /// (called by `save`, with the coordinator locked).
    func noteSaved(_ request: SaveChangesRequest) {
        guard !snapshots.isEmpty else { return }
        for var row in request.updatedRows {
            guard let index = snapshots.index(forKey: row.objectID) else { continue }
            row.version = writtenVersions(of: [row]) { _ in row.version }[0]
            snapshots.values[index].row = row
        }
        for var row in request.insertedRows {
            guard let index = snapshots.index(forKey: row.objectID) else { continue }
            row.version = writtenVersions(of: [row]) { _ in nil }[0]
            snapshots.values[index].row = row
        }
        for (id, _) in request.deletedObjects {
            if let index = snapshots.index(forKey: id) { snapshots.values[index].row = nil }
        }
    }
}
