import Drivers
import Foundation
import ObjectGraph

/// What runs need of a PostgreSQL target besides the store API: its metadata without a model, a
/// lock that holds across machines, and the URL as messages may show it.
extension PostgresStore {
    /// `url` without its password (user, host, database, parameters stay): what reports, logs,
    /// errors and saved pipelines show.
    /// A `password` query parameter goes too.
    public static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        let hasParameter = components.queryItems?.contains { $0.name == "password" } == true
        guard components.password != nil || hasParameter else { return url }
        components.password = nil
        if hasParameter { components.queryItems = components.queryItems?.filter { $0.name != "password" } }
        return components.string ?? url
    }

    /// `url` less its `schema` query parameter (what libpq connects with; `application_name=sluice`
    /// unless it names one, so that a database's administrator sees who is connected), and the
    /// schema it names.
    static func connectionParts(of url: URL) -> (conninfo: String, schema: String?) {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return (url.absoluteString, nil)
        }
        let schema = components.queryItems?.first { $0.name == "schema" }?.value
        var items = (components.queryItems ?? []).filter { $0.name != "schema" }
        if !items.contains(where: { $0.name == "application_name" }) {
            items.append(URLQueryItem(name: "application_name", value: "sluice"))
        }
        components.queryItems = items
        return (components.string ?? url.absoluteString, schema)
    }

    /// The metadata of the store in the schema `url` names, read without a model; `nil` when the
    /// schema holds no store.
    /// - Throws: `StoreError` when the database cannot be reached.
    public static func metadata(at url: URL) throws -> StoreMetadata? {
        let (conninfo, schema) = connectionParts(of: url)
        let shown = URL(string: redacted(url.absoluteString))
        do {
            let connection = try PostgresConnection(conninfo: conninfo)
            let table = quote(schema ?? "public") + "." + quote("_sluice_metadata")
            let exists = try connection.query("SELECT to_regclass($1) IS NOT NULL", [table])
            guard exists.first?.first == "t" else { return nil }
            var values: [String: String] = [:]
            for row in try connection.query("SELECT key, value FROM \(table)") { values[row[0] ?? ""] = row[1] ?? "" }
            var metadata = try SQLiteStore.metadata(from: values, url: shown)
            metadata.storeType = storeType
            return metadata
        } catch let error as PostgresError {
            throw StoreError(.io, "Could not read the store's metadata: \(error)", url: shown, underlying: error)
        }
    }

    /// Takes the run lock of this store: a PostgreSQL advisory lock on its schema (held by this
    /// connection until it closes, so a killed run never leaves it behind), shared for readers (dry
    /// runs). Waits up to `seconds` for another run's lock.
    /// - Returns: false when another run holds it still.
    public func lockRun(waiting seconds: Double, shared: Bool) throws -> Bool {
        let function = shared ? "pg_try_advisory_lock_shared" : "pg_try_advisory_lock"
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let result = try reading("Could not take the run's lock") {
                try connection.query(
                    "SELECT \(function)(hashtext('sluice'), hashtext($1))", [schemaName])
            }
            if result.first?.first == "t" { return true }
            if Date() >= deadline { return false }
            usleep(100_000)
        }
    }
}
