import ArgumentParser
import Foundation
import Pipeline

@main
struct Sluice: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sluice",
        abstract: "Bulk-import CSV, XML and SQL dumps into a validated store.",
        discussion: """
            Exit status (every command):
              0  done (rejected records under errors.max: one warning names their file)
              1  more rejected records than errors.max, or a graph breaking the model
              2  usage, model or pipeline error
              3  input, store or I/O error
              4  another run holds the target's lock (see --wait-lock)
              129, 130, 143  stopped by SIGHUP, SIGINT, SIGTERM (commit: atomic: the
                 target is as before; commit: batches: the batches committed
                 stay, and run --resume goes on)
            """,
        version: SluiceVersion.current,
        subcommands: [
            Run.self, Import.self, Infer.self, Check.self, Validate.self, Inspect.self, Convert.self, Export.self,
            Seed.self, Completions.self,
        ]
    )

    /// Parses the command line, sets up logging and runs the command. A usage error exits 2 (the
    /// status the table above gives), not ArgumentParser's 64.
    static func main() {
        PipelineRunner.configureProcessMemory()
        let arguments = Array(CommandLine.arguments.dropFirst())
        // A password typed into a database URL: not in `ps` from here on, nor in a usage message.
        let passwords = CommandLineSecrets.passwords(in: arguments)
        CommandLineSecrets.hideFromProcessList(passwords)
        if let message = Suggestions.unknownCommand(in: arguments) {
            FileHandle.standardError.write(Data((message + "\n").utf8))
            Foundation.exit(ExitStatus.usage.rawValue)
        }
        do {
            var command = try parseAsRoot()
            ((command as? any LoggingCommand)?.logging ?? (try? LogOptions.parse([])))?.bootstrap()
            try command.run()
        } catch {
            if exitCode(for: error) == .validationFailure {
                var message = fullMessage(for: error)
                if !message.contains("Did you mean"),
                    let hint = Suggestions.hint(forMessage: message, arguments: arguments),
                    let line = message.range(of: "\n")
                {
                    message.insert(contentsOf: ". " + hint, at: line.lowerBound)
                }
                message = CommandLineSecrets.redact(message, passwords)
                FileHandle.standardError.write(Data((message + "\n").utf8))
                Foundation.exit(ExitStatus.usage.rawValue)
            }
            exit(withError: error)
        }
    }
}
