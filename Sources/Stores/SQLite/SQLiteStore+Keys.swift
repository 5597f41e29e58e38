import Drivers
import Foundation
import ObjectGraph

extension ManagedObjectID.Reference {
    /// A row key as messages name it: `42`, `'NZ'`.
    var keyText: String {
        switch self {
        case .integer(let key): return String(key)
        case .string(let key): return "'\(key)'"
        case .temporary(let number): return "temporary \(number)"
        }
    }

    /// A row key as an SQL value.
    var sqlValue: SQLiteValue {
        switch self {
        case .integer(let key): return .integer(key)
        case .string(let key): return .text(key)
        case .temporary: return .null
        }
    }
}

extension SQLiteStore {
    // MARK: Keys

    /// Keys come from a counter per table, read when the store opens and written back inside each
    /// save's transaction (graph layout: `_sluice_keys`; plain: the `nextKeys` row of
    /// `_sluice_metadata`), so a failed save leaves even the counter as it was. (One writer per
    /// store: a second process writing the same file meanwhile makes saves fail with a constraint
    /// error rather than overwrite rows.) A plain table keyed by an attribute has no counter: its
    /// objects' references are their key values (`referenceAttribute(for:)`).
    public func newReferences(for entity: EntityDescription, count: Int) throws -> [ManagedObjectID.Reference] {
        let table = schema.map(for: entity).table
        guard table.keyAttribute == nil else {
            throw StoreError(
                .constraintViolation,
                "\(entity.name) objects are kept under their \(table.keyAttribute!.name); their IDs come from it",
                url: url)
        }
        guard let first = nextKeys[table.name] else {
            throw StoreError(.corrupt, "The store has no key counter for table \(table.name)", url: url)
        }
        nextKeys[table.name] = first + Int64(count)
        return (0..<Int64(count)).map { .integer(first + $0) }
    }

    public func referenceAttribute(for entity: EntityDescription) -> AttributeDescription? {
        schema.map(for: entity).table.keyAttribute
    }

    public var rowVersioning: RowVersioning {
        schema.layout.isGraph || schema.tables.first?.versionColumn != nil ? .counter : .contentHash
    }

    func loadKeys() throws {
        if schema.layout.isGraph {
            let statement = try connection.makeStatement("SELECT \"table\", next FROM _sluice_keys")
            while try statement.step() { nextKeys[statement.string(0) ?? ""] = statement.int64(1) }
        } else if let json = storeRows["nextKeys"] {
            guard let decoded = try? JSONDecoder().decode([String: Int64].self, from: Data(json.utf8)) else {
                throw StoreError(.corrupt, "The store's key counters (nextKeys) are not valid JSON", url: url)
            }
            nextKeys = decoded
        }
        writtenKeys = nextKeys
    }

    /// Inside a save's transaction: records keys handed out since the last save, and the value types
    /// SQL no longer orders right (`SQLiteValueCoding.unorderedTypes`) when that set grew.
    func writeKeys() throws {
        if coding.unorderedTypesChanged {
            let row = try connection.cachedStatement(
                "INSERT OR REPLACE INTO _sluice_metadata VALUES ('unorderedTypes', ?)")
            row.bind(coding.unorderedTypes.map(\.rawValue).sorted().joined(separator: ","), at: 1)
            try row.stepToEnd()
        }
        guard nextKeys != writtenKeys else { return }
        if schema.layout.isGraph {
            for (table, next) in nextKeys where writtenKeys[table] != next {
                let update = try connection.cachedStatement(
                    """
                    INSERT INTO _sluice_keys VALUES (?2, ?1)
                    ON CONFLICT("table") DO UPDATE SET next = max(next, excluded.next)
                    """)
                update.bind(next, at: 1)
                update.bind(table, at: 2)
                try update.stepToEnd()
            }
        } else {
            let row = try connection.cachedStatement("INSERT OR REPLACE INTO _sluice_metadata VALUES ('nextKeys', ?)")
            row.bind(String(decoding: try JSONEncoder.sorted.encode(nextKeys), as: UTF8.self), at: 1)
            try row.stepToEnd()
        }
    }

    /// After a save's transaction committed: what `writeKeys` wrote is now in the file.
    func keysWritten() {
        writtenKeys = nextKeys
        coding.unorderedTypesChanged = false
    }
}

extension SQLiteStatement {
    func firstInt64() throws -> Int64? { try step() ? int64(0) : nil }

    /// Binds a row key: an integer, or the text of a table kept under a text attribute.
    func bind(key: ManagedObjectID.Reference, at index: Int32) {
        switch key {
        case .integer(let key): bind(key, at: index)
        case .string(let key): bind(key, at: index)
        case .temporary: bindNull(at: index)
        }
    }

    /// The row key (or foreign key) in column `index`: text where the column holds text (tables kept
    /// under a text attribute, and the columns referring to them), else an integer.
    func key(_ index: Int32) -> ManagedObjectID.Reference {
        isText(index) ? .string(string(index) ?? "") : .integer(int64(index))
    }

    func allStrings() throws -> [String] {
        var values: [String] = []
        while try step() { values.append(string(0) ?? "") }
        return values
    }
}
