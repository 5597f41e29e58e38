import Drivers
import Foundation
import ObjectGraph

/// The store for large data: a SQLite file any SQLite client can read, with queries run in the
/// database so nothing needs to be in memory at once.
///
/// Layout (`SQLiteLayout`, option `layout`): **plain** for new stores — the model's table and column
/// names, integer keys of the source as primary keys and foreign keys, dates SQLite's date
/// functions read, decimals as numbers, one metadata table `_sluice_metadata`; or **graph** —
/// `_pk`, `_ent`, `_opt` in every table, plus `_sluice_keys`. A store keeps the layout it was made
/// with. See `SQLiteSchema` for names and `SQLiteValueCoding` for value formats.
///
/// ```swift
/// SQLiteStore.register()
/// let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
/// try coordinator.addPersistentStore(type: SQLiteStore.storeType, at: URL(fileURLWithPath: "shop.sqlite"),
///                                    options: ["journal_mode": "WAL", "synchronous": "NORMAL"])
/// ```
///
/// Options: `layout` (`plain`, the default for a new store, or `graph`; an existing store keeps
/// its own), `dates` (plain layout: `iso8601`, the default, or `unix`), `version_column` (plain
/// layout: `true` keeps a row version `_opt` for optimistic locking against other programs'
/// writes; by default a row's version is a hash of its values), `journal_mode` (WAL by default),
/// `synchronous` (NORMAL), `cache_size` (SQLite's meaning: pages, or KiB when negative; -4096
/// (4 MiB) by default), `index_build` (`after_load`, the default, builds non-unique indexes of an
/// empty store once the first read needs them or the store is removed, which is much faster for
/// bulk loads; `during_load` keeps them from the start), `read_only` (`true`/`false`),
/// `shares_file`. Unknown options are an error.
///
/// Every save is one transaction: a failure (a conflict, a broken uniqueness constraint, I/O) rolls
/// it back and leaves the file as it was.
public final class SQLiteStore: PersistentStore {
    public static let storeType = "SQLite"

    /// Makes the type available to every coordinator as `SQLiteStore.storeType`.
    public static func register() {
        PersistentStoreCoordinator.registerStoreType(SQLiteStore.self, named: storeType)
    }

    public let url: URL?
    public let configurationName: String?
    public var metadata: StoreMetadata
    let model: ManagedObjectModel
    /// The tables of the store's layout (made when the store is loaded and its layout known).
    private(set) var schema: SQLiteSchema!
    /// Value formats of the store's layout.
    private(set) var coding: SQLiteValueCoding!
    let options: Options
    private(set) var connection: SQLiteConnection!
    /// The metadata as last written to the file.
    var writtenMetadata: StoreMetadata?
    /// The rows of `_sluice_metadata` as read when the store opened (layout, keys handed out, …).
    var storeRows: [String: String] = [:]
    /// Rows of `_sluice_metadata` the store keeps itself, which writing `metadata` leaves alone.
    static let storeKeys = ["nextKeys", "unorderedTypes"]
    /// Non-unique indexes still to build (bulk load into an empty store).
    private(set) var pendingIndexes: [SQLiteSchema.Index] = []
    var readers: [ObjectIdentifier: RowReader] = [:]
    /// By entity index: an ID of this store that the IDs of the entity's rows are derived from.
    var idTemplates: [ManagedObjectID?] = []
    /// The next primary key to hand out per table, and the values last written to `_sluice_keys`.
    var nextKeys: [String: Int64] = [:]
    var writtenKeys: [String: Int64] = [:]
    var insertPlans: [ObjectIdentifier: WritePlan] = [:]
    /// UPDATE plans by entity and set of changed columns (an import's updates share a few sets).
    var updatePlans: [UpdatePlanKey: WritePlan] = [:]

    struct UpdatePlanKey: Hashable {
        let entity: ObjectIdentifier
        let changes: ChangedProperties?
    }
    /// Prepared uniqueness lookups (`rows(of:matching:on:)`).
    var keyLookups: [KeyLookup: SQLiteStatement] = [:]
    /// Prepared comparisons of stored states (`storedEqual`), by entity, columns and count.
    var matchStatements: [MatchKey: SQLiteStatement] = [:]

