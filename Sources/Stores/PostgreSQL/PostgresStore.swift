import Drivers
import Foundation
import ObjectGraph

/// The store for teams that outgrow one file: a schema of a PostgreSQL database, in the plain layout
/// of `SQLiteStore` (the model's table and column names, the source's keys as primary keys, foreign
/// keys with REFERENCES) in PostgreSQL's types (`PostgresCoding`).
///
/// ```swift
/// PostgresStore.register()
/// try coordinator.addPersistentStore(
///     type: PostgresStore.storeType, at: URL(string: "postgresql://loader@db.example/shop?schema=sales"))
/// ```
///
/// The URL is libpq's: the password comes from it, `PGPASSWORD`, `~/.pgpass` or a service file, and
/// `sslmode` and the other parameters pass through; `schema` (a query parameter or the option) names
/// the schema, `public` by default. The store's `url` never holds the password. Options: `schema`,
/// `read_only` (`true`/`false`), `lock` (`exclusive` or `shared`: take the run lock, an advisory
/// lock on the schema, before anything is read), `lock_wait` (seconds to wait for it), `transaction`
/// (`run`: the store opens inside a run's transaction, `commitRunTransaction()` ends it; `save`, the
/// default: each save commits). Unknown options are an error.
///
/// A store in a schema owns the tables of its model and `_sluice_metadata` there; other tables of
/// the schema are never touched, and a table the model would make that exists already without being
/// the store's is refused. Every save is one transaction — or, inside a run's transaction
/// (`beginRunTransaction()`), one savepoint of it, so that the run commits or leaves nothing.
/// Row versions are content hashes (`RowVersioning.contentHash`), checked against the row as it is
/// when a save writes it (`SELECT … FOR UPDATE`).
public final class PostgresStore: PersistentStore {
    public static let storeType = "PostgreSQL"

    /// Makes the type available to every coordinator as `PostgresStore.storeType`.
    public static func register() {
        PersistentStoreCoordinator.registerStoreType(PostgresStore.self, named: storeType)
    }

    /// Whether a store location names a PostgreSQL database (`postgresql://`, `postgres://`).
    public static func isDatabaseURL(_ text: String) -> Bool {
        text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
    }

    /// The URL without its password.
    public let url: URL?
    public let configurationName: String?
    public var metadata: StoreMetadata
    let model: ManagedObjectModel
    /// What libpq connects with: the URL as given, less `schema`.
    private let conninfo: String
    let schemaName: String
    let readOnly: Bool
    private(set) var connection: PostgresConnection!
    /// Table and column names: the plain layout's.
    private(set) var schema: SQLiteSchema!
    var writtenMetadata: StoreMetadata?
    var nextKeys: [String: Int64] = [:]
    var writtenKeys: [String: Int64] = [:]
    /// Whether a run's transaction is open (saves are savepoints of it).
    private(set) var inRunTransaction = false
    /// Options `lock`, `lock_wait`, `transaction`: the run lock to take (`exclusive`, `shared`) and how
    /// long to wait for it, and whether the store opens inside a run's transaction.
    private var runLock: String?
    private var lockWait: Double = 0
    private var startsRunTransaction = false
    /// Indexes and foreign keys a new store's first load makes at its end.
    private var pending: [String] = []
    /// By table: the primary key and unique indexes a new store's first load has not needed yet.
    private var pendingUniques: [String: [String]] = [:]
    /// Tables the run's transaction made, by name, with the highest unique keys written to them.
    var freshTables: [String: FreshTable] = [:]
    /// Seconds a streamed COPY stays open at most: well inside the session's statement timeout.
    var streamSeconds = 1.0
    var idTemplates: [ManagedObjectID?] = []
    /// Cursors opened so far (each `enumerateRows` names its own).
    var cursors = 0
    /// Row readers and write plans by entity index.
    var readers: [Int: SQLiteStore.RowReader] = [:]
    var writePlans: [Int: WritePlan] = [:]
    /// Per table: the SQL types of its columns (key included), for DDL and staging.
    var columnTypes: [String: [String: String]] = [:]

