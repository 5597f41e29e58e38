import Drivers
import Foundation
import ObjectGraph

extension SQLiteStore {
    // MARK: Lightweight migration

    /// Opens a store written with an older model when this model's tables only extend the file's
    /// (option `lightweight_migration`, Core Data's lightweight migration): tables the file lacks are
    /// made, nullable columns it lacks are added (`ALTER TABLE … ADD COLUMN`), and this model is the
    /// store's from the next save. Anything else — a column gone, another type, a required column —
    /// leaves the file untouched, and the coordinator refuses the store, naming what differs.
    /// New entities must come after the stored ones in the model (entity numbers are positions).
    func migrateLightly() throws {
        var additions: [(table: String, column: String, declaration: String)] = []
        for (table, columns) in schema.tableColumns where try tableExists(table) {
            let info = try connection.makeStatement("SELECT name, type, pk FROM pragma_table_info(?)")
            info.bind(table, at: 1)
            // A table now kept under SQLite's rowid may have an `INTEGER PRIMARY KEY` column from a
            // store written before (`id`): that column is the rowid, and stays.
            let underRowid = !columns.contains { $0.declaration.uppercased().contains("PRIMARY KEY") }
            var found: [String: String] = [:]
            while try info.step() {
                let type = (info.string(1) ?? "").uppercased()
                if underRowid, info.int64(2) == 1, type == "INTEGER" { continue }
                found[(info.string(0) ?? "").lowercased()] = type
            }
            for (name, _) in found where !columns.contains(where: { $0.name.lowercased() == name }) { return }
            for column in columns {
                if let type = found[column.name.lowercased()] {
                    guard type == Self.declaredType(column.declaration) else { return }
                } else {
                    let declaration = column.declaration.uppercased()
                    guard !declaration.contains("NOT NULL"), !declaration.contains("PRIMARY KEY") else { return }
                    additions.append((table, column.name, column.declaration))
                }
            }
        }
        try transaction {
            for addition in additions {
                try connection.execute(
                    "ALTER TABLE \(quote(addition.table)) ADD COLUMN \(quote(addition.column)) \(addition.declaration)")
            }
        }
        metadata.modelVersionHash = model.versionHash
        metadata.entityVersionHashes = model.entityVersionHashes
        try prepareExistingSchema()
    }

    /// The type part of a column declaration, as `pragma table_info` reports it (`TEXT REFERENCES
    /// "t"("k")` → `TEXT`).
    static func declaredType(_ declaration: String) -> String {
        var type = declaration.uppercased()
        for clause in [" REFERENCES", " NOT NULL", " PRIMARY KEY"] {
            if let range = type.range(of: clause) { type = String(type[..<range.lowerBound]) }
        }
        return type.trimmingCharacters(in: .whitespaces)
    }
}
