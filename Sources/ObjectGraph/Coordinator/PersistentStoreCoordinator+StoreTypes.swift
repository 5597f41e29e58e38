import Foundation

/// The store types coordinators can make stores of, by name (one registry for the process).
extension PersistentStoreCoordinator {
    private final class Registry: @unchecked Sendable {
        // @unchecked: `types` is only read or written under `lock`.
        let lock = NSLock()
        var types: [String: any PersistentStore.Type] = [InMemoryStore.storeType: InMemoryStore.self]
    }
    private static let registry = Registry()

    /// Makes a store class available under a type name (`"SQLite"`, `"XML"`, `"JSONLines"`, ...).
    public static func registerStoreType(_ storeClass: any PersistentStore.Type, named name: String) {
        registry.lock.withLock { registry.types[name] = storeClass }
    }

    public static var registeredStoreTypes: [String] { registry.lock.withLock { registry.types.keys.sorted() } }

    public static func storeClass(named name: String) -> (any PersistentStore.Type)? {
        registry.lock.withLock { registry.types[name] }
    }
}