    public required init(
        coordinator: PersistentStoreCoordinator, configurationName: String?, url: URL?, options: [String: String]
    ) throws {
        guard let url, Self.isDatabaseURL(url.absoluteString) else {
            throw StoreError(.invalidOption, "A PostgreSQL store needs a postgresql:// URL", url: nil)
        }
        var schemaName: String?
        (conninfo, schemaName) = Self.connectionParts(of: url)
        let shown = URL(string: Self.redacted(url.absoluteString))
        self.url = shown
        var readOnly = false
        for (key, value) in options {
            switch key {
            case "schema": schemaName = value
            case "lock":
                guard value == "exclusive" || value == "shared" else {
                    throw StoreError(
                        .invalidOption, "PostgreSQL store option lock must be exclusive or shared", url: shown)
                }
                runLock = value
            case "lock_wait":
                guard let seconds = Double(value), seconds >= 0 else {
                    throw StoreError(
                        .invalidOption, "PostgreSQL store option lock_wait must be seconds (0 or more)", url: shown)
                }
                lockWait = seconds
            case "transaction":
                guard value == "run" || value == "save" else {
                    throw StoreError(
                        .invalidOption, "PostgreSQL store option transaction must be run or save", url: shown)
                }
                startsRunTransaction = value == "run"
            case "read_only":
                guard let flag = Bool(value) else {
                    throw StoreError(
                        .invalidOption,
                        "PostgreSQL store option read_only=\(value.debugDescription) is not valid; "
                            + "use true or false", url: shown)
                }
                readOnly = flag
            default:
                throw StoreError(
                    .invalidOption,
                    "PostgreSQL stores have no option \(key) "
                        + "(options: schema, read_only, lock, lock_wait, transaction)",
                    url: shown)
            }
        }
        self.schemaName = schemaName ?? "public"
        guard !self.schemaName.isEmpty, self.schemaName.utf8.count <= 63 else {
            throw StoreError(
                .invalidOption,
                "PostgreSQL schema name \(self.schemaName.debugDescription) is "
                    + (self.schemaName.isEmpty ? "empty" : "longer than the 63 bytes PostgreSQL keeps of a name")
                    + "; name another schema", url: shown)
        }
        self.readOnly = readOnly
        self.configurationName = configurationName
        self.model = coordinator.managedObjectModel
        self.metadata = StoreMetadata(storeType: Self.storeType)
    }

    /// The run lock is another run's (`lock` option): the underlying error of the store error.
    public struct Locked: Error {}

    /// `"schema"."name"`.
    func qualified(_ name: String) -> String { quote(schemaName) + "." + quote(name) }

    // MARK: Opening

    public func load() throws {
        do {
            connection = try PostgresConnection(conninfo: conninfo)
            try connection.execute("SET TIME ZONE 'UTC'; SET client_min_messages = warning")
            let timeout = try connection.query("SELECT setting FROM pg_settings WHERE name = 'statement_timeout'")
            if let milliseconds = (timeout.first?.first ?? nil).flatMap(Double.init), milliseconds > 0 {
                streamSeconds = min(streamSeconds, milliseconds / 1000 / 4)
            }
            if let runLock, try !lockRun(waiting: lockWait, shared: runLock == "shared") {
                throw StoreError(
                    .io, "Another run holds the lock of schema \(schemaName); nothing was changed", url: url,
                    underlying: Locked())
            }
            // Also the tables a new store makes are part of the run's transaction.
            if startsRunTransaction { try beginRunTransaction() }
            schema = SQLiteSchema(
                model: model, layout: .plain(SQLiteLayout.Options()), configuration: configurationName)
            columnTypes = Self.columnTypes(of: schema)
            if try tableExists("_sluice_metadata") {
                try readMetadata()
                if metadata.modelVersionHash == model.versionHash { try loadKeys() }
                // Otherwise the coordinator refuses the store, naming what differs; nothing is touched.
            } else {
                guard !readOnly else {
                    throw StoreError(.io, "The store does not exist yet and read_only is set", url: url)
                }
                try createSchema()
            }
        } catch let error as PostgresError {
            throw storeError(error, "Could not open the PostgreSQL store")
        }
    }

    func tableExists(_ name: String) throws -> Bool {
        try connection.run(
            "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = $1 AND tablename = $2",
            [.text(schemaName), .text(name)]
        ).rowCount > 0
    }

    private func createSchema() throws {
        let existing = Set(
            try connection.query("SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = $1", [schemaName])
                .compactMap { $0[0] })
        // PostgreSQL cuts longer names to 63 bytes, where two could become one.
        let tables = schema.tables.map(\.name) + schema.joinTables.map(\.name)
        let names =
            tables.map { ($0, "table \($0)") }
            + columnTypes.sorted { $0.key < $1.key }.flatMap { table, types in
                types.keys.sorted().map { ($0, "column \($0) of table \(table)") }
            }
        if let (_, long) = names.first(where: { $0.0.utf8.count > 63 }) {
            throw StoreError(
                .incompatibleModel,
                "The model's \(long) is longer than the 63 bytes PostgreSQL keeps of a name; give it a shorter "
                    + "name in the model (table: or column: in a model file); nothing was changed", url: url)
        }
        let clashes = tables.filter { existing.contains($0) }
        guard clashes.isEmpty else {
            throw StoreError(
                .incompatibleModel,
                "Schema \(schemaName) already has \(clashes.joined(separator: ", ")), which the store would create, "
                    + "and no _sluice_metadata table; nothing was changed (name another schema)",
                url: url)
        }
        metadata.modelVersionHash = model.versionHash
        metadata.entityVersionHashes = model.entityVersionHashes
        for table in schema.tables where table.keyAttribute == nil { nextKeys[table.name] = 1 }
        try transaction {
            try connection.execute("CREATE SCHEMA IF NOT EXISTS \(quote(schemaName))")
            try connection.execute(
                "CREATE TABLE \(qualified("_sluice_metadata")) (key text PRIMARY KEY, value text NOT NULL)")
            let statements = tableStatements()
            for sql in statements.tables { try connection.execute(sql) }
            // Inside a run's transaction the first load goes first: its indexes and foreign keys
            // are made at its end, in one pass each (`buildPending()`) — and a table's primary key
            // and unique indexes once something needs them checked (`buildUniques`): a load of
            // rising keys (`PostgresStore+Streaming`) needs none of them.
            pending = statements.keys + statements.indexes + statements.foreignKeys
            for (table, sql) in statements.uniques { pendingUniques[table, default: []].append(sql) }
            if startsRunTransaction { noteFreshTables() } else { try buildPending() }
            try writeKeys()
            try writeMetadata()
        }
        writtenKeys = nextKeys
    }

