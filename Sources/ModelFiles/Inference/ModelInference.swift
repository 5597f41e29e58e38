import Foundation
import ObjectGraph
import Readers

/// Proposes a model file from inputs (`sluice infer`): an entity per CSV file, XML record kind or SQL
/// table; attribute types from every value of the input (not a sample); required when no value is
/// null or empty; keys from declared primary keys and unique constraints, or a column whose values
/// are all different and present and whose name says it identifies (`id`, `customer_id`, `…_no`,
/// `code`, `sku`, …); relationships from declared foreign keys, or from `<name>_id` columns of the
/// key's type where another input's `<name>` entity has a key of one column.
///
/// The model keeps the source's names for the store: each entity's `table` is the file or table it
/// came from (`orders.csv` → `orders`), each attribute's and foreign key's `column` the source's
/// column, while entities and attributes get Swift names (`Order`, `placedAt`).
///
/// ```swift
/// var inference = ModelInference()
/// try inference.add(CSVReader(path: "customers.csv"), entity: "Customer")
/// print(inference.modelFile())
/// ```
public struct ModelInference {
    package struct Entity {
        package var name: String
        package var columns: [Column]
        package var primaryKey: [String] = []
        package var uniqueKeys: [[String]] = []
        package var foreignKeys: [TableSchema.ForeignKey] = []
        /// The table's fetch indexes (by columns).
        package var indexes: [[String]] = []
        /// The SQL table or file the entity came from.
        package var origin: String
        /// The table name the store gives the entity: the file's or table's name (`orders`), or for
        /// XML records the element's name in the plural.
        package var table: String = ""
        /// For nested records (XML children): the entity of their parent records.
        package var parent: Int?
        /// Whether the entity is a SQL table (of a dump or a database file).
        package var isTable = false
    }

    package var entities: [Entity] = []
    /// What SQL inputs define but hold no rows of (views, triggers, virtual tables), each named
    /// with its file: `legacy.db: view "recent"`.
    public private(set) var notImported: [String] = []
    /// Sluice's own tables the last reader held (for `noteNotImported`).
    private var ownSkipped: [String] = []
    /// Records a reader could not read as records (a short row, a misplaced quote, invalid text):
    /// left out of the proposal — the first few errors, and how many there were in all.
    public private(set) var unreadable: (first: [ReaderError], count: Int) = ([], 0)
    /// Read at most this many records of each input added next (`nil`: every record): a sample,
    /// for an import that checks it against the whole input while it runs.
    public var sampleLimit: Int?
    /// Whether an input had more records than `sampleLimit` (the proposal is of a sample).
    public private(set) var isSample = false

    public init() {}

    mutating func noteNotImported(_ names: [String], in path: String) {
        notImported += (names + ownSkipped).map { "\(path): \($0)" }
        ownSkipped = []
    }

    /// The error for inputs that gave no entity: no records (nor a CSV header), or none readable
    /// (the first unreadable one named: a file in another encoding than UTF-8, every line bad).
    public func nothingIn(_ inputs: [String], toDo verb: String) -> ReaderError {
        let names = inputs.joined(separator: ", "), verbEnding = inputs.count == 1 ? "s" : ""
        if let first = unreadable.first.first {
            return ReaderError(
                .io,
                "\(names) hold\(verbEnding) no readable record: nothing to \(verb) (\(unreadable.count) could not be "
                    + "read; the first: \(first))")
        }
        return ReaderError(
            .io, "\(names) hold\(verbEnding) no records, nor a header naming columns: nothing to \(verb)")
    }

    /// Whether a table is one of Sluice's own (`_sluice_metadata`): never an input's data.
    public static func isSluiceOwn(_ table: String) -> Bool { table.lowercased().hasPrefix("_sluice_") }

    /// Reads every record of `reader` into the proposal for `entity` (records of other kinds, e.g. XML
    /// children or other tables, become entities of their own, named after their kind).
    /// - Throws: the reader's non-recoverable errors; records with recoverable errors are skipped.
    /// - Parameter schemas: the tables' declared schemas (keys), asked for when a table's first record arrives.
    /// The next record `reader` reads as one, the records it cannot read (a short row, a misplaced
    /// quote) noted in `unreadable` and passed over; `nil` at the end.
    private mutating func readableRecord(from reader: inout some RecordReader) throws -> Record? {
        while true {
            do {
                return try reader.next()
            } catch let error as ReaderError where error.isRecoverable {
                if unreadable.first.count < 5 { unreadable.first.append(error) }
                unreadable.count += 1
            }
        }
    }

