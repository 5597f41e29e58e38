import Foundation
import ObjectGraph

/// How a SQLite store lays its data out (store option `layout`; a store keeps the layout it was
/// created with, recorded in its metadata table).
///
/// - `plain` (the default for new stores): the file a careful person would make by hand, read
///   right by sqlite3, pandas and BI tools — the model's table and column names, integer keys of
///   the source as primary keys and foreign keys, dates as text SQLite's date functions read (or
///   unix seconds), decimals as numbers, no internal columns unless the model needs them.
/// - `graph`: Core Data's kind of layout — `_pk`, `_ent` and `_opt` in every table, dates as
///   seconds since 2001, decimals as exact text.
///
/// Both keep every behaviour of the object graph; see `SQLiteSchema` for names, `SQLiteValueCoding`
/// for values.
public enum SQLiteLayout: Equatable, Sendable {
    case plain(Options)
    case graph

    /// Options of the plain layout.
    public struct Options: Equatable, Sendable {
        /// Store option `dates`: how date attributes are stored.
        public var dates: DateStorage = .iso8601
        /// Store option `version_column`: keep a row version (`_opt`) for optimistic locking, as
        /// the graph layout does; without it a row's version is a hash of its values.
        public var versionColumn = false
        /// Whether a root entity keyed by one required text attribute keeps its rows under it
        /// (`TEXT PRIMARY KEY`, foreign keys holding the text), as integer keys are kept. Stores made
        /// before text keys (no `textKeys` row in their metadata) keep an integer key column instead.
        public var textKeys = true

        public init(dates: DateStorage = .iso8601, versionColumn: Bool = false, textKeys: Bool = true) {
            self.dates = dates
            self.versionColumn = versionColumn
            self.textKeys = textKeys
        }
    }

    /// Dates in the plain layout.
    public enum DateStorage: String, Sendable {
        /// `YYYY-MM-DD HH:MM:SS[.fff]` in UTC (`DATETIME` columns).
        case iso8601
        /// Seconds since 1970-01-01 UTC, whole seconds as INTEGER, fractions as REAL.
        case unix
    }

    public var isGraph: Bool { self == .graph }

    /// The declared type of an attribute's column in the plain layout (and in `sluice export`'s SQL):
    /// what other tools read — `INTEGER`, `BOOLEAN`, `REAL`, `DATETIME` (unix dates: `INTEGER`), `DATE`,
    /// `NUMERIC` for decimals, `TEXT`, `BLOB`.
    public static func plainColumnType(_ type: AttributeType, dates: DateStorage = .iso8601) -> String {
        switch type {
        case .integer16, .integer32, .integer64: return "INTEGER"
        case .boolean: return "BOOLEAN"
        case .double, .float: return "REAL"
        case .date: return dates == .unix ? "INTEGER" : "DATETIME"
        case .calendarDate: return "DATE"
        case .decimal: return "NUMERIC"
        case .string, .uuid, .uri: return "TEXT"
        case .binary: return "BLOB"
        }
    }

    /// The name recorded in the store's metadata and taken by the `layout` option.
    var name: String { isGraph ? "graph" : "plain" }
}
