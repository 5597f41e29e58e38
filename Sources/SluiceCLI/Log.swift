import ArgumentParser
import Foundation
import Logging

/// `--log-format` and `--log-level`, which every command takes: how its log lines (warnings,
/// errors and, from `info` down, what a run does) are written on standard error.
struct LogOptions: ParsableArguments {
    @Option(help: "Log lines: text (ISO 8601 time first) or json (one object per line).")
    var logFormat = LogFormat.text

    @Option(help: "The least level logged.")
    var logLevel = LogLevel.notice

    /// Sends every `Logger` of the process to standard error in this format, from this level up.
    func bootstrap() {
        let colour =
            logFormat == .text && isatty(STDERR_FILENO) != 0
            && ProcessInfo.processInfo.environment["NO_COLOR"]
                .map(\.isEmpty) ?? true
        let (format, level) = (logFormat, logLevel.level)
        LoggingSystem.bootstrap { _ in StandardErrorLog(format: format, colour: colour, logLevel: level) }
    }
}

/// A command whose log options set up the logging system before it runs.
protocol LoggingCommand: ParsableCommand {
    var logging: LogOptions { get }
}

enum LogFormat: String, CaseIterable, ExpressibleByArgument {
    case text, json
}

enum LogLevel: String, CaseIterable, ExpressibleByArgument {
    case trace, debug, info, notice, warning, error, critical

    var level: Logger.Level { Logger.Level(rawValue: rawValue) ?? .notice }
}

/// The command's logger (after `LogOptions.bootstrap()`, which `Sluice.main` calls first).
var log: Logger { Logger(label: "sluice") }

/// Writes log events on standard error, one line each:
/// - text: `2026-11-24T03:10:00.123Z sluice: warning: message key=value` (the level left out for
///   errors, whose lines read `sluice: message`), in colour only on a terminal without `NO_COLOR`;
/// - json: `{"time":…,"level":…,"message":…}` with the event's metadata as further members.
struct StandardErrorLog: LogHandler {
    let format: LogFormat
    let colour: Bool
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    init(format: LogFormat, colour: Bool, logLevel: Logger.Level) {
        self.format = format
        self.colour = colour
        self.logLevel = logLevel
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = metadata.merging(event.metadata ?? [:]) { $1 }
        let time = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        let line: String
        switch format {
        case .json:
            var object: [String: Any] = ["time": time, "level": event.level.rawValue, "message": "\(event.message)"]
            for (key, value) in fields where object[key] == nil { object[key] = Self.json(value) }
            let data =
                (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
                ?? Data()
            line = String(decoding: data, as: UTF8.self)
        case .text:
            var label = event.level >= .error ? "" : "\(event.level.rawValue): "
            if colour && !label.isEmpty {
                label = (event.level == .warning ? "\u{1B}[33m" : "\u{1B}[36m") + label + "\u{1B}[0m"
            }
            let prefix = colour && event.level >= .error ? "\u{1B}[31msluice:\u{1B}[0m" : "sluice:"
            let extra = fields.sorted { $0.key < $1.key }.map { " \($0.key)=\(Self.oneLine("\($0.value)"))" }.joined()
            // Every line of a message after its first is indented: no text (a file name with a line
            // break) can make a line that reads as another event.
            line = "\(time) \(prefix) \(label)\(Self.indented("\(event.message)"))\(extra)"
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// `text` with its line breaks and other control characters shown as escapes (`\n`).
    static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return text }
        return text.unicodeScalars.map {
            $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0)
        }.joined()
    }

    /// `text` with every line after the first indented, and carriage returns shown as `\r`.
    static func indented(_ text: String) -> String {
        text.replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\n  ")
    }

    private static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): return text
        case .stringConvertible(let value):
            if let number = value as? Int { return number }
            if let number = value as? Double { return number }
            if let flag = value as? Bool { return flag }
            return value.description
        case .array(let values): return values.map(json)
        case .dictionary(let members): return members.mapValues(json)
        }
    }
}
