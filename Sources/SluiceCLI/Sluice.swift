import ArgumentParser

@main
struct Sluice: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sluice",
        abstract: "Bulk-import CSV, XML and SQL dumps into a validated object-graph store.",
        subcommands: [
            Run.self, Import.self, Infer.self, Check.self, Validate.self, Inspect.self, Convert.self, Seed.self,
        ]
    )
}

/// Exit codes cron reads (see DESIGN.md).
enum ExitStatus {
    static let dataErrors = ExitCode(1)
    static let configError = ExitCode(2)
    static let ioError = ExitCode(3)
    static let locked = ExitCode(4)
}
