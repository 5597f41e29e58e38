import Foundation
import ModelFiles
import ObjectGraph
import Stores

/// Opens the store an import writes to: SQLite for a file path (the default target), PostgreSQL for
/// a `postgresql://` URL, in-memory when there is no path. Registers the built-in store types first.
public enum TargetStore {
    /// Makes the built-in store types (`SQLite`, `XML`, `Binary`) known to every coordinator.
    public static func registerBuiltInTypes() {
        SQLiteStore.register()
        XMLStore.register()
        BinaryStore.register()
        PostgresStore.register()
    }

    /// The type of the store file at `url` from its first bytes (`SQLite format 3`, `SLUICEBS`,
    /// `<?xml`), or from its extension when it does not exist yet (`.xml`, `.bin`/`.sluicebin`,
    /// anything else SQLite).
    public static func type(ofStoreAt url: URL) -> String {
        if PostgresStore.isDatabaseURL(url.absoluteString) { return PostgresStore.storeType }
        if let handle = try? FileHandle(forReadingFrom: url), let head = try? handle.read(upToCount: 16) {
            try? handle.close()
            if head.starts(with: Data("SQLite format 3".utf8)) { return SQLiteStore.storeType }
            if head.starts(with: Data("SLUICEBS".utf8)) { return BinaryStore.storeType }
            if head.starts(with: Data("<?xml".utf8)) || head.starts(with: Data("<sluice-store".utf8)) {
                return XMLStore.storeType
            }
        }
        switch url.pathExtension.lowercased() {
        case "xml": return XMLStore.storeType
        case "bin", "sluicebin": return BinaryStore.storeType
        default: return SQLiteStore.storeType
        }
    }

    /// The store types a command line names (`--to` of `convert`, `--store-type` of `import`), by name.
    static let typesByName = [
        "sqlite": SQLiteStore.storeType, "xml": XMLStore.storeType, "binary": BinaryStore.storeType,
        "postgres": PostgresStore.storeType,
    ]

    /// The type of the store a command writes at `path`: the one `given` names (`sqlite`, `xml`,
    /// `binary`); else an existing file's (from its first bytes); else the extension's — `.sqlite`,
    /// `.sqlite3`, `.db`, `.db3`, `.s3db`, `.sl3` or none SQLite, `.xml` XML, `.bin`/`.sluicebin`
    /// binary.
    /// - Throws: `UsageError` for an unknown name, or an extension that names no store type (`.json`):
    ///   never a SQLite file under a name that says otherwise.
    public static func storeType(forTargetAt path: String, given: String?, option: String) throws -> String {
        if PostgresStore.isDatabaseURL(path) {
            guard given == nil || given?.lowercased() == "postgres" else {
                throw UsageError("\(option) \(given!) does not go with a postgresql:// target")
            }
            return PostgresStore.storeType
        }
        if let given {
            guard let type = typesByName[given.lowercased()] else {
                throw UsageError("\(option) must be sqlite, xml or binary, not \(given.debugDescription)")
            }
            guard type != PostgresStore.storeType else {
                throw UsageError("\(option) postgres needs a postgresql:// target, not a file")
            }
            return type
        }
        let url = URL(fileURLWithPath: path)
        if FileManager.default.fileExists(atPath: path) { return type(ofStoreAt: url) }
        switch url.pathExtension.lowercased() {
        case "", "sqlite", "sqlite3", "db", "db3", "s3db", "sl3": return SQLiteStore.storeType
        case "xml": return XMLStore.storeType
        case "bin", "sluicebin": return BinaryStore.storeType
        case let other:
            throw UsageError(
                "\(path): .\(other) is not a store type Sluice writes (.sqlite, .db, .xml, .bin): name the type with "
                    + "\(option) sqlite, xml or binary")
        }
    }

    /// Whether a target exists: the file, or a store in the database schema a URL names.
    public static func exists(_ target: String) -> Bool {
        guard PostgresStore.isDatabaseURL(target) else { return FileManager.default.fileExists(atPath: target) }
        return (try? URL(string: target).flatMap(PostgresStore.metadata(at:))) != nil
    }

    /// A store location as a URL: a `postgresql://` URL as it is, else a file path.
    public static func url(_ target: String) -> URL {
        PostgresStore.isDatabaseURL(target)
            ? (URL(string: target) ?? URL(fileURLWithPath: target)) : URL(fileURLWithPath: target)
    }

    /// A store location as messages name it: the file's path, or the database URL without its password.
    public static func name(of url: URL) -> String {
        PostgresStore.isDatabaseURL(url.absoluteString) ? PostgresStore.redacted(url.absoluteString) : url.path
    }