    public mutating func add(
        _ reader: some RecordReader, entity: String, table: String? = nil, schemas: () -> [TableSchema] = { [] }
    ) throws {
        var reader = reader
        var indexByKind: [String: Int] = [:]
        /// The entities of the last top-level record and its nested records, by record number.
        var entityOfRecord: [Int: Int] = [:]
        var ownTables: [String] = []
        defer { ownSkipped += ownTables.map { "table \($0.debugDescription) (Sluice's own metadata: never imported)" } }
        var taken = 0
        while let record = try readableRecord(from: &reader) {
            if let sampleLimit, taken == sampleLimit {
                isSample = true
                break
            }
            taken += 1
            let kind = record.kind ?? ""
            // A Sluice store's own tables (another store, or the target itself, as an input) never
            // become entities: their rows would be written into the target's own metadata.
            if Self.isSluiceOwn(kind) {
                if !ownTables.contains(kind) { ownTables.append(kind) }
                continue
            }
            let index: Int
            if let known = indexByKind[kind] {
                index = known
            } else {
                let names = record.schema?.names ?? (0..<record.count).map { "field\($0 + 1)" }
                let declaredTable = schemas().first { $0.name == record.kind }
                var proposed = Self.entity(
                    named: record.kind.map { Self.entityName($0) } ?? entity, columns: names, table: declaredTable)
                proposed.origin = record.kind ?? entity
                proposed.table =
                    record.kind.map { kind in
                        // SQL tables keep their names; XML record elements name one record: `order` → `orders`
                        // (a wrapper's `variants/variant` → `variants`); a JSON array is named already (`lines`).
                        schemas().contains { $0.name == kind }
                            ? kind : Self.tableName(ofKind: kind.split(separator: "/").last.map(String.init) ?? kind)
                    } ?? table ?? entity
                entities.append(proposed)
                index = entities.count - 1
                indexByKind[kind] = index
            }
            for column in 0..<min(record.count, entities[index].columns.count) {
                entities[index].columns[column].observe(
                    record.string(column), isBlob: record.isBlob(column), isString: record.isString(column),
                    isTyped: record.isTyped(column), line: record.line)
            }
            // Children follow their parent record, so the last record seen with that number is the parent.
            if let parent = record.parentRecord, let entity = entityOfRecord[parent] {
                entities[index].parent = entity
            }
            if record.parentRecord == nil { entityOfRecord.removeAll(keepingCapacity: true) }
            if let number = record.number { entityOfRecord[number] = index }
        }
        // What a dump declares after a table's rows (its indexes) counts too, and its empty tables
        // are entities too (their columns typed as declared), so what refers to them links.
        let declared = schemas()
        for schema in declared where indexByKind[schema.name] == nil && !Self.isSluiceOwn(schema.name) {
            var empty = Self.entity(
                named: Self.entityName(schema.name), columns: schema.columns.map(\.name), table: schema)
            empty.table = schema.name
            entities.append(empty)
        }
        for index in entities.indices where entities[index].isTable {
            let name = TableSchema.sqlName(entities[index].origin)
            guard let table = declared.first(where: { TableSchema.sqlName($0.name) == name }) else { continue }
            entities[index].uniqueKeys = table.uniqueKeys
            entities[index].indexes = table.indexes
        }
    }

