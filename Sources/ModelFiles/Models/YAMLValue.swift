import Yams

/// A YAML value built in code: the one way Sluice writes the model and pipeline files it makes
/// (`sluice infer`, `sluice import`, a model grown by a new input). Yams writes it, so every
/// scalar is quoted exactly when YAML would read it as something other than text (`"true"`,
/// `"1"`, `"null"`, `"a: b"`), and the file reads back as it was built.
///
/// ```swift
/// let file = YAMLValue.map([
///     ("version", .number(1)),
///     ("entities", .map([("Customer", .map([("table", .text("customers"))], flow: true))])),
/// ])
/// print(try file.document(comment: "Proposed by sluice infer"))
/// ```
public indirect enum YAMLValue: Sendable {
    case text(String)
    case number(Int)
    case flag(Bool)
    /// A list, written on one line in brackets when `flow` (`[a, b]`), else one item per line.
    case list([YAMLValue], flow: Bool)
    /// A mapping in the order given, on one line in braces when `flow` (`{ type: string }`).
    case map([(String, YAMLValue)], flow: Bool)

    /// A block mapping (one key per line).
    public static func map(_ pairs: [(String, YAMLValue)]) -> YAMLValue { .map(pairs, flow: false) }

    /// A flow list of texts (`[id, name]`).
    public static func texts(_ items: [String]) -> YAMLValue { .list(items.map(YAMLValue.text), flow: true) }

    /// The value with `transform` applied to every text in it (keys too).
    public func mappingTexts(_ transform: (String) -> String) -> YAMLValue {
        switch self {
        case .text(let text): return .text(transform(text))
        case .number, .flag: return self
        case .list(let items, let flow): return .list(items.map { $0.mappingTexts(transform) }, flow: flow)
        case .map(let pairs, let flow):
            return .map(pairs.map { (transform($0.0), $0.1.mappingTexts(transform)) }, flow: flow)
        }
    }

    /// The value as a Yams node.
    public var node: Node {
        switch self {
        case .text(let text): return .scalar(text.represented())
        case .number(let number): return .scalar(number.represented())
        case .flag(let flag): return .scalar(flag.represented())
        case .list(let items, let flow):
            return .sequence(Node.Sequence(items.map(\.node), .implicit, flow ? .flow : .block))
        case .map(let pairs, let flow):
            return .mapping(
                Node.Mapping(pairs.map { (.scalar($0.0.represented()), $0.1.node) }, .implicit, flow ? .flow : .block))
        }
    }

    /// The value as a YAML document, after `comment`'s lines (each written as a `#` comment).
    public func document(comment: String? = nil) -> String {
        let header = comment.map { $0.split(separator: "\n", omittingEmptySubsequences: false).map { "# \($0)\n" } }
        return (header?.joined() ?? "") + Self.text(of: node)
    }

    /// A node as YAML text: no line wrapping (a long name stays on its line), Unicode as is.
    public static func text(of node: Node) -> String {
        do {
            return try Yams.serialize(node: node, width: -1, allowUnicode: true)
        } catch {
            // Yams fails only on nodes libyaml cannot emit (an alias to nothing): none is built here.
            preconditionFailure("YAML that cannot be written: \(error)")
        }
    }
}