    /// The metadata of the store file at `url`, of whichever built-in type, read without a model.
    /// - Throws: `StoreError`.
    public static func metadata(ofStoreAt url: URL) throws -> StoreMetadata {
        if PostgresStore.isDatabaseURL(url.absoluteString) {
            guard let metadata = try PostgresStore.metadata(at: url) else {
                throw StoreError(.io, "There is no store in this database schema", url: url)
            }
            return metadata
        }
        // A FIFO or device would be waited on forever, or read as a store it is not.
        var info = stat()
        if stat(url.path, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
            throw StoreError(.io, "The file is not a store (it is not a regular file)", url: url)
        }
        switch type(ofStoreAt: url) {
        case XMLStore.storeType: return try XMLStore.metadata(at: url)
        case BinaryStore.storeType: return try BinaryStore.metadata(at: url)
        default: return try SQLiteStore.metadata(at: url)
        }
    }

    /// `sluice convert`: copies the store at `source` into a new store of `type` at `destination`
    /// (`PersistentStoreCoordinator.migratePersistentStore`), keeping object references where the
    /// target allows. The model is `model`, or the one recorded in the source.
    /// - Returns: the number of objects copied.
    /// - Throws: `StoreError`; `StoreInspection.NoModel`.
    public static func convert(
        _ source: URL, to destination: URL, type: String? = nil, model given: ManagedObjectModel? = nil,
        options: [String: String] = [:]
    ) throws -> Int {
        registerBuiltInTypes()
        let sourceType = Self.type(ofStoreAt: source)
        var model = given
        if model == nil {
            model = try StoredModel.model(in: try metadata(ofStoreAt: source), store: name(of: source))
        }
        guard let model else { throw StoreInspection.NoModel(path: name(of: source)) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: sourceType, at: source)
        let copy = try coordinator.migratePersistentStore(
            store, to: destination, type: type ?? Self.type(ofStoreAt: destination), options: options)
        defer { coordinator.removePersistentStore(copy) }
        return try model.entities.filter { $0.superentity == nil }.reduce(0) { total, entity in
            total
                + (try copy.countRows(
                    StoreFetchRequest(
                        entity: entity, predicate: nil, sortDescriptors: [], includesSubentities: true, fetchLimit: 0,
                        fetchOffset: 0)))
        }
    }

    /// `convert(_:to:type:model:)` for paths and names as a command line gives them: `type` is
    /// `sqlite`, `xml` or `binary` (`nil`: from the destination's extension); the model file at
    /// `modelPath`, or the one recorded in the source when `nil`; `layout` and `dates` the options of
    /// a SQLite destination.
    /// - Throws: `UsageError` for an unknown type or SQLite options for another type; `ModelFileError`;
    ///   what `convert` throws.
    public static func convert(
        _ source: String, to destination: String, typeName: String?, modelAt modelPath: String?,
        layout: String? = nil, dates: String? = nil
    ) throws -> Int {
        var options: [String: String] = [:]
        if let layout { options["layout"] = layout }
        if let dates { options["dates"] = dates }
        let destinationURL = url(destination)
        if PostgresStore.isDatabaseURL(destination) {
            guard try PostgresStore.metadata(at: destinationURL) == nil else {
                throw StoreError(
                    .io, "There is a store in this schema already; name a new schema",
                    url: URL(string: name(of: destinationURL)))
            }
        } else {
            try OutputFile.requireFile(destination, "the destination")
        }
        let type = try storeType(forTargetAt: destination, given: typeName, option: "--to")
        if !options.isEmpty, type != SQLiteStore.storeType {
            throw UsageError("--layout and --dates are options of a SQLite destination")
        }
        if type == PostgresStore.storeType {
            // One transaction, committed once the copy is whole: nothing is left of a failed one.
            options = ["transaction": "run", "lock": "exclusive"]
        }
        return try convert(
            url(source), to: destinationURL, type: type, model: StoreInspection.loadModel(modelPath),
            options: options)
    }

    /// Adds the target store to `coordinator`: `url` nil gives an in-memory store; a `postgresql://`
    /// URL the PostgreSQL store; otherwise a SQLite store (or `type`, when given) at `url`, creating
    /// its directory.
    /// - Throws: `StoreError` (unknown type, a file written with another model, I/O).
    @discardableResult
    public static func add(
        to coordinator: PersistentStoreCoordinator, at url: URL?, type: String? = nil,
        options: [String: String] = [:]
    ) throws -> any PersistentStore {
        registerBuiltInTypes()
        guard let url else {
            return try coordinator.addPersistentStore(type: type ?? InMemoryStore.storeType, options: options)
        }
        if PostgresStore.isDatabaseURL(url.absoluteString) {
            return try coordinator.addPersistentStore(type: PostgresStore.storeType, at: url, options: options)
        }
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw StoreError(
                .io, "Could not create the directory for the store: \(error.localizedDescription)", url: url)
        }
        return try coordinator.addPersistentStore(type: type ?? SQLiteStore.storeType, at: url, options: options)
    }
}
