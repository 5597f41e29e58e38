import Foundation
import ModelFiles
import ObjectGraph
import Readers
import Stores

/// `sluice export STORE --to DIR|FILE`: any store (SQLite in either layout, XML, binary) out as plain
/// data — CSV, JSON Lines or a SQL script any sqlite3 reads — a table per root entity (sub-entities
/// with it, named in an `entity` column) and one per many-to-many relationship, named as the plain
/// SQLite layout names them.
///
/// Values are exact: decimals as their digits, dates as ISO 8601 in UTC
/// (`2024-01-31T12:00:00Z`; in SQL `2024-01-31 12:00:00`, as SQLite's date functions read),
/// binary as base64 (`X'…'` in SQL). A to-one relationship is its destination's key value — the
/// destination's first uniqueness constraint when that is one attribute (`customer_id`,
/// `product_sku`), else the destination's own integer key, which its table then carries (`id`) —
/// so an export imports back into an equal store. Rows are streamed a batch at a time: memory stays
/// flat whatever the store's size (atomic stores hold their file in memory anyway).
///
/// ```swift
/// var options = StoreExport.Options(store: "shop.sqlite", destination: "out/")
/// options.format = .csv
/// let written = try StoreExport.run(options)   // out/customers.csv, out/orders.csv, …
/// ```
public struct StoreExport {
    public enum Format: String, Sendable, CaseIterable {
        case csv, jsonl, sqldump
    }

    public struct Options: Sendable {
        public var store: String
        /// A folder (one file per table), or a file (one table for CSV; every table for JSON Lines,
        /// each line naming its table, and SQL).
        public var destination: String
        /// `nil`: from the destination's extension (`.csv`, `.jsonl`/`.ndjson`, `.sql`), else CSV.
        public var format: Format?
        /// Entities to export (sub-entities with them); empty: every root entity and link table.
        public var entities: [String] = []
        /// A model file instead of the one the store records.
        public var modelPath: String?

        public init(store: String, destination: String) {
            self.store = store
            self.destination = destination
        }
    }

    /// One table written: its name, the file, the number of rows.
    public struct Written: Sendable {
        public var table: String
        public var path: String
        public var rows: Int
    }

    /// Exports the store.
    /// - Throws: `UsageError` (unknown entity, several tables into one CSV file); `StoreError`;
    ///   `ModelFileError`; `StoreInspection.NoModel`; `RunFileError` when an output cannot be written.
    public static func run(_ options: Options) throws -> [Written] {
        TargetStore.registerBuiltInTypes()
        let url = TargetStore.url(options.store)
        guard TargetStore.exists(options.store) else {
            throw StoreError(.io, "There is no store at this path", url: url)
        }
        let metadata = try TargetStore.metadata(ofStoreAt: url)
        let given = try StoreInspection.loadModel(options.modelPath)
        guard let model = try given ?? StoredModel.model(in: metadata, store: TargetStore.name(of: url)) else {
            throw StoreInspection.NoModel(path: TargetStore.name(of: url))
        }
        let type = TargetStore.type(ofStoreAt: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(
            type: type, at: url,
            options: type == SQLiteStore.storeType || type == PostgresStore.storeType ? ["read_only": "true"] : [:])
        defer { coordinator.removePersistentStore(store) }

        try OutputFile.requireFile(options.destination, "--to", folder: true)
        let destination = URL(fileURLWithPath: options.destination).standardizedFileURL
        let storePath = url.standardizedFileURL.path
        if ["", "-wal", "-shm", "-journal"].map({ storePath + $0 }).contains(destination.path) {
            throw UsageError("the export would overwrite the store \(options.store); write it elsewhere")
        }
        let tables = try ExportTable.plan(model: model, entities: options.entities)
        let format = options.format ?? Self.format(ofPath: options.destination) ?? .csv
        let intoFolder = Self.isFolder(options.destination)
        if !intoFolder, format == .csv, tables.count != 1 {
            throw UsageError(
                "a CSV file holds one table, and this export has \(tables.count) "
                    + "(\(tables.map(\.name).joined(separator: ", "))); export to a folder, or choose one with --entity"
            )
        }
        if intoFolder { try Self.makeFolder(options.destination) }
        var written: [Written] = []
        var shared: ExportWriter?
        for table in tables {
            let path =
                intoFolder
                ? URL(fileURLWithPath: options.destination).appendingPathComponent(
                    table.name + "." + format.fileExtension
                )
                .path : options.destination
            let writer: ExportWriter
            if let shared {
                writer = shared
            } else {
                writer = try ExportWriter(path: path, format: format, namesTables: !intoFolder && tables.count > 1)
                if !intoFolder { shared = writer }
            }
            let rows = try table.write(to: writer, coordinator: coordinator)
            if intoFolder { try writer.finish() }
            written.append(Written(table: table.name, path: path, rows: rows))
        }
        try shared?.finish()
        if intoFolder, let (text, isJSON) = try modelText(given: options.modelPath, metadata: metadata) {
            // What CSV cannot say (BLOBs, decimal scales, calendar dates, relationships) beside the
            // files: `sluice import FOLDER` takes it.
            let path = URL(fileURLWithPath: options.destination).appendingPathComponent(
                isJSON ? "model.json" : "model.yaml")
            try ReportFile.write(Data(text.utf8), to: path.path, role: "the export's model file")
        }
        return written
    }

    /// The text of the model the export used: the given model file's, else the store's recorded one
    /// (`nil` for an Xcode model, which is a folder).
    private static func modelText(given path: String?, metadata: StoreMetadata) throws -> (String, Bool)? {
        guard let path else { return StoredModel.text(in: metadata).map { ($0.text, $0.isJSON) } }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            return nil
        }
        return (try String(contentsOfFile: path, encoding: .utf8), path.lowercased().hasSuffix(".json"))
    }

    /// The model file an export folder holds (`model.yaml`, `model.json`), when there is one.
    public static func modelFile(inFolder folder: String) -> String? {
        ["model.yaml", "model.json"].map { URL(fileURLWithPath: folder).appendingPathComponent($0).path }
            .first { FileManager.default.fileExists(atPath: $0) }
    }

    static func format(ofPath path: String) -> Format? {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "csv": return .csv
        case "jsonl", "ndjson": return .jsonl
        case "sql": return .sqldump
        default: return nil
        }
    }

    /// A folder: one that exists, a path ending in `/`, or a path without an extension.
    static func isFolder(_ path: String) -> Bool {
        if path == "-" { return false }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) { return isDirectory.boolValue }
        return path.hasSuffix("/") || URL(fileURLWithPath: path).pathExtension.isEmpty
    }

    private static func makeFolder(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw RunFileError(.createFolder, "the export folder", path: path, underlying: error)
        }
    }
}

extension StoreExport.Format {
    var fileExtension: String {
        switch self {
        case .csv: return "csv"
        case .jsonl: return "jsonl"
        case .sqldump: return "sql"
        }
    }
}
