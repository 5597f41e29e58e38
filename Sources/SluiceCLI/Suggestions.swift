import ArgumentParser
import Foundation
import Pipeline

/// What the command line says to a mistyped command or option: the nearest name it knows
/// (`sluice imprt` → `import`; `--verison` → `--version`).
enum Suggestions {
    /// The error for a first argument that is neither a command nor an option, or `nil`.
    static func unknownCommand(in arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        let names = Sluice.configuration.subcommands.map { $0._commandName } + ["help"]
        guard !names.contains(first) else { return nil }
        let near = nearest(to: first, among: names).map { ". Did you mean '\($0)'?" } ?? ""
        return "Error: Unknown command '\(first)'\(near)\nUsage: sluice <subcommand>\n"
            + "  See 'sluice --help' for more information."
    }

    /// A hint for ArgumentParser's message about an unknown option: the option of the command
    /// being run whose name is nearest, or `nil`.
    static func hint(forMessage message: String, arguments: [String]) -> String? {
        guard let start = message.range(of: "Unknown option '"),
            let end = message[start.upperBound...].firstIndex(of: "'")
        else { return nil }
        let given = String(message[start.upperBound..<end])
        let command = Sluice.configuration.subcommands.first { $0._commandName == arguments.first }
        let help = command.map { $0.helpMessage(columns: 10_000) } ?? Sluice.helpMessage(columns: 10_000)
        // The options the help lists (not those its discussion mentions, of other commands).
        let listed = help.range(of: "OPTIONS:").map { help[$0.upperBound...] } ?? ""
        var options = Set(listed.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "-" }).map(String.init))
            .filter { $0.hasPrefix("--") && $0.count > 3 && $0 != given }
        if command == nil { options.insert("--version") }
        return nearest(to: given, among: options.sorted()).map { "Did you mean '\($0)'?" }
    }

    static func nearest(to word: String, among names: [String]) -> String? {
        NearestName.nearest(to: word, among: names)
    }
}
