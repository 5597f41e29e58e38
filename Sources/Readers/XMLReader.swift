import Drivers

/// Which elements of an XML document are records, and what their fields are.
///
/// Paths are `/`-separated element names, optionally `prefix:name` with the prefix bound in
/// `XMLReader`'s namespaces. A field is an attribute (`@id`, `customer/@ref`), the text of a child
/// element (`name`, `address/city`: all text inside it, CDATA included), or the record element's own
/// text (`.`). A missing attribute or element gives null; an empty one an empty string; when an element
/// repeats, the first one counts.
///
/// ```swift
/// let orders = XMLRecordSpec(path: "/orders/order",
///     fields: [("number", "@id"), ("placed", "placed"), ("city", "ship-to/city")],
///     children: [XMLRecordSpec(path: "line", kind: "line", fields: [("sku", "@sku"), ("qty", "@qty")])])
/// ```
public struct XMLRecordSpec: Sendable {
    /// Absolute (`/orders/order`) for top-level records; relative to the parent record for children.
    public var path: String
    /// The kind of record children are reported as (`Record.kind`).
    public var kind: String?
    public var fields: [(name: String, path: String)]
    /// Repeated elements inside each record, yielded as records of their own after it.
    public var children: [XMLRecordSpec]

    public init(
        path: String, kind: String? = nil, fields: [(name: String, path: String)], children: [XMLRecordSpec] = []
    ) {
        self.path = path
        self.kind = kind
        self.fields = fields
        self.children = children
    }
}

/// Streams records out of an XML document with libxml2's SAX2 push parser: constant memory whatever
/// the document's size, encodings as declared (or by byte order mark), no DTD, no network, no entity
/// expansion. Malformed XML is an error with line and column — never repaired.
///
/// Child records follow their parent record and carry its number in `parentRecord`. Each field's
/// position (`Record.position(ofField:)`) is where its element starts.
///
/// ```swift
/// var reader = try XMLReader(path: "orders.xml.gz", spec: orders)
/// while let record = try reader.next() { print(record.kind ?? "order", record.strings) }
/// ```
public final class XMLReader: XMLEventHandler, RecordReader {
    // How it works: every spec is compiled into one trie of element names (`Program`) whose names
    // are libxml2's own dictionary copies, so matching an element is comparing pointers. While
    // parsing, `entries` holds for every open element the trie nodes it reached, each with the record
    // (`Frame`) it belongs to; a node says which fields of its record the element's attributes and
    // text fill, and which records start at it. Fields are written straight into the record's buffer.
    //
    // `@exclusivity(unchecked)` on the state below: every parser event touches it, a reader is used
    // by one thread at a time (it is not Sendable), and no state is passed `inout` across a call that
    // could reach it again.
    private let source: ByteSource
    private let parser: XMLPushParser
    private let program: Program
    // Small chunks keep the queue of parsed records short and in cache (4 KB measured faster than
    // 8 KB and 32 KB on the medium data).
    @exclusivity(unchecked) private var chunk = [UInt8](repeating: 0, count: 1 << 12)
    @exclusivity(unchecked) private var finished = false
    @exclusivity(unchecked) private var ready: [Record?] = []
    @exclusivity(unchecked) private var readyIndex = 0
    @exclusivity(unchecked) private var recordNumber = 0

    /// The trie nodes reached by the open elements, innermost element last; `levels` has where each
    /// open element's entries start (the document's entry is level 0).
    @exclusivity(unchecked) private var entries = PlainStack<Entry>()
    @exclusivity(unchecked) private var levels = PlainStack<Int>()
    @exclusivity(unchecked) private var frames = FrameTable()
    /// Frames with an open text field: they take the text events.
    @exclusivity(unchecked) private var capturers = PlainStack<Int>()
    /// Finished child records waiting for their top-level record to end (they follow it).
    @exclusivity(unchecked) private var pending: [Pending] = []

    /// - Parameter namespaces: prefixes the paths use, bound to namespace URIs.
    /// - Throws: `ReaderError` when the file cannot be opened or a path uses an unbound prefix.
    public convenience init(path: String, spec: XMLRecordSpec, namespaces: [String: String] = [:]) throws {
        try self.init(source: try Input.open(path), specs: [spec], namespaces: namespaces)
    }

    /// Reads several kinds of top-level records in one pass (`/dataset/customers/customer`,
    /// `/dataset/orders/order`, ...), in document order.
    public convenience init(path: String, specs: [XMLRecordSpec], namespaces: [String: String] = [:]) throws {
        try self.init(source: try Input.open(path), specs: specs, namespaces: namespaces)
    }

