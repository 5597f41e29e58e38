import Foundation

/// What a save does with an object that changed in the store since the context read it (an
/// optimistic-locking conflict: the row's version is no longer the one the object was read with, or
/// the row is gone). Set per context with `ManagedObjectContext.mergePolicy`.
public enum MergePolicy: Sendable, CaseIterable {
    /// The save fails with a `MergeError` listing every conflict; nothing is written.
    case error
    /// Per property: where both the object and the store changed a value, the store's wins; the
    /// object's other changes are kept. An object deleted in the store stays deleted.
    case storeTrumps
    /// Per property: where both changed a value, the object's wins; the store's changes to other
    /// properties are kept. An object deleted in the store is written again.
    case objectTrumps
    /// The object's whole state replaces the store's (written again if the store deleted it).
    case overwrite
    /// The object's changes are discarded: it takes the store's state (or goes, if the store deleted it).
    case rollback
}
