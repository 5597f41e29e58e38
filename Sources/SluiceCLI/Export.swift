import ArgumentParser
import Foundation
import Pipeline

/// `sluice export STORE --to DIR|FILE`: a store out as plain data.
struct Export: LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a store out as plain data: CSV, JSON Lines or a SQL script.",
        usage: "sluice export <store> --to <file> [<options>]",
        discussion: """
            Reads any store Sluice writes (SQLite in either layout, XML, binary) a batch
            at a time and writes a table per root entity (its sub-entities in it, named
            in an `entity` column) and one per many-to-many relationship, named as the
            plain SQLite layout names them. A to-one relationship is written as its
            destination's key (`customer_id`, `product_sku`); decimals keep every digit,
            dates are ISO 8601 in UTC, binary is base64. A CSV export imports back into
            an equal store with `sluice import`.

            --to names a folder (it exists, ends in `/` or has no extension: one
            `<table>.csv`, `.jsonl` or `.sql` per table) or a file (CSV: one table; JSON
            Lines: every line names its table; SQL: one script). `-` is standard output.

            Examples:
              sluice export out/shop.sqlite --to out/shop-csv/
              sluice export out/shop.sqlite --to out/orders.csv --entity Order
              sluice export out/shop.xml --to out/shop.sql
              sqlite3 copy.db < out/shop.sql

            Exit status: 0 done; 2 unknown entity, several tables into one CSV file, or
            no model known; 3 no such store, or an output that cannot be written.
            """)

    @Argument(help: "The store (SQLite, XML or binary, written by Sluice), or a postgresql:// URL.")
    var store: String

    @Option(help: "A folder, or a file (`-`: standard output).")
    var to: String

    @Option(help: "csv, jsonl or sqldump (default: from the file's extension, else csv).")
    var format: ExportFormatOption?

    @Option(name: .customLong("entity"), help: "An entity to export (sub-entities with it); repeatable.")
    var entities: [String] = []

    @Option(help: "The model (YAML, JSON or Xcode), instead of the one stored.")
    var model: String?

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    @OptionGroup var logging: LogOptions

    func run() throws {
        var options = StoreExport.Options(store: store, destination: to)
        options.format = format.map { StoreExport.Format(rawValue: $0.rawValue)! }
        options.entities = entities
        options.modelPath = model
        let written = try exitingOnFailure { try StoreExport.run(options) }
        guard !quiet, to != "-" else { return }
        for table in written {
            print("\(table.table): \(table.rows) row\(table.rows == 1 ? "" : "s") → \(table.path)")
        }
    }
}

/// `--format` of `sluice export`.
enum ExportFormatOption: String, CaseIterable, ExpressibleByArgument {
    case csv, jsonl, sqldump
}
