import ArgumentParser
import Foundation

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

    /// The name nearest to `word` by edit distance, when it is near enough to be a typing slip
    /// (at most a third of its letters, and at most 3).
    static func nearest(to word: String, among names: [String]) -> String? {
        let scored = names.map { ($0, distance(word, $0)) }.filter { $0.1 <= min(3, max(1, word.count / 3)) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// The Damerau–Levenshtein distance (a swap of neighbours counts once: `imrpot` is near `import`).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