    /// A proposed entity of `columns`, with what a SQL table declares about them (keys, types, NOT NULL).
    private static func entity(named name: String, columns names: [String], table declaredTable: TableSchema?) -> Entity
    {
        let keyColumns = Set(declaredTable.map { $0.primaryKey + $0.uniqueKeys.flatMap { $0 } } ?? [])
        let declared =
            declaredTable.map {
                Dictionary($0.columns.map { ($0.name, $0.declaredType) }, uniquingKeysWith: { first, _ in first })
            } ?? [:]
        var proposed = Entity(
            name: name,
            columns: names.map { name in
                var column = Column(
                    source: name, keyCandidate: keyColumns.contains(name) || Self.namesIdentifier(name),
                    declaredType: declared[name])
                if let declaredTable {
                    // A later database may hold NULLs where this one has none: the schema decides.
                    column.declaredRequired =
                        declaredTable.primaryKey.contains(name)
                        || declaredTable.columns.contains { $0.name == name && $0.isNotNull }
                }
                return column
            },
            origin: declaredTable?.name ?? name)
        if let declaredTable {
            proposed.isTable = true
            proposed.primaryKey = declaredTable.primaryKey
            proposed.uniqueKeys = declaredTable.uniqueKeys
            proposed.foreignKeys = declaredTable.foreignKeys
        }
        return proposed
    }

    /// `order_lines` → `OrderLine`, `customers` → `Customer`.
    public static func entityName(_ source: String) -> String {
        var base = (source as NSString).lastPathComponent
        for suffix in [".gz", ".csv", ".tsv", ".txt", ".xml", ".sql", ".jsonl", ".ndjson", ".json"]
        where base.lowercased().hasSuffix(suffix) {
            base = String(base.dropLast(suffix.count))
        }
        let words = base.split { !$0.isLetter && !$0.isNumber }.map(String.init)
        var name = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        if name.hasSuffix("ies") {
            name = String(name.dropLast(3)) + "y"
        } else if name.hasSuffix("s"), !name.hasSuffix("ss") {
            name.removeLast()
        }
        return name.isEmpty ? "Record" : name
    }

    /// The table of a nested record kind: `order` → `orders`; a plural name (`lines`) as it is.
    static func tableName(ofKind kind: String) -> String {
        let lower = kind.lowercased()
        return lower.hasSuffix("s") && !lower.hasSuffix("ss") && !entityName(kind).lowercased().hasSuffix("s")
            ? kind : plural(kind)
    }

    /// `order` → `orders`, `category` → `categories`, `address` → `addresses`.
    static func plural(_ word: String) -> String {
        let lower = word.lowercased()
        if lower.hasSuffix("y"), let before = lower.dropLast().last, !"aeiou".contains(before) {
            return String(word.dropLast()) + "ies"
        }
        if ["s", "x", "z", "ch", "sh"].contains(where: { lower.hasSuffix($0) }) { return word + "es" }
        return word + "s"
    }

    /// Whether a column's name says it identifies a row: `id`, `customer_id`, `customerId`, `CustomerID`,
    /// `order_no`, `order_nr`, `Invoice No`, `Kundennummer`, `number`, `orderNumber`, `code`, `key`,
    /// `sku` (and `…_code`, `…_key`, `…_sku`, `…_number`, `…_nummer`, `…_numero`).
    static func namesIdentifier(_ name: String) -> Bool {
        let lower = name.lowercased()
        let words = ["id", "code", "key", "sku", "nr", "no", "number", "nummer", "numero", "número"]
        if words.contains(lower) || lower.hasSuffix("nummer") { return true }
        if ["Id", "ID", "Nr", "No", "Number"].contains(where: { name.hasSuffix($0) }) { return true }
        for suffix in words {
            for separator in ["_", "-", " ", "."] where lower.hasSuffix(separator + suffix) { return true }
        }
        return false
    }

    /// The columns that identify an entity's records: its declared primary key, else a declared
    /// unique key, else (for a record that is not nested in another) the best column whose values
    /// are all different and present and whose name says it identifies — one named after the entity
    /// (`customer_id` in customers), then `id`, then integers, then the first.
    package func key(of entity: Entity) -> [String] {
        if !entity.primaryKey.isEmpty { return entity.primaryKey }
        // A unique key whose columns are all present (NULLs never clash, so rows with one would be
        // imported again on every run).
        if let unique = entity.uniqueKeys.first(where: { key in
            key.allSatisfy { name in entity.columns.first { $0.source == name }.map { $0.nulls == 0 } ?? false }
        }) {
            return unique
        }
        // A nested record (an XML or JSON child) is found again by its parent and place: a column
        // whose values merely differ (a line's `sku`) is no key of it — the same product in two
        // orders would move a line from one to the other.
        guard entity.parent == nil else { return [] }
        let candidates = entity.columns.filter { $0.isUnique && Self.namesIdentifier($0.source) }
        func squashed(_ text: String) -> String { text.lowercased().filter { $0.isLetter || $0.isNumber } }
        let own = [squashed(entity.name) + "id", squashed(entity.table) + "id"]
        let best =
            candidates.first { own.contains(squashed($0.source)) } ?? candidates.first {
                $0.source.lowercased() == "id"
            }
            ?? candidates.first { $0.type == .integer64 } ?? candidates.first
        return best.map { [$0.source] } ?? []
    }

