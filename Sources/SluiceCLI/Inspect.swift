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

    @Argument(help: "The store (SQLite, XML or binary, written by Sluice).")
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
                lines.append("\(entity.entity): \(count) object\(count == 1 ? "" : "s")")
                lines += wrapped(
                    entity.properties.enumerated().map {
                        $0.offset < entity.properties.count - 1 ? $0.element + "," : $0.element
                    }, indent: "  ")
                for row in entity.rows {
                    lines += wrapped(
                        row.sorted { $0.key < $1.key }.map { "\($0.key)=\(shortened($0.value))" }, indent: "  | ")
                }
            }
        } else {
            lines.append("  (no model recorded in the store: give --model to count objects)")
        }
        print(lines.joined(separator: "\n"))
    }

    /// A value cut to 40 characters, line breaks shown as `\n`, quoted when it has a space.
    private func shortened(_ value: String) -> String {
        var flat = value.replacingOccurrences(of: "\n", with: "\\n")
        if flat.count > 40 { flat = flat.prefix(39) + "…" }
        let quoted = "\"" + flat.replacingOccurrences(of: "\"", with: "\\\"") + "\""
        return flat.contains(" ") || flat.contains("\"") || flat.isEmpty ? quoted : flat
    }

    /// `words` put on lines of at most 80 columns (a longer word on a line of its own), each line
    /// starting with `indent`.
    private func wrapped(_ words: [String], indent: String) -> [String] {
        var lines: [String] = [], line = ""
        for word in words {
            if !line.isEmpty && indent.count + line.count + 1 + word.count > 80 {
                lines.append(indent + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        return lines + (line.isEmpty ? [] : [indent + line])
    }
}
