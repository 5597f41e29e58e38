import Foundation
import ModelFiles
import ObjectGraph
import Readers
import Yams

struct PipelineReader: YAMLFileReader {
    let file: String
    let environment: [String: String]
    var issues: [ModelFileIssue] = []
    let folder: URL
    /// Model files held in memory (an import's inferred model), by path: read instead of the disk.
    let models: [String: String]
    /// Whether a given Xcode model's warnings are kept quiet (they were told once already).
    var quietModel = false

    init(file: String, environment: [String: String], models: [String: String] = [:]) {
        self.file = file
        self.environment = environment
        self.models = models
        folder = URL(fileURLWithPath: file).deletingLastPathComponent()
    }

    // MARK: Values

    /// The scalar's text with `${VAR}` / `${VAR:-default}` replaced (`$${` stands for `${` itself);
    /// an unset or empty variable without a default is an issue.
    mutating func text(_ node: Node, _ what: String, source: String? = nil, allowEmpty: Bool = false) -> String? {
        guard let raw = node.scalar?.string else {
            fail(node, "\(what) must be a single value", entity: source)
            return nil
        }
        var result = "", rest = Substring(raw)
        while let start = rest.range(of: "${") {
            // `$${` is a `${` of the value itself (a file named `in-${X}.csv`), never a variable.
            if start.lowerBound > rest.startIndex, rest[rest.index(before: start.lowerBound)] == "$" {
                result += rest[..<rest.index(before: start.lowerBound)] + "${"
                rest = rest[start.upperBound...]
                continue
            }
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                fail(node, "\(what): `${` without a closing `}`", entity: source)
                return nil
            }
            let body = rest[start.upperBound..<end]
            let parts = body.split(separator: ":-", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            // An empty variable counts as unset: `${OUT}/t.sqlite` must never become `/t.sqlite`.
            if let value = environment[name], !value.isEmpty {
                result += value
            } else if parts.count == 2 {
                result += parts[1]
            } else {
                let state = environment[name] == nil ? "is not set" : "is empty"
                fail(
                    node,
                    "\(what): the environment variable \(name) \(state) (write ${\(name):-default} for a default)",
                    entity: source)
                return nil
            }
            rest = rest[rest.index(after: end)...]
        }
        result += rest
        if result.isEmpty && !allowEmpty {
            fail(node, "\(what) must not be empty", entity: source)
            return nil
        }
        return result
    }

    mutating func path(_ node: Node, _ what: String, source: String? = nil) -> String? {
        guard let text = text(node, what, source: source) else { return nil }
        if text == "-" { return text }  // standard input
        // `${DIR:-}/t.sqlite` with DIR unset would put the file at the root of the disk.
        if let raw = node.scalar?.string, raw.hasPrefix("${"), let end = raw.firstIndex(of: "}"),
            raw[raw.index(after: end)...].hasPrefix("/"),
            self.text(Node(String(raw[...end])), what, source: source, allowEmpty: true)?.isEmpty == true
        {
            fail(
                node,
                "\(what): \(raw[...end]) is empty, which would make \(text) a path at the root of the disk; "
                    + "give the variable a value, or its default a folder",
                entity: source)
            return nil
        }
        let path = URL(fileURLWithPath: text, relativeTo: folder).standardizedFileURL.path
        // `rejects: dir/` names a folder, existing or not: the slash stays.
        return text.hasSuffix("/") && !path.hasSuffix("/") ? path + "/" : path
    }

    mutating func number(
        _ node: Node, _ what: String, minimum: Int, maximum: Int = .max, source: String? = nil
    ) -> Int? {
        guard let text = text(node, what, source: source), let value = Int(text), value >= minimum, value <= maximum
        else {
            let range = maximum == .max ? "≥ \(minimum)" : "from \(minimum) to \(maximum)"
            fail(node, "\(what) must be a whole number \(range)", entity: source)
            return nil
        }
        return value
    }

    mutating func flag(_ node: Node, _ what: String, source: String?) -> Bool? {
        switch text(node, what, source: source)?.lowercased() {
        case "true", "yes": return true
        case "false", "no": return false
        default:
            fail(node, "\(what) must be true or false", entity: source)
            return nil
        }
    }

    /// A list of texts, or one text.
    mutating func texts(_ node: Node, _ what: String, source: String?) -> [String]? {
        if node.scalar != nil { return text(node, what, source: source, allowEmpty: true).map { [$0] } }
        guard let list = node.sequence else {
            fail(node, "\(what) must be a value or a list of values", entity: source)
            return nil
        }
        return list.compactMap { text($0, what, source: source, allowEmpty: true) }
    }

    /// One byte, for CSV punctuation (`","`, `"\t"`, `tab`).
    mutating func byte(_ node: Node, _ what: String, source: String) -> UInt8? {
        guard let text = text(node, what, source: source) else { return nil }
        let named: [String: String] = [
            "tab": "\t", "\\t": "\t", "space": " ", "pipe": "|", "semicolon": ";", "comma": ",",
        ]
        let value = named[text.lowercased()] ?? text
        guard value.utf8.count == 1, let byte = value.utf8.first else {
            fail(node, "\(what) must be one ASCII character (or tab, space, pipe, semicolon, comma)", entity: source)
            return nil
        }
        return byte
    }
}
