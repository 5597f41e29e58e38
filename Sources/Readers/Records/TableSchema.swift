/// A table of a SQL dump or a SQLite database: columns with their declared types, keys.
public struct TableSchema: Sendable, Hashable {
    public struct Column: Sendable, Hashable {
        public var name: String
        /// The type as declared (`INTEGER`, `VARCHAR(20)`, `NUMERIC`, or empty).
        public var declaredType: String
        public var isNotNull: Bool
        /// What an INSERT naming other columns only puts here.
        public var defaultValue: Default
        public init(name: String, declaredType: String, isNotNull: Bool = false, defaultValue: Default = .null) {
            self.name = name
            self.declaredType = declaredType
            self.isNotNull = isNotNull
            self.defaultValue = defaultValue
        }
    }

    /// A column's DEFAULT: NULL (also when none is declared), a literal's text, or an expression
    /// (`CURRENT_TIMESTAMP`, `(random())`) that only SQLite can evaluate.
    public enum Default: Sendable, Hashable {
        case null
        case literal([UInt8])
        /// A BLOB literal (`X'00FF'`), as lowercase hexadecimal text like a BLOB value read.
        case blob([UInt8])
        case expression(String)
    }

    public struct ForeignKey: Sendable, Hashable {
        public var columns: [String]
        public var table: String
        /// Empty when the key refers to the other table's primary key.
        public var referencedColumns: [String]
        public init(columns: [String], table: String, referencedColumns: [String]) {
            self.columns = columns
            self.table = table
            self.referencedColumns = referencedColumns
        }
    }

    public var name: String
    public var columns: [Column]
    public var primaryKey: [String]
    public var foreignKeys: [ForeignKey]
    /// Columns with a UNIQUE constraint of their own, or unique groups declared on the table.
    public var uniqueKeys: [[String]]
    /// A `WITHOUT ROWID` table: its primary key is all there is (no rowid, no INTEGER PRIMARY KEY alias).
    public var isWithoutRowid: Bool
    /// The columns of the table's other indexes (`CREATE INDEX`), for fetches; unique ones are in
    /// `uniqueKeys`, partial and expression indexes are left out.
    public var indexes: [[String]] = []
    /// Generated columns (`GENERATED ALWAYS AS (…)`, `AS (…)`): SQLite computes them from the other
    /// columns, a dump holds no values for them, so they are not among `columns` and not read.
    public var generatedColumns: [String] = []

    /// Leaves out generated columns: from `columns`, and the keys and indexes naming them (what is
    /// not read cannot key or index anything).
    public mutating func leaveOut(generated names: [String]) {
        guard !names.isEmpty else { return }
        let left = Set(names.map(Self.sqlName))
        func namesOne(_ group: [String]) -> Bool { group.contains { left.contains(Self.sqlName($0)) } }
        generatedColumns += names
        columns.removeAll { left.contains(Self.sqlName($0.name)) }
        if namesOne(primaryKey) { primaryKey = [] }
        uniqueKeys.removeAll(where: namesOne)
        indexes.removeAll(where: namesOne)
        foreignKeys.removeAll { namesOne($0.columns) }
    }

    /// How readers name a generated column they leave out (in `notImported`).
    public static func generatedColumnNote(_ column: String, of table: String) -> String {
        "generated column \(table.debugDescription).\(column.debugDescription) (SQLite computes it)"
    }

    public init(
        name: String, columns: [Column], primaryKey: [String] = [], foreignKeys: [ForeignKey] = [],
        uniqueKeys: [[String]] = [], isWithoutRowid: Bool = false
    ) {
        self.name = name
        self.columns = columns
        self.primaryKey = primaryKey
        self.foreignKeys = foreignKeys
        self.uniqueKeys = uniqueKeys
        self.isWithoutRowid = isWithoutRowid
    }

    /// The column SQLite keeps as the row's rowid: the one-column primary key declared exactly
    /// `INTEGER` of a rowid table. A NULL inserted there becomes the next rowid.
    public var rowidColumn: Int? {
        guard !isWithoutRowid, primaryKey.count == 1, let index = columnIndex(named: primaryKey[0]),
            columns[index].declaredType.uppercased() == "INTEGER"
        else { return nil }
        return index
    }

    /// The index of a column, its name compared as SQLite compares names (`sqlName`).
    public func columnIndex(named name: String) -> Int? {
        let key = Self.sqlName(name)
        return columns.firstIndex { Self.sqlName($0.name) == key }
    }

    /// Whether a table (by `sqlName`) is the storage of one of `virtualTables` (by `sqlName`): its
    /// name is the virtual table's followed by a shadow table suffix of FTS3/4, FTS5 or R*Tree.
    public static func isShadow(_ table: String, of virtualTables: [String]) -> Bool {
        virtualTables.contains { virtual in
            table.hasPrefix(virtual + "_") && shadowSuffixes.contains(String(table.dropFirst(virtual.count + 1)))
        }
    }

    private static let shadowSuffixes: Set<String> = [
        "content", "segments", "segdir", "docsize", "stat", "data", "idx", "config", "node", "rowid", "parent",
    ]

    /// A name as SQLite compares names: ASCII letters in one case, every other character as it is
    /// (`Items` and `ITEMS` are one table; `É` and `é` are two).
    public static func sqlName(_ name: String) -> String {
        String(
            decoding: name.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
    }

    /// The SQLite type affinity of a declared type (the rules of SQLite's `datatype3` page, in order).
    public static func affinity(of declaredType: String) -> String {
        let type = declaredType.uppercased()
        if type.contains("INT") { return "INTEGER" }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return "TEXT" }
        if type.isEmpty || type.contains("BLOB") { return "BLOB" }
        if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return "REAL" }
        return "NUMERIC"
    }
}
