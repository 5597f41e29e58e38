import Foundation
import ObjectGraph

extension SQLiteStore {
    /// The options a store is made with (see `SQLiteStore` for each), checked when it is made.
    struct Options {
        var journalMode = "WAL"
        var synchronous = "NORMAL"
        var cacheSize: Int64 = -4096
        var buildIndexesAfterLoad = true
        var readOnly = false
        /// `shares_file`: a SQLite database of another program may hold the store's tables next to
        /// its own (which the store never touches; a table name both want is refused).
        var sharesFile = false
        /// `lightweight_migration`: a store written with an older model whose tables this model's only
        /// extend (new tables, new nullable columns) gets them, and this model from then on.
        var migratesLightly = false
        /// `layout`, `dates`, `version_column` as given (`nil`: not given).
        var layout: String?
        var dates: SQLiteLayout.DateStorage?
        var versionColumn: Bool?

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
                case "lightweight_migration":
                    guard let flag = Bool(value) else { throw invalid(key, "true or false") }
                    migratesLightly = flag
                case "layout":
                    guard value == "plain" || value == "graph" else { throw invalid(key, "plain or graph") }
                    layout = value
                case "dates":
                    guard let storage = SQLiteLayout.DateStorage(rawValue: value) else {
                        throw invalid(key, "iso8601 or unix")
                    }
                    dates = storage
                case "version_column":
                    guard let flag = Bool(value) else { throw invalid(key, "true or false") }
                    versionColumn = flag
                default:
                    throw StoreError(
                        .invalidOption,
                        "SQLite store option \(key.debugDescription) is unknown; known options: cache_size, "
                            + "dates, index_build, journal_mode, layout, lightweight_migration, read_only, "
                            + "shares_file, synchronous, version_column",
                        url: url)
                }
            }
            if layout == "graph", dates != nil || versionColumn != nil {
                throw StoreError(
                    .invalidOption, "SQLite store options dates and version_column belong to the plain layout",
                    url: url)
            }
        }

        /// The layout these options ask a new store for.
        var newLayout: SQLiteLayout {
            layout == "graph"
                ? .graph : .plain(SQLiteLayout.Options(dates: dates ?? .iso8601, versionColumn: versionColumn ?? false))
        }
    }
}