    /// Why the entities without a key have none, per column whose name says it identifies: the
    /// first value it repeats or lacks, and what to do (for `infer` and `import` to say).
    package func keyHints() -> [String] {
        entities.filter { key(of: $0).isEmpty && rowKey(of: $0) == nil }.flatMap { entity in
            entity.columns.compactMap { column -> String? in
                guard !column.flaws.isEmpty, column.blobs == 0 else { return nil }
                let name = column.source.debugDescription
                var why: [String] = [], rejects: [String] = []
                for flaw in column.flaws {
                    switch flaw {
                    case .repeats(let first, let line):
                        why.append("repeats at lines \(first) and \(line)")
                        rejects.append("the repeats")
                    case .empty(let line):
                        why.append("is empty at line \(line)")
                        rejects.append("the records without one")
                    }
                }
                let lastWins =
                    rejects.contains("the repeats")
                    ? " (or a saved pipeline's duplicates: last-wins keeps the last of each)" : ""
                return "\(entity.name) has no key: \(name) looks like one but \(why.joined(separator: ", and "))"
                    + ": --key \(name) with --max-errors rejects \(rejects.joined(separator: " and "))\(lastWins)"
            }
        }
    }

    /// For a SQL table without a key of any kind (declared, unique, or found in its values): the
    /// attribute that keys its rows by their rowid, or place in a dump (the mapping's `#row`), so that
    /// every row is kept — identical ones too — and a re-import finds them again. Named `id`, or
    /// `rowId`/`rowNumber` when the table has a column of that name.
    package func rowKey(of entity: Entity) -> String? {
        guard entity.isTable, key(of: entity).isEmpty else { return nil }
        let taken = Set(
            entity.columns.flatMap { [Self.attributeName($0.source).lowercased(), $0.source.lowercased()] })
        return ["id", "rowId", "rowNumber"].first {
            !taken.contains($0.lowercased()) && !taken.contains(snakeCaseName($0))
        } ?? "sluiceRow"
    }

    /// `signup_date` → `signupDate`, `Full Name` → `fullName`.
    public static func attributeName(_ column: String) -> String {
        let words = column.split { !$0.isLetter && !$0.isNumber }.map(String.init)
        guard let first = words.first else { return "field" }
        var name =
            first.prefix(1).lowercased() + first.dropFirst()
            + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        if name.first?.isNumber == true { name = "f" + name }
        return name
    }

    /// `customer_id` → `customer`: the to-one relationship a key column becomes.
    package static func relationshipName(forColumn column: String) -> String {
        attributeName(String(column.dropLast(column.lowercased().hasSuffix("_id") ? 3 : 0)))
    }

    /// The to-many on the destination of a link: the source entity in lower camel case, plural
    /// (`orders`); when the source links to that destination by several columns (`owner_id`,
    /// `reviewer_id` → person), each its own, after the relationship (`tasksAsOwner`, `tasksAsReviewer`).
    static func inverseName(of link: Link, among links: [Link], entities: [Entity]) -> String {
        let plural = inverseName(of: entities[link.from].name)
        guard links.contains(where: { $0.from == link.from && $0.to == link.to && $0.column != link.column }) else {
            return plural
        }
        let relationship = relationshipName(forColumn: link.column)
        return plural + "As" + relationship.prefix(1).uppercased() + relationship.dropFirst()
    }

    /// The to-many name on the destination: the source entity in lower camel case, plural.
    package static func inverseName(of source: String) -> String {
        let base = source.prefix(1).lowercased() + source.dropFirst()
        if base.hasSuffix("y") { return String(base.dropLast()) + "ies" }
        return base.hasSuffix("s") ? base + "es" : base + "s"
    }
}
