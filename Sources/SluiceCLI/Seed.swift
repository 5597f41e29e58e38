import ArgumentParser
import Pipeline

/// `sluice seed MODEL SEED`: loads a model file and a seed file into a store, validates, saves, and
/// prints what the store holds.
struct Seed: LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load a seed (fixture) file into a store and print the store.",
        usage: "sluice seed <model> <seed> [--to <store>] [<options>]",
        discussion: """
            Each object of the seed is inserted with its attributes, relationships are
            set by the destination's key values, the whole graph is validated (every
            failure listed) and saved.

            Examples:
              sluice seed SampleData/shop.model.yaml SampleData/shop.seed.yaml
              sluice seed SampleData/shop.model.yaml SampleData/shop.seed.yaml \\
                --to out/seeded.sqlite
            """)

    @Argument(help: "The model file (YAML or JSON).")
    var model: String

    @Argument(help: "The seed file (YAML).")
    var seed: String

    @Option(name: .customLong("to"), help: "The store file to write (SQLite). Without it, an in-memory store.")
    var store: String?

    @Flag(help: "Print only the summary line.")
    var quiet = false

    @OptionGroup var logging: LogOptions

    func run() throws {
        let result = try exitingOnFailure {
            try Seeding.seed(modelAt: model, seedAt: seed, into: store, listsStore: !quiet)
        }
        print(result.summary)
        if !quiet { print(result.listing) }
    }
}
