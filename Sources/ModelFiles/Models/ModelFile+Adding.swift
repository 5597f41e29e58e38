import Foundation
import Yams

extension ModelFile {
    /// A model file's text (YAML, or JSON, which YAML reads) grown by parts of another model file:
    /// whole entities (added after its own, which keep their places) and attributes of its own
    /// entities (added as optional) — how a store's model grows by a new input (`sluice import` into
    /// an existing store). Comments are not kept.
    /// - Returns: `nil` when either text is not a model file with an `entities` mapping, or `other`
    ///   lacks a part asked for, or `text` has it already.
    public static func growing(
        _ text: String, by other: String, entities names: [String], attributes: [String: [String]] = [:]
    ) -> String? {
        guard case .mapping(var root)? = try? Yams.compose(yaml: text),
            case .mapping(var entities)? = root["entities"],
            case .mapping(let otherRoot)? = try? Yams.compose(yaml: other),
            case .mapping(let added)? = otherRoot["entities"]
        else { return nil }
        for (entity, attributeNames) in attributes.sorted(by: { $0.key < $1.key }) {
            guard case .mapping(var body)? = entities[Node(entity)], case .mapping(let source)? = added[Node(entity)],
                case .mapping(let sourceAttributes)? = source["attributes"]
            else { return nil }
            var own: Node.Mapping
            switch body["attributes"] {
            case .mapping(let mapping)?: own = mapping
            case nil, .scalar?: own = Node.Mapping([])  // `attributes:` with none
            default: return nil
            }
            for name in attributeNames {
                guard own[Node(name)] == nil, let attribute = sourceAttributes[Node(name)] else { return nil }
                own[Node(name)] = optional(attribute)
            }
            body["attributes"] = .mapping(own)
            entities[Node(entity)] = .mapping(body)
        }
        for name in names {
            guard let entity = added[Node(name)], entities[Node(name)] == nil else { return nil }
            entities[Node(name)] = entity
        }
        root["entities"] = .mapping(entities)
        return YAMLValue.text(of: .mapping(root))
    }

    /// An attribute's definition made optional (`integer64!` → `integer64`, `optional: false` left out):
    /// rows stored before it have no value for it.
    private static func optional(_ attribute: Node) -> Node {
        switch attribute {
        case .scalar(let scalar) where scalar.string.hasSuffix("!"):
            return Node(String(scalar.string.dropLast()))
        case .mapping(var mapping):
            mapping[Node("optional")] = nil
            return .mapping(mapping)
        default:
            return attribute
        }
    }
}
