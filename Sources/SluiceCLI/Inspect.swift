import ArgumentParser
import Foundation
import Pipeline

/// `sluice inspect STORE`: the store's type, metadata, entities and counts.
struct Inspect: LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a store's metadata, schema, counts and first objects.",
        usage: "sluice inspect <store> [<options>]",
        discussion: """
            Opens the store read-only. Counts need the model: the one `sluice run` or
            `sluice import` recorded in the store, or `--model`. A store left by an
            interrupted `commit: batches` run says so.

            Examples:
              sluice inspect out/shop.sqlite
              sluice inspect out/shop.sqlite --json
              sluice inspect legacy.sqlite --model SampleData/shop.model.yaml

            Exit status: 0 success; 2 the model does not read; 3 no such store, or not a
            Sluice store.
            """)

    @Argument(help: "The store (SQLite, XML or binary, written by Sluice), or a postgresql:// URL.")
    var store: String

    @Option(help: "The model (YAML, JSON or Xcode) to count entities with, instead of the one stored.")
    var model: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Option(help: "How many objects of each entity to show.")
    var rows = 3

    @OptionGroup var logging: LogOptions

    func run() throws {
        let summary = try exitingOnFailure {
            try StoreInspection.summary(ofStoreAt: store, modelAt: model, rows: max(0, rows))
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(summary), as: UTF8.self))
            return
        }
        var lines = [
            "\(summary.path): \(summary.type) store \(summary.identifier)",
            "  model version hash \(summary.modelVersionHash ?? "(none)")"
                + (summary.model == "none" ? "" : " (model \(summary.model))"),
        ]
        if summary.interruptedRun {
            lines.append("  holds the checkpoint of an interrupted run (sluice run --resume goes on from it)")
        }
        for (key, value) in summary.userInfo.sorted(by: { $0.key < $1.key }) { lines.append("  \(key) = \(value)") }
        if let schema = summary.schema {
            for entity in schema {
                let count = summary.entities?[entity.entity] ?? 0
                lines.append("")
                lines.append("\(entity.table) (entity \(entity.entity)): \(count) row\(count == 1 ? "" : "s")")
                lines.append("  columns: " + entity.columns.map(describe).joined(separator: ", "))
                for row in entity.rows {
                    lines.append(
                        "  | "
                            + entity.columns.map { "\($0.name)=\(shown(row[$0.name] ?? .null, $0))" }
                            .joined(separator: " ")
                    )
                }
            }
        } else {
            lines.append("  (no model recorded in the store: give --model to count objects)")
        }
        print(lines.joined(separator: "\n"))
    }

    /// `name type`, `?` after an optional one; a to-one as `name -> table`.
    private func describe(_ column: StoreSummary.Column) -> String {
        column.name + (column.references.map { " -> \($0)" } ?? " \(column.type)") + (column.optional ? "?" : "")
    }

    /// A value on one line: text cut to 40 characters, line breaks shown as `\n`, quoted when it has
    /// a space, a quote or nothing (so it never reads as another value); `null` for none.
    private func shown(_ value: StoreSummary.Value, _ column: StoreSummary.Column) -> String {
        switch value {
        case .null: return "null"
        case .integer(let integer): return String(integer)
        case .decimal(let decimal): return column.text(decimal)
        case .double(let double): return "\(double)"
        case .flag(let flag): return flag ? "true" : "false"
        case .text(var flat):
            flat = flat.replacingOccurrences(of: "\n", with: "\\n")
            if flat.count > 40 { flat = flat.prefix(39) + "…" }
            let plain = !flat.isEmpty && !flat.contains(" ") && !flat.contains("\"") && flat != "null"
            return plain ? flat : "\"" + flat.replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
    }
}
