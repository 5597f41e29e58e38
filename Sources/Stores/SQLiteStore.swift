import Drivers
import Foundation
import ObjectGraph

/// The store for large data: a SQLite file any SQLite client can read, with queries run in the
/// database so nothing needs to be in memory at once.
///
/// Layout: a table per root entity named after it (`_pk INTEGER PRIMARY KEY`, `_ent` entity number,
/// `_opt` row version, a column per attribute, a foreign-key column per to-one relationship), a join
/// table per many-to-many or inverse-less to-many relationship, `_sluice_metadata` (store UUID, model
/// version hashes, user keys) and `_sluice_keys` (primary keys handed out per table). See
/// `SQLiteSchema` for names and `SQLiteValueCoding` for value formats.
///
/// ```swift
/// SQLiteStore.register()
/// let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
/// try coordinator.addPersistentStore(type: SQLiteStore.storeType, at: URL(fileURLWithPath: "shop.sqlite"),
///                                    options: ["journal_mode": "WAL", "synchronous": "NORMAL"])
/// ```
///
/// Options: `journal_mode` (WAL by default), `synchronous` (NORMAL), `cache_size` (SQLite's
/// meaning: pages, or KiB when negative; -4096 (4 MiB) by default), `index_build` (`after_load`, the
/// default, builds non-unique indexes of an empty store once the first read needs them or the store
/// is removed, which is much faster for bulk loads; `during_load` keeps them from the start),
/// `read_only` (`true`/`false`). Unknown options are an error.
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
    let schema: SQLiteSchema
    let options: Options
    private(set) var connection: SQLiteConnection!
    /// The metadata as last written to the file.
    private var writtenMetadata: StoreMetadata?
    /// Non-unique indexes still to build (bulk load into an empty store).
    private(set) var pendingIndexes: [SQLiteSchema.Index] = []
    private var readers: [ObjectIdentifier: RowReader] = [:]
    /// By entity index: an ID of this store that the IDs of the entity's rows are derived from.
    private var idTemplates: [ManagedObjectID?] = []
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
    private var keyLookups: [KeyLookup: SQLiteStatement] = [:]

    struct Options {
        var journalMode = "WAL"
        var synchronous = "NORMAL"
        var cacheSize: Int64 = -4096
        var buildIndexesAfterLoad = true
        var readOnly = false
        /// `shares_file`: a SQLite database of another program may hold the store's tables next to
        /// its own (which the store never touches; a table name both want is refused).
        var sharesFile = false

        init(_ values: [String: String], url: URL?) throws {
            func invalid(_ key: String, _ allowed: String) -> StoreError {
                StoreError(
                    .invalidOption,
                    "SQLite store option \(key)=\(values[key]!.debugDescription) is not valid; use \(allowed)", url: url
                )
            }
            for (key, value) in values {
                switch key {
                case "journal_mode":
                    let allowed = ["DELETE", "TRUNCATE", "PERSIST", "MEMORY", "WAL", "OFF"]
                    guard allowed.contains(value.uppercased()) else {
                        throw invalid(key, allowed.joined(separator: ", "))
                    }
                    journalMode = value.uppercased()
                case "synchronous":
                    let allowed = ["OFF", "NORMAL", "FULL", "EXTRA"]
                    guard allowed.contains(value.uppercased()) else {
                        throw invalid(key, allowed.joined(separator: ", "))
                    }
                    synchronous = value.uppercased()
                case "cache_size":
                    guard let size = Int64(value) else {
                        throw invalid(key, "a whole number (pages, or KiB when negative)")
                    }
                    cacheSize = size
                case "index_build":
                    guard value == "after_load" || value == "during_load" else {
                        throw invalid(key, "after_load or during_load")
                    }
                    buildIndexesAfterLoad = value == "after_load"
                case "read_only":
                    guard let flag = Bool(value) else { throw invalid(key, "true or false") }
                    readOnly = flag
                case "shares_file":
                    guard let flag = Bool(value) else { throw invalid(key, "true or false") }
                    sharesFile = flag
                default:
                    throw StoreError(
                        .invalidOption,
                        "SQLite store option \(key.debugDescription) is unknown; known options: cache_size, "
                            + "index_build, journal_mode, read_only, shares_file, synchronous",
                        url: url)
                }
            }
        }
    }

    public required init(
        coordinator: PersistentStoreCoordinator, configurationName: String?, url: URL?, options: [String: String]
    ) throws {
        self.url = url
        self.configurationName = configurationName
        self.model = coordinator.managedObjectModel
        self.schema = SQLiteSchema(model: model)
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
                if metadata.modelVersionHash == model.versionHash { try prepareExistingSchema() }
                // Otherwise the coordinator refuses the store, naming what differs; nothing is touched.
            } else {
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
                        ["_sluice_metadata", "_sluice_keys"] + schema.tables.map(\.name) + schema.joinTables.map(\.name)
                        + schema.indexes.map(\.name)
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

    private func tableExists(_ name: String) throws -> Bool {
        let statement = try connection.makeStatement("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        statement.bind(name, at: 1)
        return try statement.step()
    }

    private func createSchema() throws {
        metadata.modelVersionHash = model.versionHash
        metadata.entityVersionHashes = model.entityVersionHashes
        try transaction {
            try connection.execute("CREATE TABLE _sluice_metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            try connection.execute("CREATE TABLE _sluice_keys (\"table\" TEXT PRIMARY KEY, next INTEGER NOT NULL)")
            for sql in schema.tableStatements { try connection.execute(sql) }
            for table in schema.tables {
                let insert = try connection.makeStatement("INSERT INTO _sluice_keys VALUES (?, 1)")
                insert.bind(table.name, at: 1)
                try insert.stepToEnd()
            }
            for index in schema.indexes where index.isUnique || !options.buildIndexesAfterLoad {
                try connection.execute(index.sql)
            }
            try writeMetadata()
        }
        try loadKeys()
        pendingIndexes = options.buildIndexesAfterLoad ? schema.indexes.filter { !$0.isUnique } : []
    }

    /// A store written with this model: makes sure tables and indexes exist (a crash during a bulk
    /// load can leave indexes unbuilt) and that key allocation is ahead of every stored key.
    private func prepareExistingSchema() throws {
        let existing = try Set(
            connection.makeStatement("SELECT name FROM sqlite_master WHERE type = 'index'").allStrings())
        let missing = schema.indexes.filter { !existing.contains($0.name) }
        guard !options.readOnly else { return try loadKeys() }
        try transaction {
            for sql in schema.tableStatements { try connection.execute(sql) }
            for table in schema.tables {
                let sync = try connection.makeStatement(
                    """
                    INSERT INTO _sluice_keys VALUES (?1, (SELECT coalesce(max(_pk), 0) + 1 FROM \(quote(table.name))))
                    ON CONFLICT("table") DO UPDATE SET next = max(next, excluded.next)
                    """)
                sync.bind(table.name, at: 1)
                try sync.stepToEnd()
            }
            for index in missing where index.isUnique { try connection.execute(index.sql) }
        }
        try loadKeys()
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
        if !options.readOnly { try? connection?.execute("PRAGMA optimize") }
    }

    // MARK: Metadata

    private func readMetadata() throws {
        metadata = try Self.readMetadata(connection, url: url)
        writtenMetadata = metadata
    }

    private static func readMetadata(_ connection: SQLiteConnection, url: URL?) throws -> StoreMetadata {
        let statement = try connection.makeStatement("SELECT key, value FROM _sluice_metadata")
        var values: [String: String] = [:]
        while try statement.step() { values[statement.string(0) ?? ""] = statement.string(1) ?? "" }
        guard let identifier = values["identifier"] else {
            throw StoreError(.corrupt, "The store's _sluice_metadata table has no identifier row", url: url)
        }
        var hashes: [String: String] = [:]
        if let json = values["entityVersionHashes"] {
            guard let decoded = try? JSONDecoder().decode([String: String].self, from: Data(json.utf8)) else {
                throw StoreError(.corrupt, "The store's entity version hashes are not valid JSON", url: url)
            }
            hashes = decoded
        }
        var userInfo: [String: String] = [:]
        for (key, value) in values where key.hasPrefix("user.") { userInfo[String(key.dropFirst(5))] = value }
        return StoreMetadata(
            storeType: values["storeType"] ?? Self.storeType, identifier: identifier,
            modelVersionHash: values["modelVersionHash"], entityVersionHashes: hashes, userInfo: userInfo)
    }

    /// The metadata of the store at `url`, read without a model and without opening it as a store
    /// (Core Data's `metadataForPersistentStore(ofType:at:)`): what `sluice inspect` shows and how a
    /// program finds out which model a file needs.
    /// - Throws: `StoreError` when the file does not exist, is not SQLite, or is not a Sluice store.
    public static func metadata(at url: URL) throws -> StoreMetadata {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw StoreError(.io, "There is no store at this path", url: url)
        }
        do {
            let connection = try SQLiteConnection(path: url.path, mode: .readOnly)
            try connection.execute("PRAGMA busy_timeout = 5000")
            let exists = try connection.makeStatement(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sluice_metadata'")
            guard try exists.step() else {
                throw StoreError(
                    .incompatibleModel,
                    "The file is a SQLite database but not a Sluice store (it has no _sluice_metadata table)", url: url)
            }
            return try readMetadata(connection, url: url)
        } catch let error as SQLiteError {
            throw StoreError(.io, "Could not read the store's metadata: \(error)", url: url)
        }
    }

    /// Writes metadata that changed since it was last written (inside the caller's transaction).
    func writeMetadata() throws {
        guard metadata != writtenMetadata else { return }
        let hashes = String(decoding: try JSONEncoder.sorted.encode(metadata.entityVersionHashes), as: UTF8.self)
        try connection.execute("DELETE FROM _sluice_metadata")
        let insert = try connection.cachedStatement("INSERT INTO _sluice_metadata VALUES (?, ?)")
        var rows = [
            ("storeType", metadata.storeType), ("identifier", metadata.identifier), ("entityVersionHashes", hashes),
            ("schemaVersion", "1"), ("sqliteVersion", SQLiteConnection.libraryVersion),
        ]
        if let hash = metadata.modelVersionHash { rows.append(("modelVersionHash", hash)) }
        rows += metadata.userInfo.map { ("user.\($0.key)", $0.value) }
        for (key, value) in rows {
            try insert.reset()
            insert.bind(key, at: 1)
            insert.bind(value, at: 2)
            try insert.stepToEnd()
        }
        writtenMetadata = metadata
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
        switch error.code & 0xff {
        case 11, 26: code = .corrupt  // SQLITE_CORRUPT, SQLITE_NOTADB
        case 19: code = .constraintViolation  // SQLITE_CONSTRAINT
        default: code = .io
        }
        return StoreError(code, "\(what): \(error)", url: url, objectID: objectID)
    }

    // MARK: Reading rows

    /// Turns result rows of `SELECT <table.selectList>` into store rows.
    final class RowReader {
        let entity: EntityDescription
        let attributePositions: [(index: Int, position: Int32, type: AttributeType)]
        let foreignKeys: [(index: Int, position: Int32, entityPosition: Int32?, destination: EntityDescription)]
        let relationshipCount: Int

        init(_ map: SQLiteSchema.EntityMap) {
            entity = map.entity
            attributePositions = map.entity.attributes.compactMap { attribute in
                map.attributeColumns[attribute.index].map {
                    (attribute.index, Int32(map.table.position(of: $0)), attribute.type)
                }
            }
            foreignKeys = map.entity.relationships.compactMap { relationship in
                map.foreignKeys[relationship.index].map { key in
                    (
                        relationship.index, Int32(map.table.position(of: key.column)),
                        key.entityColumn.map { Int32(map.table.position(of: $0)) }, relationship.destinationEntity
                    )
                }
            }
            relationshipCount = map.entity.relationships.count
        }
    }

    func reader(for entity: EntityDescription) -> RowReader {
        if let reader = readers[ObjectIdentifier(entity)] { return reader }
        let reader = RowReader(schema.map(for: entity))
        readers[ObjectIdentifier(entity)] = reader
        return reader
    }

    /// The object ID of a stored row given its key and entity number.
    func objectID(primaryKey: Int64, entityNumber: Int64, table: String) throws -> ManagedObjectID {
        objectID(of: try entity(number: entityNumber, primaryKey: primaryKey, table: table), primaryKey: primaryKey)
    }

    private func entity(number: Int64, primaryKey: Int64, table: String) throws -> EntityDescription {
        guard let entity = schema.entity(number: number) else {
            throw StoreError(
                .corrupt,
                "Row _pk=\(primaryKey) of table \(table) has entity number \(number), which the model does not have",
                url: url)
        }
        return entity
    }

    /// The ID of row `primaryKey` of `entity` (derived from a template per entity: no allocation).
    func objectID(of entity: EntityDescription, primaryKey: Int64) -> ManagedObjectID {
        if idTemplates.isEmpty { idTemplates = Array(repeating: nil, count: model.entities.count) }
        if let template = idTemplates[entity.index], template.storeIdentifier == metadata.identifier {
            return template.withReference(.integer(primaryKey))
        }
        let id = ManagedObjectID(
            entityName: entity.name, storeIdentifier: metadata.identifier, reference: .integer(primaryKey))
        idTemplates[entity.index] = id
        return id
    }

    /// Reads the current row of `statement` (selected with a table's `selectList`, from position 0).
    func readRow(_ statement: SQLiteStatement, table: SQLiteSchema.Table) throws -> StoreRow {
        let primaryKey = statement.int64(0)
        let entity = try entity(number: statement.int64(1), primaryKey: primaryKey, table: table.name)
        let id = objectID(of: entity, primaryKey: primaryKey)
        let reader = reader(for: entity)
        var values = [AttributeValue](repeating: .null, count: entity.attributes.count)
        for (index, position, type) in reader.attributePositions {
            let stored = statement.value(position)
            guard let value = SQLiteValueCoding.attributeValue(stored, as: type) else {
                throw StoreError(
                    .corrupt,
                    "Column \(statement.columnName(position)) of table \(table.name), row _pk=\(primaryKey), holds "
                        + "\(stored), which is not a valid \(type) value",
                    url: url, objectID: id)
            }
            values[index] = value
        }
        var destinations = [ManagedObjectID?](repeating: nil, count: reader.relationshipCount)
        for (index, position, entityPosition, destination) in reader.foreignKeys where !statement.isNull(position) {
            let key = statement.int64(position)
            var entity = destination
            if let entityPosition, !statement.isNull(entityPosition) {
                guard let actual = schema.entity(number: statement.int64(entityPosition)) else {
                    throw StoreError(
                        .corrupt,
                        "Column \(statement.columnName(entityPosition)) of table \(table.name), row "
                            + "_pk=\(primaryKey), names an unknown entity",
                        url: url, objectID: id)
                }
                entity = actual
            }
            destinations[index] = objectID(of: entity, primaryKey: key)
        }
        return StoreRow(
            objectID: id, entity: entity, version: statement.int64(2), attributeValues: values,
            toOneDestinations: destinations)
    }

    func primaryKey(of objectID: ManagedObjectID) -> Int64? {
        guard objectID.storeIdentifier == metadata.identifier, case .integer(let key) = objectID.reference else {
            return nil
        }
        return key
    }

    public func row(for objectID: ManagedObjectID) throws -> StoreRow? {
        try rows(for: [objectID]).first
    }

    public func rows(for objectIDs: [ManagedObjectID]) throws -> [StoreRow] {
        var byTable: [ObjectIdentifier: (table: SQLiteSchema.Table, keys: [Int64])] = [:]
        for id in objectIDs {
            guard let key = primaryKey(of: id), let entity = model.entity(named: id.entityName) else { continue }
            let table = schema.map(for: entity).table
            byTable[ObjectIdentifier(table), default: (table, [])].keys.append(key)
        }
        let wanted = Set(objectIDs)
        var rows: [StoreRow] = []
        do {
            for (table, keys) in byTable.values {
                var start = 0
                while start < keys.count {
                    let chunk = keys[start..<min(start + 500, keys.count)]
                    let placeholders =
                        chunk.count == 1
                        ? "= ?" : "IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ",")))"
                    let statement = try connection.cachedStatement(
                        "SELECT \(table.plainSelectList) FROM \(quote(table.name)) WHERE _pk \(placeholders)")
                    for (offset, key) in chunk.enumerated() { statement.bind(key, at: Int32(offset + 1)) }
                    while try statement.step() {
                        let row = try readRow(statement, table: table)
                        // An ID naming another entity than the row's is not this row.
                        if wanted.contains(row.objectID) { rows.append(row) }
                    }
                    start += chunk.count
                }
            }
        } catch let error as SQLiteError {
            throw storeError(error, "Could not read rows")
        }
        return rows
    }

    // MARK: Fetching

    public func fetchRows(_ request: StoreFetchRequest) throws -> [StoreRow] {
        let table = schema.map(for: request.entity).table
        let query = try SQLiteQueryBuilder(store: self).select(request, columns: table.selectList(alias: "t0"))
        let rows = try run(query) { try readRow($0, table: table) }
        guard !query.isExact else { return rows }
        return try request.apply(to: rows) { RowSubject(store: self, row: $0) }
    }

    public func fetchObjectIDs(_ request: StoreFetchRequest) throws -> [ManagedObjectID] {
        let table = schema.map(for: request.entity).table
        let query = try SQLiteQueryBuilder(store: self).select(request, columns: "t0._pk, t0._ent")
        guard query.isExact else { return try fetchRows(request).map(\.objectID) }
        return try run(query) { try objectID(primaryKey: $0.int64(0), entityNumber: $0.int64(1), table: table.name) }
    }

    public func countRows(_ request: StoreFetchRequest) throws -> Int {
        let query = try SQLiteQueryBuilder(store: self).select(request.unpaged, columns: "count(*)", sorted: false)
        guard query.isExact else { return try fetchRows(request.unpaged).count }
        return Int(try run(query) { $0.int64(0) }.first ?? 0)
    }

    /// Rows whose constrained attributes hold one of `keys`, for a save's uniqueness check: answered
    /// from the constraint's unique index (always built), without building the indexes a bulk load
    /// defers — a lookup per save would otherwise build them after the first save and make every
    /// later insert of the load maintain them.
    public func rows(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [StoreRow] {
        let map = schema.map(for: entity)
        var found: [StoreRow] = []
        try lookUp(keys, of: entity, on: properties, selectingRows: true) { statement, _ in
            found.append(try readRow(statement, table: map.table))
        }
        return found
    }

    /// Only the key columns and `_pk`, `_ent`: SQLite answers from the unique index alone (it holds the rowid).
    public func objectIDs(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [KeyedObjectID] {
        var found: [KeyedObjectID] = []
        try lookUp(keys, of: entity, on: properties, selectingRows: false) { statement, table in
            let primaryKey = statement.int64(0)
            let entity = try self.entity(number: statement.int64(1), primaryKey: primaryKey, table: table)
            var key: [AttributeValue] = []
            key.reserveCapacity(properties.count)
            for (offset, property) in properties.enumerated() {
                let position = Int32(2 + offset)
                guard let attribute = property as? AttributeDescription else {
                    // A to-one relationship: the destination's primary key, as `ManagedObjectID.keyValue` has it.
                    key.append(statement.isNull(position) ? .null : .integer(statement.int64(position)))
                    continue
                }
                let stored = statement.value(position)
                guard let value = SQLiteValueCoding.attributeValue(stored, as: attribute.type) else {
                    throw StoreError(
                        .corrupt,
                        "Column \(attribute.name) of table \(table), row _pk=\(primaryKey), holds \(stored), which is "
                            + "not a valid \(attribute.type) value",
                        url: url)
                }
                key.append(value)
            }
            found.append(KeyedObjectID(key: key, objectID: objectID(of: entity, primaryKey: primaryKey)))
        }
        return found
    }

    /// One grouping query over the table (`GROUP BY` the key's columns `HAVING COUNT(*) > 1`).
    public func duplicateKeys(
        of entity: EntityDescription, on properties: [PropertyDescription], limit: Int
    ) throws -> [DuplicateKey] {
        let map = schema.map(for: entity)
        let columns = keyColumns(map, properties).map { quote($0) }
        guard columns.count == properties.count, !columns.isEmpty, limit > 0 else { return [] }
        // A unique index on these columns (or some of them) already rules duplicates out, NULLs
        // apart as here: nothing to look for.
        let keyColumns = Set(self.keyColumns(map, properties))
        do {
            for index in schema.indexes
            where index.isUnique && index.table == map.table.name && Set(index.columns).isSubset(of: keyColumns) {
                let exists = try connection.cachedStatement(
                    "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?")
                exists.bind(index.name, at: 1)
                defer { try? exists.reset() }
                if try exists.step() { return [] }
            }
        } catch let error as SQLiteError {
            throw storeError(error, "Reading the indexes of \(map.table.name) failed")
        }
        var conditions = columns.map { "\($0) IS NOT NULL" }
        if map.sharesTable {
            conditions.append("_ent IN (\(map.kindNumbers.map(String.init).joined(separator: ", ")))")
        }
        let list = columns.joined(separator: ", ")
        let sql =
            "SELECT \(list), COUNT(*) FROM \(quote(map.table.name)) WHERE \(conditions.joined(separator: " AND ")) "
            + "GROUP BY \(list) HAVING COUNT(*) > 1 LIMIT \(limit)"
        var found: [DuplicateKey] = []
        do {
            let statement = try connection.makeStatement(sql)
            while try statement.step() {
                var key: [AttributeValue] = []
                for (offset, property) in properties.enumerated() {
                    let position = Int32(offset)
                    guard let attribute = property as? AttributeDescription else {
                        key.append(.integer(statement.int64(position)))
                        continue
                    }
                    let stored = statement.value(position)
                    guard let value = SQLiteValueCoding.attributeValue(stored, as: attribute.type) else {
                        throw StoreError(
                            .corrupt,
                            "Column \(attribute.name) of table \(map.table.name) holds \(stored), which is not a "
                                + "valid \(attribute.type) value",
                            url: url)
                    }
                    key.append(value)
                }
                found.append(DuplicateKey(key: key, count: Int(statement.int64(Int32(properties.count)))))
            }
        } catch let error as SQLiteError {
            throw storeError(error, "Looking for duplicate keys of \(entity.name) failed")
        }
        return found
    }

    /// Runs the prepared key lookup of `entity` on `attributes` for `keys`, 500 keys at a time, calling
    /// `row` for each row found (the statement positioned on it, and the table's name).
    private func lookUp(
        _ keys: [AttributeValue], of entity: EntityDescription, on properties: [PropertyDescription],
        selectingRows: Bool,
        _ row: (SQLiteStatement, String) throws -> Void
    ) throws {
        let map = schema.map(for: entity)
        let columns = keyColumns(map, properties)
        // Models refuse constraints on transient attributes, which have no column (nothing stored to clash with).
        guard columns.count == properties.count, !columns.isEmpty else { return }
        var start = 0
        do {
            while start < keys.count {
                let end = min(start + 500 * columns.count, keys.count)
                // Statements exist for 1, 2, 4, … 256 and 500 keys (unused places bound to NULL, which
                // matches nothing): a handful per key rather than one per count, each holding memory.
                let count = (end - start) / columns.count
                let places = count > 256 ? 500 : 1 << (Int.bitWidth - (count - 1).leadingZeroBitCount)
                let statement = try keyLookupStatement(
                    map, columns, count: count == 1 ? 1 : places, selectingRows: selectingRows)
                var parameter: Int32 = 1
                for value in keys[start..<end] {
                    SQLiteValueCoding.bind(value, to: statement, at: parameter)
                    parameter += 1
                }
                while parameter <= Int32(statement.parameterCount) {
                    statement.bindNull(at: parameter)
                    parameter += 1
                }
                while try statement.step() { try row(statement, map.table.name) }
                start = end
            }
        } catch let error as SQLiteError {
            throw storeError(error, "Could not look up keys of \(entity.name)")
        }
    }

    /// The columns of key properties: attributes' columns, to-one relationships' foreign keys.
    private func keyColumns(_ map: SQLiteSchema.EntityMap, _ properties: [PropertyDescription]) -> [String] {
        properties.compactMap { property in
            property is RelationshipDescription
                ? map.foreignKeys[property.index]?.column : map.attributeColumns[property.index]
        }
    }

    /// The prepared lookup for `count` keys, its SQL built once per entity, columns and count.
    private func keyLookupStatement(
        _ map: SQLiteSchema.EntityMap, _ columns: [String], count: Int, selectingRows: Bool
    ) throws -> SQLiteStatement {
        let key = KeyLookup(entity: map.number, columns: columns, count: count, selectingRows: selectingRows)
        if let statement = keyLookups[key] {
            try statement.reset()
            return statement
        }
        let statement = try connection.makeStatement(
            keyLookupSQL(map, columns, count: count, selectingRows: selectingRows))
        keyLookups[key] = statement
        return statement
    }

    struct KeyLookup: Hashable {
        let entity: Int64
        let columns: [String]
        let count: Int
        let selectingRows: Bool
    }

    /// `SELECT <row> FROM <table> WHERE col IN (?, ...)`; for compound keys the keys are a table of
    /// constant rows joined to the table (`WITH k(c0, c1) AS (VALUES (?, ?), ...) ... CROSS JOIN`),
    /// since SQLite 3.40 answers `(a, b) IN (VALUES ...)` by scanning the whole index. Either way each
    /// key is one search of the constraint's unique index.
    private func keyLookupSQL(
        _ map: SQLiteSchema.EntityMap, _ columns: [String], count: Int, selectingRows: Bool = true
    ) -> String {
        let kinds =
            map.sharesTable ? " AND t0._ent IN (\(map.kindNumbers.map(String.init).joined(separator: ", ")))" : ""
        let selected =
            selectingRows
            ? map.table.selectList(alias: "t0")
            : "t0._pk, t0._ent, " + columns.map { "t0.\(quote($0))" }.joined(separator: ", ")
        if columns.count == 1 {
            let list = Array(repeating: "?", count: count).joined(separator: ", ")
            return
                "SELECT \(selected) FROM \(quote(map.table.name)) t0 WHERE t0.\(quote(columns[0])) IN (\(list))\(kinds)"
        }
        let tuple = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let names = columns.indices.map { "c\($0)" }
        let join = columns.indices.map { "t0.\(quote(columns[$0])) = k.c\($0)" }.joined(separator: " AND ")
        return
            "WITH k(\(names.joined(separator: ", "))) AS (VALUES "
            + "\(Array(repeating: tuple, count: count).joined(separator: ", "))) "
            + "SELECT \(selected) FROM k CROSS JOIN \(quote(map.table.name)) t0 ON \(join) WHERE 1\(kinds)"
    }

    /// SQLite's plan (`EXPLAIN QUERY PLAN`, one line per step) for the key lookup of a uniqueness
    /// check of `entity` on `attributes` with `keys` keys, e.g. `SEARCH t0 USING INDEX ...`.
    public func keyLookupPlan(
        of entity: EntityDescription, on properties: [PropertyDescription], keys: Int
    ) throws -> [String] {
        let map = schema.map(for: entity)
        let statement = try connection.makeStatement(
            "EXPLAIN QUERY PLAN " + keyLookupSQL(map, keyColumns(map, properties), count: keys))
        var plan: [String] = []
        while try statement.step() { plan.append(statement.string(3) ?? "") }
        return plan
    }

    private func run<T>(
        _ query: SQLiteQuery, buildingIndexes: Bool = true, _ read: (SQLiteStatement) throws -> T
    ) throws -> [T] {
        if buildingIndexes { try buildPendingIndexes(on: query.tables) }
        do {
            let statement = try connection.cachedStatement(query.sql)
            for (offset, value) in query.arguments.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
            var results: [T] = []
            while try statement.step() { results.append(try read(statement)) }
            return results
        } catch let error as SQLiteError {
            throw storeError(error, "A fetch failed")
        }
    }

    public func destinations(
        of relationship: RelationshipDescription, for objectID: ManagedObjectID
    ) throws -> [ManagedObjectID] {
        guard let key = primaryKey(of: objectID) else { return [] }
        let sql: String
        let tableName: String
        switch schema.map(for: relationship.entity).toMany[relationship.index] {
        case .foreignKey(let table, let foreignKey, let orderColumn)?:
            tableName = table.name
            sql =
                "SELECT _pk, _ent FROM \(quote(table.name)) WHERE \(quote(foreignKey.column)) = ? ORDER BY "
                + "\(orderColumn.map { quote($0) + ", " } ?? "")_pk"
        case .joinTable(let join, let isSource)?:
            tableName = join.name
            let side = join.side(isSource: isSource)
            sql =
                "SELECT \(side.far), \(side.farEntity.map(quote) ?? "NULL") FROM \(quote(join.name)) WHERE "
                + "\(side.near) = ? ORDER BY \(side.order.map { quote($0) + ", " } ?? "")rowid"
        case nil:
            preconditionFailure("\(relationship) is not a to-many relationship")
        }
        let destination = schema.map(for: relationship.destinationEntity)
        try buildPendingIndexes(on: [tableName])
        do {
            let statement = try connection.cachedStatement(sql)
            statement.bind(key, at: 1)
            var ids: [ManagedObjectID] = []
            while try statement.step() {
                let number = statement.isNull(1) ? destination.number : statement.int64(1)
                ids.append(try self.objectID(primaryKey: statement.int64(0), entityNumber: number, table: tableName))
            }
            return ids
        } catch let error as SQLiteError {
            throw storeError(error, "Could not load \(relationship) of \(objectID)", objectID: objectID)
        }
    }

    // MARK: Keys

    /// Keys come from a counter per table, read from `_sluice_keys` when the store opens and written
    /// back inside each save's transaction, so a failed save leaves even the counter as it was. (One
    /// writer per store: a second process writing the same file meanwhile makes saves fail with a
    /// constraint error rather than overwrite rows.)
    public func newReferences(for entity: EntityDescription, count: Int) throws -> [ManagedObjectID.Reference] {
        let table = schema.map(for: entity).table.name
        guard let first = nextKeys[table] else {
            throw StoreError(.corrupt, "_sluice_keys has no row for table \(table)", url: url)
        }
        nextKeys[table] = first + Int64(count)
        return (0..<Int64(count)).map { .integer(first + $0) }
    }

    func loadKeys() throws {
        let statement = try connection.makeStatement("SELECT \"table\", next FROM _sluice_keys")
        while try statement.step() { nextKeys[statement.string(0) ?? ""] = statement.int64(1) }
        writtenKeys = nextKeys
    }

    /// Inside a save's transaction: records keys handed out since the last save.
    func writeKeys() throws {
        for (table, next) in nextKeys where writtenKeys[table] != next {
            let update = try connection.cachedStatement(
                "UPDATE _sluice_keys SET next = max(next, ?) WHERE \"table\" = ?")
            update.bind(next, at: 1)
            update.bind(table, at: 2)
            try update.stepToEnd()
        }
    }
}

extension SQLiteStatement {
    func firstInt64() throws -> Int64? { try step() ? int64(0) : nil }

    func allStrings() throws -> [String] {
        var values: [String] = []
        while try step() { values.append(string(0) ?? "") }
        return values
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
