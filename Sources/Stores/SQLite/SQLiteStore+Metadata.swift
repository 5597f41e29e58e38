import Drivers
import Foundation
import ObjectGraph

/// The store's metadata in its `_sluice_metadata` table: read when the store opens (or without opening
/// it, `metadata(at:)`) and written with each save that changed it.
extension SQLiteStore {
    func readMetadata() throws {
        storeRows = try Self.metadataRows(connection)
        metadata = try Self.metadata(from: storeRows, url: url)
        writtenMetadata = metadata
    }

    /// Every row of `_sluice_metadata`.
    static func metadataRows(_ connection: SQLiteConnection) throws -> [String: String] {
        let statement = try connection.makeStatement("SELECT key, value FROM _sluice_metadata")
        var values: [String: String] = [:]
        while try statement.step() { values[statement.string(0) ?? ""] = statement.string(1) ?? "" }
        return values
    }

    static func metadata(from values: [String: String], url: URL?) throws -> StoreMetadata {
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
            return try metadata(from: metadataRows(connection), url: url)
        } catch let error as SQLiteError where error.code == .notADatabase {
            throw StoreError(
                .io, "The file is not a store (not a SQLite database, nor an XML or binary store)",
                url: url, underlying: error)
        } catch let error as SQLiteError {
            throw StoreError(.io, "Could not read the store's metadata: \(error)", url: url, underlying: error)
        }
    }

    /// Writes metadata that changed since it was last written (inside the caller's transaction).
    func writeMetadata() throws {
        guard metadata != writtenMetadata else { return }
        let hashes = String(decoding: try JSONEncoder.sorted.encode(metadata.entityVersionHashes), as: UTF8.self)
        try connection.execute(
            "DELETE FROM _sluice_metadata WHERE key NOT IN "
                + "(\(Self.storeKeys.map { "'\($0)'" }.joined(separator: ", ")))"
        )
        let insert = try connection.cachedStatement("INSERT OR REPLACE INTO _sluice_metadata VALUES (?, ?)")
        var rows = [
            ("storeType", metadata.storeType), ("identifier", metadata.identifier), ("entityVersionHashes", hashes),
            ("schemaVersion", "1"), ("sqliteVersion", SQLiteConnection.libraryVersion), ("layout", schema.layout.name),
        ]
        if case .plain(let layoutOptions) = schema.layout {
            rows += [
                ("dates", layoutOptions.dates.rawValue), ("versionColumn", String(layoutOptions.versionColumn)),
                ("textKeys", String(layoutOptions.textKeys)),
            ]
        }
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
}
