import ArgumentParser

@main
struct Sluice: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sluice",
        abstract: "Bulk-import CSV, XML and SQL dumps into a validated object-graph store.",
        subcommands: [
            Run.self, Import.self, Infer.self, Check.self, Validate.self, Inspect.self, Convert.self, Export.self,
            Seed.self,
        ]
    )
}
