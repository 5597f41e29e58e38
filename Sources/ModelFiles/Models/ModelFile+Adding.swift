import Foundation
import Yams

extension ModelFile {
    /// A model file's text (YAML, or JSON, which YAML reads) with entities of another model file added
    /// after its own: how a store's model grows by the entities of a new input (`sluice import` into an
    /// existing store). The stored entities come first and keep their places; comments are not kept.
    /// - Returns: `nil` when either text is not a model file with an `entities` mapping, or
    ///   `other` lacks one of `names`.
    public static func adding(entities names: [String], from other: String, to text: String) -> String? {
        guard case .mapping(var root)? = try? Yams.compose(yaml: text),
            case .mapping(var entities)? = root["entities"],
            case .mapping(let root2)? = try? Yams.compose(yaml: other),
            case .mapping(let added)? = root2["entities"]
        else { return nil }
        for name in names {
            guard let entity = added[Node(name)], entities[Node(name)] == nil else { return nil }
            entities[Node(name)] = entity
        }
        root["entities"] = .mapping(entities)
        return try? Yams.serialize(node: .mapping(root))
    }
}
