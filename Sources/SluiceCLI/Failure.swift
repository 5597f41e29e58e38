import ArgumentParser
import Foundation
import Logging
import Pipeline

/// Logs `error` (`sluice: <error>` on standard error) and gives the exit status it stands for
/// (`ExitStatus(for:)`: chosen by the error's type, never its text).
func failure(_ error: any Error) -> ExitCode {
    log.error("\(error)")
    return ExitCode(ExitStatus.code(for: error))
}

/// Logs a warning (`sluice: warning: <message>`): something the user should know that does not stop
/// the command.
func warn(_ message: String) {
    log.warning("\(message)")
}

/// Runs `body`; an error it throws is printed and becomes its exit status.
func exitingOnFailure<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch let exit as ExitCode { throw exit } catch { throw failure(error) }
}

/// `--layout` and `--dates`: how a new SQLite store lays out its tables (`sluice import`, `convert`).
struct LayoutOptions: ParsableArguments {
    @Option(help: "A new SQLite store's layout: plain (the default: the source's names and keys) or graph.")
    var layout: LayoutOption?

    @Option(help: "A new plain SQLite store's dates: iso8601 (the default) or unix.")
    var dates: DatesOption?
}

/// `--layout`: the table layouts of a SQLite store.
enum LayoutOption: String, CaseIterable, ExpressibleByArgument {
    case plain, graph
}

/// `--dates`: how a plain SQLite store keeps dates.
enum DatesOption: String, CaseIterable, ExpressibleByArgument {
    case iso8601, unix
}

/// `--format`: the input formats `sluice` reads.
enum FormatOption: String, CaseIterable, ExpressibleByArgument {
    case auto, csv, xml, sqldump, sqlite, json, jsonl
}

/// `--mode`: `PipelineConfig.LoadMode` on the command line.
enum ModeOption: String, CaseIterable, ExpressibleByArgument {
    case merge, append, replace, sync
}
