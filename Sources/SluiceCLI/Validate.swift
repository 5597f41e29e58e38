import ArgumentParser
import Pipeline

/// `sluice validate STORE`: every rule of the model the stored graph breaks.
struct Validate: LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate a whole store against its model; list every rule broken.",
        usage: "sluice validate <store> [<options>]",
        discussion: """
            Checks required attributes and relationships, minimum and maximum values,
            lengths and patterns, to-many minimum and maximum counts and uniqueness
            constraints over every object, each rule as one query of the store (memory
            stays flat). Uses the model the store was written with, or `--model` (e.g. a
            stricter one, before adopting it).

            Examples:
              sluice validate out/shop.sqlite
              sluice validate out/shop.sqlite --model SampleData/shop.model.yaml

            Exit status: 0 the store is valid; 1 it breaks rules (listed on standard
            output); 2 the model does not read or none is known; 3 no such store, or not
            a Sluice store.
            """)

    @Argument(help: "The store (SQLite, XML or binary, written by Sluice), or a postgresql:// URL.")
    var store: String

    @Option(help: "The model (YAML, JSON or Xcode) to validate against, instead of the one stored.")
    var model: String?

    @OptionGroup var logging: LogOptions

    func run() throws {
        let violations = try exitingOnFailure { try StoreInspection.violations(inStoreAt: store, modelAt: model) }
        let name = TargetStore.name(of: TargetStore.url(store))
        guard !violations.isEmpty else { return print("\(name): valid") }
        print("\(name): \(violations.count) rule\(violations.count == 1 ? "" : "s") broken")
        for violation in violations { print("  \(violation)") }
        throw ExitCode(ExitStatus.dataErrors.rawValue)
    }
}
