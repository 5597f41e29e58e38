import ArgumentParser
import Foundation
import Pipeline

/// `sluice inspect STORE`: the store's type, metadata, entities and counts.
struct Inspect: LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a store's type, identifier, model hash, metadata, and its objects per entity.",
        discussion: """
            Opens the store read-only. Counts need the model: the one `sluice run` or `sluice import`
            recorded in the store, or `--model`. A store left by an interrupted `commit: batches`
            run says so.

            Examples:
              sluice inspect out/shop.sqlite
              sluice inspect out/shop.sqlite --json
              sluice inspect legacy.sqlite --model SampleData/shop.model.yaml

            Exit status: 0 success; 2 the model does not read; 3 no such store, or not a Sluice store.
            """)

    @Argument(help: "The store (SQLite, XML or binary, written by Sluice).")
    var store: String

    @Option(help: "The model (YAML, JSON or Xcode) to count entities with, instead of the one stored.")
    var model: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var logging: LogOptions

    func run() throws {
        let summary = try exitingOnFailure { try StoreInspection.summary(ofStoreAt: store, modelAt: model) }
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
        if let entities = summary.entities {
            let width = entities.keys.map(\.count).max() ?? 0
            for (name, count) in entities.sorted(by: { $0.key < $1.key }) {
                lines.append("  " + name.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(count)")
            }
        } else {
            lines.append("  (no model recorded in the store: give --model to count objects)")
        }
        print(lines.joined(separator: "\n"))
    }
}
