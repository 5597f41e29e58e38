import Foundation

/// Metadata every store keeps: its type, its UUID, the hash of the model that wrote it, and user keys.
public struct StoreMetadata: Sendable, Hashable {
    public var storeType: String
    /// The store's UUID; permanent object IDs name it.
    public var identifier: String
    /// `nil` for a new, empty store (the coordinator records the model's hash on add).
    public var modelVersionHash: String?
    public var entityVersionHashes: [String: String]
    /// Keys the application sets (import checkpoints, source file names, ...).
    public var userInfo: [String: String]

    public init(
        storeType: String, identifier: String = UUID().uuidString, modelVersionHash: String? = nil,
        entityVersionHashes: [String: String] = [:], userInfo: [String: String] = [:]
    ) {
        self.storeType = storeType
        self.identifier = identifier
        self.modelVersionHash = modelVersionHash
        self.entityVersionHashes = entityVersionHashes
        self.userInfo = userInfo
    }
}