    public required init(
        coordinator: PersistentStoreCoordinator, configurationName: String?, url: URL?, options: [String: String]
    ) throws {
        self.url = url
        self.configurationName = configurationName
        self.model = coordinator.managedObjectModel
        self.options = try Options(options, url: url)
        self.metadata = StoreMetadata(storeType: Self.storeType)
    }

    deinit {
        if connection != nil { try? buildPendingIndexes() }
    }

    // MARK: Opening

    public func load() throws {
        let path = url?.path ?? ":memory:"
        do {
            connection = try SQLiteConnection(path: path, mode: options.readOnly ? .readOnly : .readWriteCreate)
            try connection.execute("PRAGMA busy_timeout = 5000")
            if !options.readOnly {
                try connection.execute("PRAGMA journal_mode = \(options.journalMode)")
                try connection.execute("PRAGMA synchronous = \(options.synchronous)")
            }
            try connection.execute("PRAGMA cache_size = \(options.cacheSize)")
            try SQLiteFunctions.register(on: connection)
            if try tableExists("_sluice_metadata") {
                try readMetadata()
                try makeSchema(layout: try storedLayout())
                if metadata.modelVersionHash == model.versionHash {
                    try prepareExistingSchema()
                } else if options.migratesLightly, !options.readOnly {
                    try migrateLightly()
                }
                // Otherwise the coordinator refuses the store, naming what differs; nothing is touched.
            } else {
                try makeSchema(layout: options.newLayout)
                let existing = try Set(
                    connection.makeStatement(
                        "SELECT name FROM sqlite_master WHERE type IN ('table', 'index', 'view', 'trigger')"
                    ).allStrings())
                if !existing.isEmpty {
                    guard options.sharesFile else {
                        throw StoreError(
                            .incompatibleModel,
                            "The file is a SQLite database but not a Sluice store (it has no _sluice_metadata table); "
                                + "import it with the SQLite reader instead of opening it as a store, or share the "
                                + "file (option shares_file)",
                            url: url)
                    }
                    let ours =
                        ["_sluice_metadata"] + (schema.layout.isGraph ? ["_sluice_keys"] : [])
                        + schema.tables.map(\.name) + schema.joinTables.map(\.name) + schema.indexes.map(\.name)
                    let clashes = ours.filter { name in
                        existing.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
                    }
                    guard clashes.isEmpty else {
                        throw StoreError(
                            .incompatibleModel,
                            "The database already has \(clashes.joined(separator: ", ")), which the store would "
                                + "create; nothing was changed (rename the entities, or use another file)",
                            url: url)
                    }
                }
                guard !options.readOnly else {
                    throw StoreError(.io, "The store does not exist yet and read_only is set", url: url)
                }
                try createSchema()
            }
        } catch let error as SQLiteError {
            throw storeError(error, "Could not open the SQLite store")
        }
    }

    private func makeSchema(layout: SQLiteLayout) throws {
        schema = SQLiteSchema(model: model, layout: layout, configuration: configurationName)
        coding = SQLiteValueCoding(layout: layout, unorderedTypes: storedUnorderedTypes)
    }

    /// The layout an existing store was made with (from its metadata; stores from before layouts
    /// have the graph layout), checked against the options.
    private func storedLayout() throws -> SQLiteLayout {
        let stored = storeRows["layout"] ?? "graph"
        if let asked = options.layout, asked != stored {
            throw StoreError(
                .invalidOption,
                "The store has the \(stored) layout, not \(asked); copy it into a new store of that layout "
                    + "(sluice convert) instead",
                url: url)
        }
        guard stored == "plain" else { return .graph }
        let made = SQLiteLayout.Options(
            dates: storeRows["dates"].flatMap(SQLiteLayout.DateStorage.init(rawValue:)) ?? .iso8601,
            versionColumn: storeRows["versionColumn"] == "true", textKeys: storeRows["textKeys"] == "true")
        let asked = SQLiteLayout.Options(
            dates: options.dates ?? made.dates, versionColumn: options.versionColumn ?? made.versionColumn,
            textKeys: made.textKeys)
        guard asked == made else {
            throw StoreError(
                .invalidOption,
                "The store was made with dates=\(made.dates.rawValue), version_column=\(made.versionColumn), not "
                    + "dates=\(asked.dates.rawValue), version_column=\(asked.versionColumn); copy it into a new "
                    + "store (sluice convert) to change them",
                url: url)
        }
        return .plain(made)
    }

