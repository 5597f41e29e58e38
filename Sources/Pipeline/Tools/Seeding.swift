import Foundation
import ModelFiles
import ObjectGraph

/// `sluice seed`: a model file and a seed (fixture) file loaded into a store through the object
/// graph — inserted, linked by key values, validated as a whole and saved.
public enum Seeding {
    /// What a seed did.
    public struct Result: Sendable {
        /// Objects inserted, per entity.
        public var counts: [String: Int]
        /// `the SQLite store <path>` or `an in-memory store`.
        public var target: String
        /// What the store holds afterwards, an entity at a time (`GraphReport`); empty unless asked for.
        public var listing: String

        /// `Seeded 7 objects (Customer: 2, Order: 5) into the SQLite store out/seeded.sqlite.`
        public var summary: String {
            let total = counts.values.reduce(0, +)
            let perEntity = counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            return "Seeded \(total) objects (\(perEntity)) into \(target)."
        }
    }

    /// Loads the model at `modelPath` and the seed at `seedPath` into the SQLite store at `storePath`
    /// (an in-memory store when `nil`).
    /// - Parameter listsStore: also read back what the store holds (`Result.listing`).
    /// - Throws: `ModelFileError`; `StoreError` (opening, saving); `SeedFileError`; `ValidationError`
    ///   (every failure of the graph); `MergeError`.
    public static func seed(
        modelAt modelPath: String, seedAt seedPath: String, into storePath: String?, listsStore: Bool
    ) throws -> Result {
        let model = try ModelFile.load(contentsOf: URL(fileURLWithPath: modelPath))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        if let storePath { try OutputFile.requireFile(storePath, "the store") }
        let storeURL = storePath.map { URL(fileURLWithPath: $0) }
        try TargetStore.add(to: coordinator, at: storeURL)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait {
            let counts = try SeedFile.load(contentsOf: URL(fileURLWithPath: seedPath), into: context)
            try context.save()
            context.reset()
            let target = storeURL.map { "the SQLite store \($0.path)" } ?? "an in-memory store"
            return Result(counts: counts, target: target, listing: listsStore ? try GraphReport.text(for: context) : "")
        }
    }
}
