import Foundation
import ObjectGraph
import Stores

/// Opens the store an import writes to: SQLite for a file path (the default target), in-memory when
/// there is no path. Registers the built-in store types first.
public enum TargetStore {
    /// Makes the built-in store types (`SQLite`) known to every coordinator.
    public static func registerBuiltInTypes() {
        SQLiteStore.register()
    }

    /// Adds the target store to `coordinator`: `url` nil gives an in-memory store; otherwise a SQLite
    /// store (or `type`, when given) at `url`, creating its directory.
    /// - Throws: `StoreError` (unknown type, a file written with another model, I/O).
    @discardableResult
    public static func add(to coordinator: PersistentStoreCoordinator, at url: URL?, type: String? = nil,
                           options: [String: String] = [:]) throws -> any PersistentStore {
        registerBuiltInTypes()
        guard let url else { return try coordinator.addPersistentStore(type: type ?? InMemoryStore.storeType, options: options) }
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw StoreError(.io, "Could not create the directory for the store: \(error.localizedDescription)", url: url)
        }
        return try coordinator.addPersistentStore(type: type ?? SQLiteStore.storeType, at: url, options: options)
    }
}