    public init(source: ByteSource, specs: [XMLRecordSpec], namespaces: [String: String] = [:]) throws {
        self.source = source
        do {
            parser = try XMLPushParser(fileName: source.name)
        } catch {
            throw ReaderError(.malformedXML, "\(error)")
        }
        program = try Program(specs, namespaces: namespaces, file: source.name, parser: parser)
        frames.fieldCapacity = max(1, program.specs.map(\.fieldCount).max() ?? 1)
        levels.push(0)
        super.init()
        entries.push(Entry(frame: -1, node: 0, isRecord: false))
        parser.attach(self)
    }

    public func next() throws -> Record? {
        while readyIndex == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
            if finished { return nil }
            do {
                if try !parser.feedNextChunk(from: source, buffer: &chunk) { finished = true }
            } catch {
                finished = true
                ready.removeAll()
                throw error
            }
        }
        defer { readyIndex += 1 }
        // Handed over, not copied: the record's buffer can be reused as soon as the caller drops it.
        return ready[readyIndex].take()
    }

    // MARK: Events

    override public func startElement(
        localName: UnsafePointer<UInt8>, namespaceURI: UnsafePointer<UInt8>?,
        attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int
    ) {
        let from = levels.last, to = entries.count
        levels.push(to)
        var line = 0, column = 0
        for index in from..<to {
            let entry = entries[index]
            for edge in program.nodes[entry.node].edges {
                let target = program.edges[edge]
                guard target.name == localName, target.uri == namespaceURI else { continue }
                if line == 0 { (line, column) = (parser.line, parser.column) }
                enter(
                    target.node, frame: entry.frame, attributes: attributes, attributeCount: attributeCount, line: line,
                    column: column)
                break
            }
        }
    }

    override public func endElement() {
        let from = levels.removeLast()
        for index in from..<entries.count {
            let entry = entries[index]
            if entry.frame >= 0 { closeTexts(program.nodes[entry.node], frame: entry.frame) }
            if entry.isRecord { finish(entry.frame) }
        }
        entries.removeLast(entries.count - from)
    }

    override public func characters(_ text: UnsafeBufferPointer<UInt8>) {
        for index in 0..<capturers.count { frames[capturers[index]].builder.append(text.baseAddress!, text.count) }
    }

    /// The element reached `node` of `frame`'s trie: fill the node's fields, start its records.
    private func enter(
        _ node: Int, frame: Int, attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int, line: Int,
        column: Int
    ) {
        entries.push(Entry(frame: frame, node: node, isRecord: false))
        if frame >= 0 {
            fill(
                program.nodes[node], frame: frame, attributes: attributes, attributeCount: attributeCount, line: line,
                column: column)
        }
        for index in program.nodes[node].records {
            let spec = program.recordStarts[index]
            let record = frames.open(
                spec: spec, fieldCount: program.specs[spec].fieldCount, parent: frame, line: line, column: column)
            let root = program.specs[spec].root
            entries.push(Entry(frame: record, node: root, isRecord: true))
            fill(
                program.nodes[root], frame: record, attributes: attributes, attributeCount: attributeCount, line: line,
                column: column)
        }
    }

    /// Takes the node's attribute values, and opens its text fields (the first element of a field counts).
    private func fill(
        _ node: Program.Node, frame: Int, attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int,
        line: Int, column: Int
    ) {
        let fields = frames[frame].fields
        if let attributes {
            for index in node.attributes {
                let wanted = program.attributes[index]
                guard fields[wanted.field].start == FieldState.absent else { continue }
                for a in 0..<attributeCount {
                    let base = attributes + 5 * a
                    guard base[0] == wanted.name, base[2] == wanted.uri, let start = base[3], let end = base[4] else {
                        continue
                    }
                    let value = UnsafeBufferPointer(start: start, count: end - start)
                    if let decoded = XMLEventHandler.decodedAttributeValue(value) {
                        decoded.withUnsafeBufferPointer {
                            frames[frame].takeAttribute(field: wanted.field, value: $0, line: line, column: column)
                        }
                    } else {
                        frames[frame].takeAttribute(field: wanted.field, value: value, line: line, column: column)
                    }
                    break
                }
            }
        }
        for index in node.texts {
            let field = program.texts[index]
            guard fields[field].start == FieldState.absent else { continue }
            fields[field] = FieldState(
                start: frames[frame].builder.length, end: FieldState.open, line: line, column: column)
            frames[frame].openTexts += 1
            if frames[frame].openTexts == 1 { capturers.push(frame) }
        }
    }

    /// The element of `node` ended: its open text fields end here.
    private func closeTexts(_ node: Program.Node, frame: Int) {
        let fields = frames[frame].fields
        for index in node.texts {
            let field = program.texts[index]
            guard fields[field].end == FieldState.open else { continue }
            fields[field].end = frames[frame].builder.length
            frames[frame].openTexts -= 1
            if frames[frame].openTexts == 0 { capturers.remove(frame) }
        }
    }

    /// A record element ended: a top-level record is queued with its children, a child record waits
    /// for its top-level record.
    private func finish(_ frame: Int) {
        let spec = frames[frame].spec
        let storage = frames[frame].publish(fieldCount: program.specs[spec].fieldCount)
        let parent = frames[frame].parent
        if parent < 0 {
            recordNumber += 1
            ready.append(
                Record(
                    context: program.contexts[spec], line: frames[frame].line, column: frames[frame].column,
                    number: recordNumber, storage: storage))
            queueChildren(from: frames[frame].firstChild, parent: recordNumber)
        } else {
            pending.append(
                Pending(
                    storage: storage, spec: spec, line: frames[frame].line, column: frames[frame].column,
                    firstChild: frames[frame].firstChild))
            let index = pending.count - 1
            if frames[parent].lastChild >= 0 {
                pending[frames[parent].lastChild].next = index
            } else {
                frames[parent].firstChild = index
            }
            frames[parent].lastChild = index
        }
        frames.close(frame)
        if frames.openCount == 0 { pending.removeAll(keepingCapacity: true) }
    }

    /// Queues finished child records after their parent, depth first, numbering them in order.
    private func queueChildren(from first: Int, parent: Int) {
        var index = first
        while index >= 0 {
            recordNumber += 1
            let number = recordNumber, child = pending[index]
            var record = Record(
                context: program.contexts[child.spec], line: child.line, column: child.column, number: number,
                storage: child.storage)
            record.parentRecord = parent
            ready.append(record)
            queueChildren(from: child.firstChild, parent: number)
            index = child.next
        }
    }

    // MARK: State

    struct Entry {
        /// The record the node belongs to (-1: the document's trie).
        var frame: Int
        var node: Int
        /// Whether the element is the record's own element (the record ends with it).
        var isRecord: Bool
    }

    struct Pending {
        var storage: Record.Storage
        var spec: Int
        var line: Int
        var column: Int
        var firstChild: Int
        var next = -1
    }

    struct FieldState {
        static let absent = -1, open = -1, deferred = -2
        /// Byte range in the record's buffer; `start` is `absent` until the field is found, `end` is
        /// `open` while its element's text is being read.
        var start: Int
        var end: Int
        var line: Int
        var column: Int
    }

    /// One record being read.
    struct Frame {
        var spec = 0
        /// The frame of the record this one is a child of (-1: a top-level record).
        var parent = -1
        var line = 0
        var column = 0
        var builder: RecordBuilder
        var fields: UnsafeMutablePointer<FieldState>
        var openTexts = 0
        /// Finished child records, as a list through `Pending.next`.
        var firstChild = -1
        var lastChild = -1
        /// Attribute values found while a text field is open (they cannot go between its bytes).
        var deferred: [(field: Int, bytes: [UInt8])] = []

        mutating func takeAttribute(field: Int, value: UnsafeBufferPointer<UInt8>, line: Int, column: Int) {
            if openTexts > 0 {
                deferred.append((field, Array(value)))
                fields[field] = FieldState(
                    start: FieldState.deferred, end: FieldState.deferred, line: line, column: column)
                return
            }
            let start = builder.length
            if let base = value.baseAddress, value.count > 0 { builder.append(base, value.count) }
            fields[field] = FieldState(start: start, end: builder.length, line: line, column: column)
        }

        /// Ends the record: its fields in spec order, absent ones null.
        mutating func publish(fieldCount: Int) -> Record.Storage {
            for (field, bytes) in deferred {
                fields[field].start = builder.length
                bytes.withUnsafeBufferPointer { if $0.count > 0 { builder.append($0.baseAddress!, $0.count) } }
                fields[field].end = builder.length
            }
            deferred.removeAll(keepingCapacity: true)
            for index in 0..<fieldCount {
                let field = fields[index]
                if field.start < 0 {
                    builder.addField(start: 0, end: 0, column: column, lineDelta: 0, isNull: true)
                } else {
                    builder.addField(
                        start: field.start, end: field.end < 0 ? builder.length : field.end, column: field.column,
                        lineDelta: field.line - line, isNull: false)
                }
            }
            return builder.finish()
        }
    }

    /// The frames of the reader, reused: a closed frame keeps its field storage for the next record.
    struct FrameTable: ~Copyable {
        private var base: UnsafeMutablePointer<Frame>
        private var capacity = 8
        private var count = 0
        private var free = PlainStack<Int>()
        private(set) var openCount = 0
        var fieldCapacity = 1

        init() { base = .allocate(capacity: capacity) }

        deinit {
            for index in 0..<count { base[index].fields.deallocate() }
            base.deinitialize(count: count)
            base.deallocate()
        }

        subscript(index: Int) -> Frame {
            unsafeAddress { UnsafePointer(base + index) }
            nonmutating unsafeMutableAddress { base + index }
        }

        mutating func open(spec: Int, fieldCount: Int, parent: Int, line: Int, column: Int) -> Int {
            let index: Int
            if free.count > 0 {
                index = free.removeLast()
                base[index].builder.begin()
            } else {
                if count == capacity { base = doubled(base, count: count, capacity: &capacity) }
                index = count
                (base + index).initialize(to: Frame(builder: .forReader(), fields: .allocate(capacity: fieldCapacity)))
                count += 1
            }
            base[index].spec = spec
            base[index].parent = parent
            base[index].line = line
            base[index].column = column
            base[index].openTexts = 0
            base[index].firstChild = -1
            base[index].lastChild = -1
            base[index].fields.update(
                repeating: FieldState(start: FieldState.absent, end: FieldState.absent, line: 0, column: 0),
                count: fieldCount)
            openCount += 1
            return index
        }

        mutating func close(_ index: Int) {
            free.push(index)
            openCount -= 1
        }
    }

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

        init(_ roots: [XMLRecordSpec], namespaces: [String: String], file: String, parser: XMLPushParser) throws {
            var drafts = [Draft()]
            var specs: [Spec] = [], contexts: [Record.Context] = []

            func name(_ text: Substring, of path: String) throws -> (UnsafePointer<UInt8>, UnsafePointer<UInt8>?) {
                let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                var uri: UnsafePointer<UInt8>?
                if parts.count == 2 {
                    guard let bound = namespaces[String(parts[0])] else {
                        throw ReaderError(
                            .invalidOption,
                            "the path \(path.debugDescription) uses the namespace prefix \(parts[0]), which is not "
                                + "bound; bind it in the namespaces"
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

            func descend(from node: Int, _ steps: [Substring], of path: String) throws -> Int {
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

            func compile(_ spec: XMLRecordSpec, at node: Int) throws {
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

            for spec in roots {
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

            var nodes: [Node] = [], edges: [Edge] = [], attributes: [AttributeField] = [], texts: [Int] = [],
                recordStarts: [Int] = []
            for draft in drafts {
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
            (self.specs, self.contexts) = (specs, contexts)
        }
    }
}

/// A growable stack of plain values in one allocation: no copy-on-write checks on the per-event path.
struct PlainStack<Element: BitwiseCopyable>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    private var capacity = 16
    private(set) var count = 0

    init() { base = .allocate(capacity: capacity) }
    deinit { base.deallocate() }

    subscript(index: Int) -> Element { base[index] }
    var last: Element { base[count - 1] }

    mutating func push(_ element: Element) {
        if count == capacity { base = doubled(base, count: count, capacity: &capacity) }
        base[count] = element
        count += 1
    }

    mutating func removeLast() -> Element {
        count -= 1
        return base[count]
    }

    mutating func removeLast(_ n: Int) { count -= n }
}

/// Moves the `count` values at `base` into an allocation twice as large and frees the old one.
private func doubled<T>(_ base: UnsafeMutablePointer<T>, count: Int, capacity: inout Int) -> UnsafeMutablePointer<T> {
    let grown = UnsafeMutablePointer<T>.allocate(capacity: capacity * 2)
    grown.moveInitialize(from: base, count: count)
    base.deallocate()
    capacity *= 2
    return grown
}

extension PlainStack where Element: Equatable {
    /// Removes one occurrence of `element` (order is not kept).
    mutating func remove(_ element: Element) {
        for index in 0..<count where base[index] == element {
            base[index] = base[count - 1]
            count -= 1
            return
        }
    }
}

extension XMLPushParser {
    /// Reads the next chunk of `source` into the parser, ending the document at the end of the input.
    /// Returns `false` once the document has ended.
    /// - Throws: `ReaderError`: the source's I/O errors; malformed XML with line and column.
    public func feedNextChunk(from source: ByteSource, buffer: inout [UInt8]) throws -> Bool {
        let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
        do {
            if n == 0 {
                try finish()
                return false
            }
            try buffer.withUnsafeBytes { try feed(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
            return true
        } catch let error as XMLParseError {
            throw ReaderError(
                .malformedXML, error.message,
                at: SourcePosition(file: source.name, line: error.line, column: error.column))
        }
    }
}
