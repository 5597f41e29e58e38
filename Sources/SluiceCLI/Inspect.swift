import ArgumentParser
import Foundation
import ObjectGraph
import Pipeline
import Readers

/// `sluice inspect STORE`: the store's type, metadata, entities and counts.
struct Inspect: ParsableCommand {
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

    func run() throws {
        let summary: StoreSummary
        do {
            summary = try StoreInspection.summary(ofStoreAt: URL(fileURLWithPath: store), model: loadModel(model))
        } catch {
            throw report(error)
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

/// `sluice validate STORE`: every rule of the model the stored graph breaks.
struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate a whole store against its model and list every rule it breaks.",
        discussion: """
            Checks required attributes and relationships, minimum and maximum values, lengths and
            patterns, to-many minimum and maximum counts and uniqueness constraints over every
            object, each rule as one query of the store (memory stays flat). Uses the model the
            store was written with, or `--model` (e.g. a stricter one, before adopting it).

            Examples:
              sluice validate out/shop.sqlite
              sluice validate out/shop.sqlite --model SampleData/shop.model.yaml

            Exit status: 0 the store is valid; 1 it breaks rules (listed on standard output);
            2 the model does not read or none is known; 3 no such store, or not a Sluice store.
            """)

    @Argument(help: "The store (SQLite, XML or binary, written by Sluice).")
    var store: String

    @Option(help: "The model (YAML, JSON or Xcode) to validate against, instead of the one stored.")
    var model: String?

    func run() throws {
        let violations: [GraphViolation]
        do {
            violations = try StoreInspection.violations(inStoreAt: URL(fileURLWithPath: store), model: loadModel(model))
        } catch {
            throw report(error)
        }
        guard !violations.isEmpty else { return print("\(store): valid") }
        print("\(store): \(violations.count) rule\(violations.count == 1 ? "" : "s") broken")
        for violation in violations { print("  \(violation)") }
        throw ExitStatus.dataErrors
    }
}

/// Loads `--model` when given.
func loadModel(_ path: String?) throws -> ManagedObjectModel? {
    try path.map { try ModelFile.load(contentsOf: URL(fileURLWithPath: $0)) }
}

/// Prints `error` and gives the exit status it stands for.
func report(_ error: any Error) -> ExitCode {
    FileHandle.standardError.write(Data("sluice: \(error)\n".utf8))
    switch error {
    case is ModelFileError, is PipelineFileError, is StoreInspection.NoModel: return ExitStatus.configError
    case let error as ReaderError: return error.kind == .invalidOption ? ExitStatus.configError : ExitStatus.ioError
    case let error as StoreError where error.code == .incompatibleModel: return ExitStatus.configError
    default: return ExitStatus.ioError
    }
}
