import Foundation

/// Passwords typed into `postgresql://` URLs on a command line: hidden from `ps` once the command
/// has started, and from every message it prints.
public enum CommandLineSecrets {
    /// The passwords (as typed, percent-encoded) of the database URLs in `arguments` (`--to=URL`
    /// too): in the user part, or a `password` parameter.
    public static func passwords(in arguments: [String]) -> [String] {
        arguments.flatMap { argument -> [String] in
            guard let start = argument.range(of: "postgresql://") ?? argument.range(of: "postgres://"),
                let components = URLComponents(string: String(argument[start.lowerBound...]))
            else { return [] }
            let parameters = (components.percentEncodedQueryItems ?? []).filter { $0.name == "password" }
            return ([components.percentEncodedPassword] + parameters.map(\.value)).compactMap { $0 }
                .filter { !$0.isEmpty }
        }
    }

    /// Overwrites the passwords with `*` in the process's own argument strings, which `ps` and
    /// `/proc/PID/cmdline` show (`CommandLine.arguments` keeps its copy).
    public static func hideFromProcessList(_ passwords: [String]) {
        guard !passwords.isEmpty else { return }
        for index in 0..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let length = strlen(argument)
            for password in passwords {
                let bytes = Array(password.utf8)
                guard !bytes.isEmpty, bytes.count <= length else { continue }
                var offset = 0
                while offset + bytes.count <= length {
                    if (0..<bytes.count).allSatisfy({ UInt8(bitPattern: argument[offset + $0]) == bytes[$0] }) {
                        for position in offset..<offset + bytes.count { argument[position] = CChar(UInt8(ascii: "*")) }
                        offset += bytes.count
                    } else {
                        offset += 1
                    }
                }
            }
        }
    }

    /// `text` with each password replaced by `***`.
    public static func redact(_ text: String, _ passwords: [String]) -> String {
        passwords.reduce(text) { text, password in
            var text = text.replacingOccurrences(of: password, with: "***")
            if let decoded = password.removingPercentEncoding, !decoded.isEmpty {
                text = text.replacingOccurrences(of: decoded, with: "***")
            }
            return text
        }
    }
}
