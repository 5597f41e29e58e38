import Drivers
import Foundation
import ObjectGraph

extension SQLiteStore {
    // MARK: Keys

    /// Keys come from a counter per table, read from `_sluice_keys` when the store opens and written
    /// back inside each save's transaction, so a failed save leaves even the counter as it was. (One
    /// writer per store: a second process writing the same file meanwhile makes saves fail with a
    /// constraint error rather than overwrite rows.)
    public func newReferences(for entity: EntityDescription, count: Int) throws -> [ManagedObjectID.Reference] {
        let table = schema.map(for: entity).table.name
        guard let first = nextKeys[table] else {
            throw StoreError(.corrupt, "_sluice_keys has no row for table \(table)", url: url)
        }
        nextKeys[table] = first + Int64(count)
        return (0..<Int64(count)).map { .integer(first + $0) }
    }

    func loadKeys() throws {
        let statement = try connection.makeStatement("SELECT \"table\", next FROM _sluice_keys")
        while try statement.step() { nextKeys[statement.string(0) ?? ""] = statement.int64(1) }
        writtenKeys = nextKeys
    }

    /// Inside a save's transaction: records keys handed out since the last save.
    func writeKeys() throws {
        for (table, next) in nextKeys where writtenKeys[table] != next {
            let update = try connection.cachedStatement(
                "UPDATE _sluice_keys SET next = max(next, ?) WHERE \"table\" = ?")
            update.bind(next, at: 1)
            update.bind(table, at: 2)
            try update.stepToEnd()
        }
    }
}

extension SQLiteStatement {
    func firstInt64() throws -> Int64? { try step() ? int64(0) : nil }

    func allStrings() throws -> [String] {
        var values: [String] = []
        while try step() { values.append(string(0) ?? "") }
        return values
    }
}
