import Foundation
import Yams

/// What readers of Sluice's YAML files (model files, pipeline files) share: issues with file, line
/// and column, and checked access to mappings and scalars.
package protocol YAMLFileReader {
    var file: String { get }
    var issues: [ModelFileIssue] { get set }
}

extension YAMLFileReader {
    package mutating func fail(_ node: Node?, _ message: String, entity: String? = nil, property: String? = nil) {
        let mark = node?.mark
        issues.append(
            ModelFileIssue(
                file: file, line: mark?.line ?? 0, column: mark?.column ?? 0, entity: entity, property: property,
                message: message))
    }

    package func issue(for error: any Error) -> ModelFileIssue {
        let location = YAMLErrorLocation(error)
        return ModelFileIssue(file: file, line: location.line, column: location.column, message: location.message)
    }

    /// The pairs of a mapping, reporting keys that are not in `allowed` and keys given twice.
    package mutating func pairs(
        _ node: Node, allowed: Set<String>?, what: String, entity: String? = nil, property: String? = nil
    ) -> [(key: String, keyNode: Node, value: Node)] {
        guard let mapping = node.mapping else {
            fail(node, "\(what) must be a mapping", entity: entity, property: property)
            return []
        }
        var seen: Set<String> = []
        var result: [(String, Node, Node)] = []
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalar?.string else {
                fail(keyNode, "keys in \(what) must be plain names", entity: entity, property: property)
                continue
            }
            if !seen.insert(key).inserted {
                fail(
                    keyNode, "\(key.debugDescription) is given twice in \(what)", entity: entity,
                    property: property ?? (allowed == nil ? key : nil))
                continue
            }
            if let allowed, !allowed.contains(key) {
                fail(
                    keyNode,
                    "unknown key \(key.debugDescription) in \(what) (expected one of: "
                        + "\(allowed.sorted().joined(separator: ", ")))",
                    entity: entity, property: property)
                continue
            }
            result.append((key, keyNode, value))
        }
        return result
    }

    package mutating func string(_ node: Node, _ what: String, entity: String?, property: String?) -> String? {
        guard let scalar = node.scalar, !scalar.string.isEmpty else {
            fail(node, "\(what) must be a text value", entity: entity, property: property)
            return nil
        }
        return scalar.string
    }

    package mutating func bool(_ node: Node, _ what: String, entity: String?, property: String?) -> Bool? {
        switch node.scalar?.string.lowercased() {
        case "true", "yes": return true
        case "false", "no": return false
        default:
            fail(node, "\(what) must be true or false", entity: entity, property: property)
            return nil
        }
    }

    package mutating func int(_ node: Node, _ what: String, entity: String?, property: String?) -> Int? {
        guard let text = node.scalar?.string, let value = Int(text), value >= 0 else {
            fail(node, "\(what) must be a whole number ≥ 0", entity: entity, property: property)
            return nil
        }
        return value
    }

    package mutating func names(_ node: Node, _ what: String, entity: String?) -> [String]? {
        if node.scalar != nil { return string(node, what, entity: entity, property: nil).map { [$0] } }
        guard let sequence = node.sequence else {
            fail(node, "\(what) must be a name or a list of names", entity: entity)
            return nil
        }
        return sequence.compactMap { string($0, what, entity: entity, property: nil) }
    }

}

/// Line, column and message of an error thrown by the YAML parser (0:0 when it has no position).
package struct YAMLErrorLocation {
    package var line = 0
    package var column = 0
    package var message: String

    package init(_ error: any Error) {
        switch error {
        case YamlError.scanner(let context, let problem, let mark, _),
            YamlError.parser(let context, let problem, let mark, _),
            YamlError.composer(let context, let problem, let mark, _):
            let text = [context?.text, problem].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ": ")
            (line, column, message) = (mark.line, mark.column, "YAML syntax error: \(text)")
        case YamlError.duplicatedKeysInMapping(let duplicates, let context):
            (line, column, message) = (
                context.mark.line, context.mark.column,
                "duplicate keys \(duplicates.joined(separator: ", ")) in one mapping"
            )
        default:
            message = "cannot parse the file: \(error)"
        }
    }
}
