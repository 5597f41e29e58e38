import Foundation

/// What one save changed: the IDs of the objects it inserted, updated and deleted. It holds only IDs,
/// so it crosses queues freely; another context applies it with `mergeChanges(fromContextDidSave:)`
/// on its own queue.
public struct ContextDidSave: Sendable {
    public let inserted: [ManagedObjectID]
    public let updated: [ManagedObjectID]
    public let deleted: [ManagedObjectID]
    /// The saving context's `name`.
    public let contextName: String?
    /// Whether the save reached the stores (`false` for a child's save into its parent).
    public let reachedStores: Bool
    /// The saving context.
    let origin: ObjectIdentifier
}
