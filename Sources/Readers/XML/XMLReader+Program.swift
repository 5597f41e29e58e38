import Drivers

extension XMLReader {
    // MARK: Compiled specs

    /// All specs of a reader as one trie of element names: node 0 is the document, each spec has a
    /// node for its record element, and below it the elements its fields and child records name.
    final class Program {
        struct Node {
            /// Child elements that lead somewhere (indices into `edges`).
            var edges: Range<Int> = 0..<0
            /// Fields filled from the element's attributes (into `attributes`) or text (into `texts`).
            var attributes: Range<Int> = 0..<0
            var texts: Range<Int> = 0..<0
            /// Specs whose records are this element (into `recordStarts`).
            var records: Range<Int> = 0..<0
        }

        /// Names are the parser's dictionary copies (see `XMLPushParser.intern`).
        struct Edge {
            let name: UnsafePointer<UInt8>
            let uri: UnsafePointer<UInt8>?
            let node: Int
        }

        struct AttributeField {
            let name: UnsafePointer<UInt8>
            let uri: UnsafePointer<UInt8>?
            let field: Int
        }

        struct Spec {
            /// The node of the record element.
            let root: Int
            let fieldCount: Int
        }

        let nodes: [Node]
        let edges: [Edge]
        let attributes: [AttributeField]
        let texts: [Int]
        let recordStarts: [Int]
        let specs: [Spec]
        let contexts: [Record.Context]

        private struct Draft {
            var edges: [Edge] = []
            var attributes: [AttributeField] = []
            var texts: [Int] = []
            var records: [Int] = []
        }

        init(_ roots: [RecordSpec], namespaces: [String: String], file: String, parser: XMLPushParser) throws {
            var compiler = Compiler(namespaces: namespaces, file: file, parser: parser)
            for spec in roots { try compiler.compileRoot(spec) }
            var nodes: [Node] = [], edges: [Edge] = [], attributes: [AttributeField] = [], texts: [Int] = [],
                recordStarts: [Int] = []
            for draft in compiler.drafts {
                var node = Node()
                node.edges = edges.count..<(edges.count + draft.edges.count)
                edges += draft.edges
                node.attributes = attributes.count..<(attributes.count + draft.attributes.count)
                attributes += draft.attributes
                node.texts = texts.count..<(texts.count + draft.texts.count)
                texts += draft.texts
                node.records = recordStarts.count..<(recordStarts.count + draft.records.count)
                recordStarts += draft.records
                nodes.append(node)
            }
            (self.nodes, self.edges, self.attributes, self.texts, self.recordStarts) = (
                nodes, edges, attributes, texts, recordStarts
            )
            (self.specs, self.contexts) = (compiler.specs, compiler.contexts)
        }

        /// Compiles specs into the trie as drafts, one per node, each with lists of its own (`init`
        /// then lays them end to end).
        private struct Compiler {
            let namespaces: [String: String]
            let file: String
            let parser: XMLPushParser
            var drafts = [Draft()]
            var specs: [Spec] = []
            var contexts: [Record.Context] = []

            init(namespaces: [String: String], file: String, parser: XMLPushParser) {
                self.namespaces = namespaces
                self.file = file
                self.parser = parser
            }

            /// A top-level spec: its path is absolute.
            mutating func compileRoot(_ spec: RecordSpec) throws {
                let steps = spec.path.split(separator: "/")
                guard spec.path.hasPrefix("/") else {
                    throw ReaderError(
                        .invalidOption, "the record path \(spec.path.debugDescription) must be absolute (start with /)")
                }
                guard !steps.isEmpty else {
                    throw ReaderError(.invalidOption, "the record path \(spec.path.debugDescription) names no element")
                }
                try compile(spec, at: try descend(from: 0, steps, of: spec.path))
            }

            /// A spec whose record element is `node`: its fields, then its child records' specs.
            mutating func compile(_ spec: RecordSpec, at node: Int) throws {
                let number = specs.count
                drafts.append(Draft())
                let root = drafts.count - 1
                drafts[node].records.append(number)
                specs.append(Spec(root: root, fieldCount: spec.fields.count))
                contexts.append(
                    Record.Context(file: file, schema: RecordSchema(names: spec.fields.map(\.name)), kind: spec.kind))
                for (index, field) in spec.fields.enumerated() {
                    var steps = field.path.split(separator: "/")
                    var attribute: Substring?
                    if let last = steps.last, last.hasPrefix("@") {
                        attribute = last.dropFirst()
                        steps.removeLast()
                    }
                    if steps == ["."] { steps = [] }
                    let target = try descend(from: root, steps, of: field.path)
                    if let attribute {
                        let (local, uri) = try name(attribute, of: field.path)
                        drafts[target].attributes.append(AttributeField(name: local, uri: uri, field: index))
                    } else {
                        drafts[target].texts.append(index)
                    }
                }
                for child in spec.children {
                    let steps = child.path.split(separator: "/")
                    guard !child.path.hasPrefix("/"), !steps.isEmpty else {
                        throw ReaderError(
                            .invalidOption,
                            "the child record path \(child.path.debugDescription) must name elements below its parent "
                                + "record's element"
                        )
                    }
                    try compile(child, at: try descend(from: root, steps, of: child.path))
                }
            }

            /// The node `steps` lead to from `node`, made as needed.
            mutating func descend(from node: Int, _ steps: [Substring], of path: String) throws -> Int {
                var node = node
                for step in steps {
                    let (local, uri) = try name(step, of: path)
                    if let edge = drafts[node].edges.first(where: { $0.name == local && $0.uri == uri }) {
                        node = edge.node
                    } else {
                        drafts.append(Draft())
                        drafts[node].edges.append(Edge(name: local, uri: uri, node: drafts.count - 1))
                        node = drafts.count - 1
                    }
                }
                return node
            }

            /// An element or attribute name of `path`, `prefix:name` or `name`, as the parser's copies of its
            /// local name and namespace URI.
            func name(_ text: Substring, of path: String) throws -> (UnsafePointer<UInt8>, UnsafePointer<UInt8>?) {
                let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                var uri: UnsafePointer<UInt8>?
                if parts.count == 2 {
                    guard let bound = namespaces[String(parts[0])] else {
                        throw ReaderError(
                            .invalidOption,
                            "the path \(path.debugDescription) uses the namespace prefix \(parts[0]), which is not "
                                + "bound; bind it (`--namespace \(parts[0])=URI`, or `namespaces:` in the pipeline)"
                        )
                    }
                    guard let interned = parser.intern(bound) else {
                        throw ReaderError(.invalidOption, "the namespace prefix \(parts[0]) is bound to an empty URI")
                    }
                    uri = interned
                }
                guard let local = parser.intern(String(parts[parts.count - 1])) else {
                    throw ReaderError(.invalidOption, "the path \(path.debugDescription) has an empty name")
                }
                return (local, uri)
            }
        }
    }
}
