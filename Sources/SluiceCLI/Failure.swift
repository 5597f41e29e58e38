import ArgumentParser
import Foundation
import Pipeline

/// Prints `error` as `sluice: <error>` on standard error and gives the exit status it stands for
/// (`ExitStatus(for:)`: chosen by the error's type, never its text).
func failure(_ error: any Error) -> ExitCode {
    FileHandle.standardError.write(Data("sluice: \(error)\n".utf8))
    return ExitCode(ExitStatus(for: error).rawValue)
}

/// Prints `sluice: warning: <message>` on standard error: something the user should know that does
/// not stop the command.
func warn(_ message: String) {
    FileHandle.standardError.write(Data("sluice: warning: \(message)\n".utf8))
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
    case auto, csv, xml, sqldump, sqlite
}
