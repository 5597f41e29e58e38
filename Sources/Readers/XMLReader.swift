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

    public init(path: String, kind: String? = nil, fields: [(name: String, path: String)], children: [XMLRecordSpec] = []) {
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
/// Child records follow their parent record and carry its number in `parentRecord`.
///
/// ```swift
/// var reader = try XMLReader(path: "orders.xml.gz", spec: orders)
/// while let record = try reader.next() { print(record.kind ?? "order", record.strings) }
/// ```
public final class XMLReader: RecordReader, XMLEventHandler {
    // `@exclusivity(unchecked)` on the state below and in `Frame`: every parser event touches it, a
    // reader is used by one thread at a time (it is not Sendable), and no state is passed `inout`
    // across a call that could reach it again.
    private let source: ByteSource
    @exclusivity(unchecked) private var parser: XMLPushParser!
    private let roots: [CompiledSpec]
    // Small chunks keep the queue of parsed records short, so their buffers come back for reuse soon.
    @exclusivity(unchecked) private var chunk = [UInt8](repeating: 0, count: 1 << 13)
    @exclusivity(unchecked) private var finished = false
    @exclusivity(unchecked) private var ready: [Record?] = []
    @exclusivity(unchecked) private var readyIndex = 0
    @exclusivity(unchecked) private var recordNumber = 0

    // Streaming match of the top-level record path.
    @exclusivity(unchecked) private var depth = 0
    /// For each top-level spec: how many levels of the current element path match its path.
    @exclusivity(unchecked) private var matchedDepths: [Int]
    /// Records being read, outermost first.
    @exclusivity(unchecked) private var frames: [Frame] = []
    /// Free frames, by `CompiledSpec.number`.
    @exclusivity(unchecked) private var pools: [[Frame]]
    /// Grows up to 512 as records queue up; small documents allocate few.
    @exclusivity(unchecked) private var builders: [RecordBuilder] = []
    @exclusivity(unchecked) private var builderTurn = -1

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
        for spec in specs where !spec.path.hasPrefix("/") {
            throw ReaderError(.invalidOption, "the record path \(spec.path.debugDescription) must be absolute (start with /)")
        }
        var count = 0
        roots = try specs.map { try CompiledSpec($0, namespaces: namespaces, file: source.name, count: &count) }
        pools = Array(repeating: [], count: count)
        matchedDepths = Array(repeating: 0, count: specs.count)
        do {
            parser = try XMLPushParser(handler: self, fileName: source.name)
        } catch {
            throw ReaderError(.malformedXML, "\(error)")
        }
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

    public func startElement(localName: UnsafePointer<UInt8>, namespaceURI: UnsafePointer<UInt8>?,
                             attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int) {
        depth += 1
        let name = Name(localName: localName, uri: namespaceURI)
        let line = parser.line, column = parser.column
        for index in frames.indices { frames[index].start(name, attributes: attributes, attributeCount: attributeCount, line: line, column: column, reader: self) }
        for (index, root) in roots.enumerated() where matchedDepths[index] == depth - 1 && depth <= root.steps.count {
            guard root.steps[depth - 1].matches(name) else { continue }
            matchedDepths[index] = depth
            if depth == root.steps.count {
                let frame = makeFrame(root, line: line, column: column)
                frame.begin(attributes: attributes, attributeCount: attributeCount)
                frames.append(frame)
            }
        }
    }

    public func endElement() {
        for index in frames.indices { frames[index].end(reader: self) }
        if let top = frames.last, top.relativeDepth < 0 {
            frames.removeLast()
            emit(top, parent: nil)
        }
        for index in matchedDepths.indices where matchedDepths[index] == depth { matchedDepths[index] -= 1 }
        depth -= 1
    }

    public func characters(_ text: UnsafeBufferPointer<UInt8>) {
        for index in frames.indices { frames[index].characters(text) }
    }

    /// Queues a finished top-level record, then its children (depth first), numbering them in order.
    private func emit(_ frame: Frame, parent: Int?) {
        recordNumber += 1
        let number = recordNumber
        // Builders take turns, so a buffer is reused once the record made in it a few turns ago is gone.
        builderTurn += 1
        if builderTurn == builders.count {
            if builders.count < 512 { builders.append(RecordBuilder()) } else { builderTurn = 0 }
        }
        builders[builderTurn].begin()
        for index in frame.present.indices {
            let start = builders[builderTurn].length
            if frame.present[index], !frame.bytes[index].isEmpty {
                frame.bytes[index].withUnsafeBufferPointer { builders[builderTurn].append($0.baseAddress!, $0.count) }
            }
            builders[builderTurn].endField(start: start, column: frame.column, lineDelta: 0, isNull: !frame.present[index])
        }
        var record = Record(context: frame.spec.context, line: frame.line, column: frame.column, number: number, buffer: builders[builderTurn].finish())
        record.parentRecord = parent
        ready.append(record)
        for child in frame.finishedChildren { emit(child, parent: number) }
        recycle(frame)
    }

    /// A frame for `spec`, reused from the pool when one is free (frames keep their arrays' capacity).
    func makeFrame(_ spec: CompiledSpec, line: Int, column: Int) -> Frame {
        if let frame = pools[spec.number].popLast() {
            frame.reset(line: line, column: column)
            return frame
        }
        return Frame(spec: spec, line: line, column: column)
    }

    private func recycle(_ frame: Frame) {
        frame.finishedChildren.removeAll(keepingCapacity: true)
        pools[frame.spec.number].append(frame)
    }

    // MARK: Compiled paths

    struct Name {
        let localName: UnsafePointer<UInt8>
        let uri: UnsafePointer<UInt8>?
    }

    /// One name of a path, as pointers into its spec's `NameStorage`: matching an element copies no
    /// arrays (and so costs no reference counting) on the per-element path.
    ///
    /// `@unchecked Sendable`: the bytes are written once, before the spec is used, and live as long
    /// as the spec that owns the storage (steps never leave it).
    struct Step: @unchecked Sendable {
        let localName: UnsafePointer<UInt8>
        let localCount: Int
        let uri: UnsafePointer<UInt8>?
        let uriCount: Int

        func matches(_ name: Name) -> Bool {
            guard equalsNULTerminated(localName, localCount, name.localName) else { return false }
            switch (uri, name.uri) {
            case (nil, nil): return true
            case let (expected?, actual?): return equalsNULTerminated(expected, uriCount, actual)
            default: return false
            }
        }

        func matchesAttribute(localName: UnsafePointer<UInt8>, uri: UnsafePointer<UInt8>?) -> Bool {
            matches(Name(localName: localName, uri: uri))
        }
    }

    struct FieldPath {
        /// Elements below the record element (empty: the record element itself).
        let elements: [Step]
        /// The attribute, or `nil` for text.
        let attribute: Step?
    }

    /// Owns the bytes of a spec's names.
    ///
    /// `@unchecked Sendable`: `blocks` is appended to only while the spec is being compiled.
    final class NameStorage: @unchecked Sendable {
        private var blocks: [UnsafeMutablePointer<UInt8>] = []

        func intern(_ bytes: some Collection<UInt8>) -> (UnsafePointer<UInt8>, Int) {
            let block = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count + 1)
            var i = 0
            for byte in bytes { block[i] = byte; i += 1 }
            block[i] = 0
            blocks.append(block)
            return (UnsafePointer(block), bytes.count)
        }

        deinit { for block in blocks { block.deallocate() } }
    }

    final class CompiledSpec: Sendable {
        let storage: NameStorage
        let steps: [Step]
        let fields: [FieldPath]
        /// For each depth below the record element: the fields whose element path has that length.
        let fieldsByDepth: [[Int]]
        let children: [CompiledSpec]
        let context: Record.Context
        /// The spec's position among all specs of the reader (children included).
        let number: Int

        init(_ spec: XMLRecordSpec, namespaces: [String: String], file: String, count: inout Int) throws {
            number = count
            count += 1
            let storage = NameStorage()
            self.storage = storage
            func step(_ text: Substring) throws -> Step {
                let parts = text.split(separator: ":", maxSplits: 1)
                if parts.count == 2 {
                    guard let uri = namespaces[String(parts[0])] else {
                        throw ReaderError(.invalidOption, "the path \(spec.path.debugDescription) uses the namespace prefix \(parts[0]), which is not bound; bind it in the namespaces")
                    }
                    let (name, count) = storage.intern(parts[1].utf8), (uriBytes, uriCount) = storage.intern(uri.utf8)
                    return Step(localName: name, localCount: count, uri: uriBytes, uriCount: uriCount)
                }
                let (name, count) = storage.intern(text.utf8)
                return Step(localName: name, localCount: count, uri: nil, uriCount: 0)
            }
            steps = try spec.path.split(separator: "/").map(step)
            guard !steps.isEmpty else { throw ReaderError(.invalidOption, "the record path \(spec.path.debugDescription) names no element") }
            fields = try spec.fields.map { field in
                var parts = field.path.split(separator: "/")
                var attribute: Step?
                if let last = parts.last, last.hasPrefix("@") {
                    attribute = try step(last.dropFirst())
                    parts.removeLast()
                }
                if parts == ["."] { parts = [] }
                return FieldPath(elements: try parts.map(step), attribute: attribute)
            }
            let depths = fields.map(\.elements.count)
            fieldsByDepth = (0...(depths.max() ?? 0)).map { depth in depths.indices.filter { depths[$0] == depth } }
            var children: [CompiledSpec] = []
            for child in spec.children { children.append(try CompiledSpec(child, namespaces: namespaces, file: file, count: &count)) }
            self.children = children
            context = Record.Context(file: file, schema: RecordSchema(names: spec.fields.map(\.name)), kind: spec.kind)
        }
    }

    /// One record being read: its fields so far and where inside it the parser is.
    final class Frame {
        let spec: CompiledSpec
        @exclusivity(unchecked) var line: Int
        @exclusivity(unchecked) var column: Int
        /// Each field's bytes, and whether it was found (absent fields are null).
        @exclusivity(unchecked) var bytes: [[UInt8]]
        @exclusivity(unchecked) var present: [Bool]
        /// Element names below the record element, down to the current one.
        @exclusivity(unchecked) var path: [Name] = []
        /// Depth below the record element; -1 once the record element ended.
        @exclusivity(unchecked) var relativeDepth = 0
        /// For each field being captured as text: the depth its element started at.
        @exclusivity(unchecked) var capturing: [Int?]
        @exclusivity(unchecked) var children: [Frame] = []
        @exclusivity(unchecked) var finishedChildren: [Frame] = []

        init(spec: CompiledSpec, line: Int, column: Int) {
            self.spec = spec
            self.line = line
            self.column = column
            bytes = Array(repeating: [], count: spec.fields.count)
            present = Array(repeating: false, count: spec.fields.count)
            capturing = Array(repeating: nil, count: spec.fields.count)
        }

        func reset(line: Int, column: Int) {
            self.line = line
            self.column = column
            for index in bytes.indices where present[index] { bytes[index].removeAll(keepingCapacity: true) }
            present.withUnsafeMutableBufferPointer { $0.update(repeating: false) }
            capturing.withUnsafeMutableBufferPointer { $0.update(repeating: nil) }
            path.removeAll(keepingCapacity: true)
            relativeDepth = 0
            children.removeAll(keepingCapacity: true)
            finishedChildren.removeAll(keepingCapacity: true)
        }

        /// The record element itself started: its attributes and own text.
        func begin(attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int) {
            matchFields(attributes: attributes, attributeCount: attributeCount)
        }

        func start(_ name: Name, attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int, line: Int, column: Int, reader: XMLReader) {
            guard relativeDepth >= 0 else { return }
            for index in children.indices { children[index].start(name, attributes: attributes, attributeCount: attributeCount, line: line, column: column, reader: reader) }
            relativeDepth += 1
            path.append(name)
            matchFields(attributes: attributes, attributeCount: attributeCount)
            for childSpec in spec.children where childSpec.steps.count == path.count {
                if Self.matches(childSpec.steps, path) {
                    let child = reader.makeFrame(childSpec, line: line, column: column)
                    child.begin(attributes: attributes, attributeCount: attributeCount)
                    children.append(child)
                }
            }
        }

        static func matches(_ steps: [Step], _ path: [Name]) -> Bool {
            for i in 0..<steps.count where !steps[i].matches(path[i]) { return false }
            return true
        }

        private func matchFields(attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int) {
            guard path.count < spec.fieldsByDepth.count else { return }
            for index in spec.fieldsByDepth[path.count] where !present[index] {
                let field = spec.fields[index]
                guard Self.matches(field.elements, path) else { continue }
                if let attribute = field.attribute {
                    guard let attributes else { continue }
                    for a in 0..<attributeCount {
                        let base = attributes + 5 * a
                        guard let localName = base[0], attribute.matchesAttribute(localName: localName, uri: base[2]),
                              let start = base[3], let end = base[4] else { continue }
                        bytes[index].append(contentsOf: UnsafeBufferPointer(start: start, count: end - start))
                        present[index] = true
                        break
                    }
                } else {
                    present[index] = true
                    capturing[index] = path.count
                }
            }
        }

        func characters(_ text: UnsafeBufferPointer<UInt8>) {
            guard relativeDepth >= 0 else { return }
            for index in children.indices { children[index].characters(text) }
            for index in capturing.indices where capturing[index] != nil { bytes[index].append(contentsOf: text) }
        }

        func end(reader: XMLReader) {
            guard relativeDepth >= 0 else { return }
            for index in children.indices { children[index].end(reader: reader) }
            if let last = children.last, last.relativeDepth < 0 {
                children.removeLast()
                finishedChildren.append(last)
            }
            for index in capturing.indices where capturing[index] == path.count { capturing[index] = nil }
            if relativeDepth == 0 {
                relativeDepth = -1
                return
            }
            relativeDepth -= 1
            path.removeLast()
        }
    }
}

/// Whether `expected` equals the NUL-terminated `actual`.
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
            throw ReaderError(.malformedXML, error.message, at: SourcePosition(file: source.name, line: error.line, column: error.column))
        }
    }
}

/// Whether the `count` bytes at `expected` equal the NUL-terminated `actual`.
private func equalsNULTerminated(_ expected: UnsafePointer<UInt8>, _ count: Int, _ actual: UnsafePointer<UInt8>) -> Bool {
    var i = 0
    while i < count {
        if actual[i] != expected[i] { return false }
        i += 1
    }
    return actual[i] == 0
}
