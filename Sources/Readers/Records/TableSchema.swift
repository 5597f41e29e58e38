/// A table of a SQL dump or a SQLite database: columns with their declared types, keys.
public struct TableSchema: Sendable, Hashable {
    public struct Column: Sendable, Hashable {
        public var name: String
        /// The type as declared (`INTEGER`, `VARCHAR(20)`, `NUMERIC`, or empty).
        public var declaredType: String
        public var isNotNull: Bool
        public init(name: String, declaredType: String, isNotNull: Bool = false) {
            self.name = name
            self.declaredType = declaredType
            self.isNotNull = isNotNull
        }
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

    public init(
        name: String, columns: [Column], primaryKey: [String] = [], foreignKeys: [ForeignKey] = [],
        uniqueKeys: [[String]] = []
    ) {
        self.name = name
        self.columns = columns
        self.primaryKey = primaryKey
        self.foreignKeys = foreignKeys
        self.uniqueKeys = uniqueKeys
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