    /// The attribute types of which the store holds values SQL does not order right (see
    /// `SQLiteValueCoding`), as recorded in its metadata.
    private var storedUnorderedTypes: Set<AttributeType> {
        Set(
            (storeRows["unorderedTypes"] ?? "").split(separator: ",").compactMap { AttributeType(rawValue: String($0)) }
        )
    }

    func tableExists(_ name: String) throws -> Bool {
        let statement = try connection.makeStatement("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        statement.bind(name, at: 1)
        return try statement.step()
    }

    func createSchema() throws {
        metadata.modelVersionHash = model.versionHash
        metadata.entityVersionHashes = model.entityVersionHashes
        for table in schema.tables where table.keyAttribute == nil { nextKeys[table.name] = 1 }
        try transaction {
            try connection.execute("CREATE TABLE _sluice_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            if schema.layout.isGraph {
                try connection.execute(
                    "CREATE TABLE _sluice_keys (\"table\" TEXT PRIMARY KEY, next INTEGER NOT NULL)")
            }
            for sql in schema.tableStatements { try connection.execute(sql) }
            try writeKeys()
            for index in schema.indexes where index.isUnique || !options.buildIndexesAfterLoad {
                try connection.execute(index.sql)
            }
            try writeMetadata()
        }
        keysWritten()
        pendingIndexes = options.buildIndexesAfterLoad ? schema.indexes.filter { !$0.isUnique } : []
    }

    /// A store written with this model: makes sure tables and indexes exist (a crash during a bulk
    /// load can leave indexes unbuilt) and that key allocation is ahead of every stored key.
    func prepareExistingSchema() throws {
        let existing = try Set(
            connection.makeStatement("SELECT name FROM sqlite_master WHERE type = 'index'").allStrings())
        let missing = schema.indexes.filter { !existing.contains($0.name) }
        guard !options.readOnly else { return try loadKeys() }
        try loadKeys()
        try transaction {
            for sql in schema.tableStatements { try connection.execute(sql) }
            for table in schema.tables where table.keyAttribute == nil {
                let largest = try connection.makeStatement(
                    "SELECT coalesce(max(\(quote(table.keyColumn))), 0) + 1 FROM \(quote(table.name))")
                nextKeys[table.name] = max(nextKeys[table.name] ?? 1, try largest.firstInt64() ?? 1)
            }
            try writeKeys()
            for index in missing where index.isUnique { try connection.execute(index.sql) }
        }
        keysWritten()
        pendingIndexes = missing.filter { !$0.isUnique }
        if !options.buildIndexesAfterLoad { try buildPendingIndexes() }
    }

    /// Builds the indexes a bulk load deferred (all of them, or those of `tables`). Reads build the
    /// ones of the tables they read; call it yourself to pay the cost at a moment of your choosing
    /// (the end of an import).
    public func buildPendingIndexes(on tables: Set<String>? = nil) throws {
        let due = pendingIndexes.filter { tables?.contains($0.table) ?? true }
        guard !due.isEmpty, !options.readOnly else { return }
        do {
            try transaction { for index in due { try connection.execute(index.sql) } }
        } catch let error as SQLiteError {
            throw storeError(error, "Could not build the store's indexes")
        }
        pendingIndexes.removeAll { index in due.contains { $0.name == index.name } }
    }

    public func willRemove(from coordinator: PersistentStoreCoordinator) {
        try? buildPendingIndexes()
        // Statistics for the query planner where queries wanted them; `analysis_limit` samples
        // (milliseconds) instead of reading whole tables (a third of a second per million rows).
        if !options.readOnly { try? connection?.execute("PRAGMA analysis_limit = 400; PRAGMA optimize") }
    }

    // MARK: Transactions and errors

    func transaction(_ body: () throws -> Void) throws {
        try connection.execute("BEGIN IMMEDIATE")
        do {
            try body()
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    func storeError(_ error: SQLiteError, _ what: String, objectID: ManagedObjectID? = nil) -> StoreError {
        let code: StoreError.Code
        switch error.code.primary {
        case .corrupt, .notADatabase: code = .corrupt
        case .constraint: code = .constraintViolation
        default: code = .io
        }
        return StoreError(code, "\(what): \(error)", url: url, objectID: objectID, underlying: error)
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