    /// Commits the run's transaction (`transaction: run`), if one is open.
    public func finishWriting() throws { try commitRunTransaction() }

    /// Rolls an open run transaction back and gives the run lock up (the connection may outlive
    /// the coordinator's use of the store).
    public func willRemove(from coordinator: PersistentStoreCoordinator) {
        if inRunTransaction { try? rollbackRunTransaction() }
        if runLock != nil { _ = try? connection?.query("SELECT pg_advisory_unlock_all()") }
    }

    // MARK: Transactions and errors

    /// Opens a transaction that every save until `commitRunTransaction()` is part of: what a run
    /// with `commit: atomic` writes, which readers see only once it commits and a failed or killed
    /// run never leaves behind.
    public func beginRunTransaction() throws {
        guard !inRunTransaction else { return }
        do { try connection.execute("BEGIN") } catch let error as PostgresError {
            throw storeError(error, "Could not begin the run's transaction")
        }
        inRunTransaction = true
    }

    public func commitRunTransaction() throws {
        guard inRunTransaction else { return }
        do {
            try writeKeys()
            try writeMetadata()
            try buildPending()
            inRunTransaction = false
            freshTables = [:]
            try connection.execute("COMMIT")
            writtenKeys = nextKeys
        } catch let error as PostgresError {
            throw storeError(error, "The run's transaction did not commit; the database holds what it held before")
        }
    }

    public func rollbackRunTransaction() throws {
        guard inRunTransaction else { return }
        inRunTransaction = false
        freshTables = [:]
        (pending, pendingUniques) = ([], [:])
        try? connection.execute("ROLLBACK")
        try loadKeys()
        try readMetadata()
    }

    /// Makes the indexes and foreign keys a new store's first load left for its end (the foreign
    /// keys check every row then). Reads that need an index (to-many relationships) make them first.
    public func buildPending() throws {
        try buildUniques()
        guard !pending.isEmpty else { return }
        do {
            try raiseMaintenanceMemory()
            for sql in pending { try connection.execute(sql) }
            pending = []
        } catch let error as PostgresError {
            throw storeError(error, "Could not make the store's indexes and foreign keys")
        }
    }

    /// Makes the primary keys and unique indexes a new store's first load left until needed: of
    /// `table`, or of every table. Called before anything relies on the server checking keys —
    /// a write other than a streamed batch, a read by key.
    func buildUniques(of table: String? = nil) throws {
        guard !pendingUniques.isEmpty else { return }
        let tables = table.map { [$0] } ?? pendingUniques.keys.sorted()
        do {
            try raiseMaintenanceMemory()
            for name in tables {
                for sql in pendingUniques[name] ?? [] { try connection.execute(sql) }
                pendingUniques[name] = nil
            }
        } catch let error as PostgresError {
            throw storeError(error, "Could not make the store's primary keys and unique indexes")
        }
    }

    /// Index builds sort in memory when they can: at least 256 MB until the transaction ends, as
    /// bulk loaders set it (a higher setting is kept).
    private func raiseMaintenanceMemory() throws {
        try connection.execute(
            "SELECT set_config('maintenance_work_mem', '256MB', true) "
                + "WHERE pg_size_bytes(current_setting('maintenance_work_mem')) < 268435456")
    }

    /// Runs `body` as one unit: a transaction, or a savepoint of the run's transaction.
    func transaction(_ body: () throws -> Void) throws {
        let (begin, commit, rollback) =
            inRunTransaction
            ? ("SAVEPOINT sluice_save", "RELEASE SAVEPOINT sluice_save", "ROLLBACK TO SAVEPOINT sluice_save")
            : ("BEGIN", "COMMIT", "ROLLBACK")
        try connection.execute(begin)
        do {
            try body()
            try connection.execute(commit)
        } catch {
            try? connection.execute(rollback)
            throw error
        }
    }

    func storeError(_ error: PostgresError, _ what: String, objectID: ManagedObjectID? = nil) -> StoreError {
        let code: StoreError.Code
        switch error.sqlState.prefix(2) {
        case "23": code = .constraintViolation
        case "40": code = .conflict
        default: code = .io
        }
        return StoreError(code, "\(what): \(error)", url: url, objectID: objectID, underlying: error)
    }
}
