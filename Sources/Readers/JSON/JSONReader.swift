import Foundation

/// Streams records out of JSON: one document (`format: json`, an array of objects, or the objects
/// of an array at a path) or JSON Lines (`format: jsonl`, one value a line), plain or gzipped.
///
/// The spec says where records are and what their fields are. `path` is the record path from the
/// root, `/`-separated member names (`/data/items`; `~1` is a `/` and `~0` a `~` in a name, as in
/// JSON Pointer; `/` is the root). Arrays on the way are looked through: `/pages/items` reads the
/// items of every page, and an array at the path gives one record per element (an object or
/// scalar there is one record). A field is a path inside its record, `.`-separated
/// (`customer.address.city`; `tags[0]` an element; `\.` a dot inside a name; `.` the record
/// itself); a path through an array without an index takes its first element. A child spec's path
/// names an array (or object) inside its parent record, each element a child record that follows
/// its parent with the parent's number in `parentRecord`.
///
/// Values are kept as written: a number is its digits, a string its decoded text, `true`/`false`
/// their words, an object or array its compact JSON text. A member the record leaves out is null;
/// `null` is null too, and says so (`Record.isStatedNull`). Memory is bounded by one record
/// (`ReaderLimits`); nothing recurses. A record whose value is faulty (a lone surrogate, invalid
/// UTF-8, a control character in a string, a member given twice, a too long number) is a
/// recoverable error at the fault, and the next record is read; malformed JSON ends a document,
/// and in JSON Lines passes over the rest of its line (a recoverable error).
///
/// ```swift
/// let spec = RecordSpec(path: "/data/orders", fields: [("id", "id"), ("city", "ship_to.city")],
///     children: [RecordSpec(path: "lines", kind: "lines", fields: [("sku", "sku"), ("qty", "qty")])])
/// let reader = try JSONReader(path: "orders.json", lines: false, spec: spec)
/// while let record = try reader.next() { print(record.kind ?? "order", record.strings) }
/// ```
public final class JSONReader: RecordReader {
    // `@exclusivity(unchecked)` on the mutable state below, as in XMLReader: every byte's work
    // touches it, a reader is used by one thread at a time, and nothing is passed `inout` across a
    // call that could reach it again.
    public let name: String
    let lines: Bool
    let limits: ReaderLimits
    let lastWins: Bool
    @exclusivity(unchecked) var scanner: JSONScanner
    let root: CompiledSpec
    private let recordPath: [[UInt8]]
    /// The containers open around the records (outside any record), innermost last.
    @exclusivity(unchecked) private var outer: [(isArray: Bool, depth: Int, first: Bool)] = []
    @exclusivity(unchecked) private var started = false
    /// JSON Lines: a line's value was begun (its line is not over).
    @exclusivity(unchecked) private var inLine = false
    /// The record path was reached (a document where it never is holds no records: an error).
    @exclusivity(unchecked) private var reachedPath = false
    @exclusivity(unchecked) private var recordNumber = 0
    @exclusivity(unchecked) private(set) var recordLine = 1
    @exclusivity(unchecked) private(set) var recordColumn = 1
    @exclusivity(unchecked) private var builder = RecordBuilder.forReader()
    @exclusivity(unchecked) private var ready: [Record?] = []
    @exclusivity(unchecked) private var readyIndex = 0
    @exclusivity(unchecked) private var scratch: [UInt8] = []

    /// - Parameters:
    ///   - lines: JSON Lines (one value a line) rather than one document.
    ///   - lastWins: a member given twice in one object is no error; the later one counts.
    public convenience init(
        path: String, lines: Bool, spec: RecordSpec, limits: ReaderLimits = .standard, lastWins: Bool = false
    ) throws {
        try self.init(source: try Input.open(path), lines: lines, spec: spec, limits: limits, lastWins: lastWins)
    }

    public init(
        source: ByteSource, lines: Bool, spec: RecordSpec, limits: ReaderLimits = .standard, lastWins: Bool = false
    ) throws {
        name = source.name
        self.lines = lines
        self.limits = limits
        self.lastWins = lastWins
        scanner = JSONScanner(source: source, lines: lines, limits: limits, allowsRepeatedMembers: lastWins)
        recordPath = try Self.recordPath(spec.path)
        root = try CompiledSpec(spec, file: source.name)
    }

    /// Checks a spec's paths (what `init` would refuse), without an input.
    /// - Throws: `ReaderError` (`.invalidOption`) naming the first bad path.
    public static func check(_ spec: RecordSpec) throws {
        _ = try recordPath(spec.path)
        _ = try CompiledSpec(spec, file: "")
    }

    public func next() throws -> Record? {
        while readyIndex == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
            guard try nextValue() else { return nil }
            try makeRecords()
        }
        defer { readyIndex += 1 }
        return ready[readyIndex].take()
    }

    /// A record's children follow it.
    public var nextMayBeChild: Bool { readyIndex < ready.count }

    // MARK: Finding records

    /// Reads on to the next record's value (into `scanner.tape`); `false` at the end of the input.
    /// - Throws: `ReaderError`: recoverable for a JSON Lines line that is not JSON (passed over).
    func nextValue() throws -> Bool {
        do {
            guard try findValue() else { return false }
            recordNumber += 1
            return true
        } catch let syntax as JSONScanner.Syntax {
            let position = SourcePosition(
                file: name, line: syntax.line, column: syntax.column, record: recordNumber + 1)
            guard lines else { throw ReaderError(.malformedJSON, syntax.message, at: position, recoverable: false) }
            try recoverLine()
            recordNumber += 1
            throw ReaderError(.malformedJSON, syntax.message, at: position)
        } catch is JSONScanner.TooLarge {
            let position = SourcePosition(file: name, line: recordLine, column: recordColumn, record: recordNumber + 1)
            if lines {
                try recoverLine()
                recordNumber += 1
            }
            throw limits.tooLarge("the record", at: position)
        }
    }

    /// JSON Lines: after an error, the reader goes on at the next line.
    private func recoverLine() throws {
        outer.removeAll()
        if inLine { try scanner.skipLine() }
        inLine = false
    }

    private func findValue() throws -> Bool {
        while true {
            guard let top = outer.last else {
                if lines {
                    if inLine { try endLine() }
                    if try !startLine() { return false }
                } else {
                    if started { return try endDocument() }
                    started = true
                    try scanner.skipByteOrderMark()
                    guard try scanner.nonBlank() != nil else { throw scanner.syntax("the input holds no JSON value") }
                }
                if try visit(depth: 0) {
                    if lines && outer.isEmpty { try endLine() }
                    return true
                }
                continue
            }
            let isArray = top.isArray
            var byte = try scanner.required(isArray ? "a value or ]" : "a member or }")
            // An empty container, or one whose last value was read, ends (after a comma a value must come).
            if byte == (isArray ? UInt8(ascii: "]") : UInt8(ascii: "}")) {
                scanner.advance()
                outer.removeLast()
                continue
            }
            if !top.first {
                guard byte == UInt8(ascii: ",") else {
                    throw scanner.syntax(scanner.unexpected(byte, expected: isArray ? ", or ]" : ", or }"))
                }
                scanner.advance()
                byte = try scanner.required(isArray ? "a value" : "a member name")
            }
            outer[outer.count - 1].first = false
            if isArray {
                if try visit(depth: top.depth) { return true }
            } else {
                let member = try scanner.memberNameBytes(at: byte)
                if top.depth < recordPath.count, member == recordPath[top.depth] {
                    if try visit(depth: top.depth + 1) { return true }
                } else {
                    try skipValue()
                }
            }
        }
    }

    /// JSON Lines: a line's value ended; only blanks may follow on its line.
    private func endLine() throws {
        if let byte = try scanner.nonBlank() {
            guard byte == 10 else {
                throw scanner.syntax("text after the line's value (JSON Lines holds one value a line)")
            }
            scanner.takeLineBreak()
        }
        inLine = false
    }

    /// JSON Lines: the start of the next line's value; `false` at the end of the input.
    private func startLine() throws -> Bool {
        while let byte = try scanner.nonBlank() {
            if byte == 10 {
                scanner.takeLineBreak()
                continue
            }
            // The line is begun before its byte order mark is looked at: an error there passes over
            // the line like any other (else a UTF-16 mark would be read again and again).
            inLine = true
            if scanner.line == 1 { try scanner.skipByteOrderMark() }
            return true
        }
        return false
    }

    /// A document's value ended: only blanks may follow, and the record path must have been there.
    private func endDocument() throws -> Bool {
        if let byte = try scanner.nonBlank() {
            throw scanner.syntax(
                scanner.unexpected(byte, expected: "the end of the input (the document's value ended)"))
        }
        guard reachedPath || recordPath.isEmpty else {
            throw ReaderError(
                .malformedJSON,
                "nothing in \(name) is at the record path \(root.path) (no member of that name where the path goes)",
                recoverable: false)
        }
        return false
    }

    /// A value at `depth` steps of the record path begins (the scanner at its first byte): an
    /// array is looked into, a record read, an object on the path entered, anything else passed
    /// over. `true` when a record's value was read.
    private func visit(depth: Int) throws -> Bool {
        let byte = try scanner.required("a value")
        if byte == UInt8(ascii: "[") || (byte == UInt8(ascii: "{") && depth < recordPath.count) {
            guard outer.count < limits.depth else {
                throw scanner.syntax("the value nests deeper than \(limits.depth) levels (the depth limit)")
            }
            if depth == recordPath.count { reachedPath = true }
            outer.append((byte == UInt8(ascii: "["), depth, true))
            scanner.advance()
            return false
        }
        guard depth == recordPath.count else {
            try skipValue()
            return false
        }
        reachedPath = true
        recordLine = scanner.line
        recordColumn = scanner.column
        try scanner.readValue()
        return true
    }

    /// Passes over a value outside the records (checked all the same).
    private func skipValue() throws {
        try scanner.readValue()
        if let fault = scanner.valueError {
            throw JSONScanner.Syntax(message: fault.message, line: fault.line, column: fault.column)
        }
    }

    /// `/data/items` → the member names `data`, `items` (`~1` is `/`, `~0` is `~`).
    static func recordPath(_ path: String) throws -> [[UInt8]] {
        guard path.hasPrefix("/") else {
            throw ReaderError(
                .invalidOption,
                "the record path \(path.debugDescription) must start at the root with / (like /data/items)")
        }
        return path.dropFirst().split(separator: "/", omittingEmptySubsequences: true).map {
            Array($0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~").utf8)
        }
    }

    // MARK: Making records

    /// The records of the value just read: its own, then its children's, depth first.
    private func makeRecords() throws {
        if let fault = scanner.valueError {
            throw ReaderError(
                .malformedJSON, fault.message,
                at: SourcePosition(file: name, line: fault.line, column: fault.column, record: recordNumber))
        }
        let tape = scanner.tape
        tape.nodes.withUnsafeBufferPointer { nodes in
            tape.bytes.withUnsafeBufferPointer { bytes in
                add(root, node: 0, number: recordNumber, parent: nil, JSONTapeView(nodes: nodes, bytes: bytes))
            }
        }
    }

    private func add(_ spec: CompiledSpec, node: Int, number: Int, parent: Int?, _ tape: JSONTapeView) {
        let line = recordLine + Int(tape.nodes[node].lineDelta)
        let column = tape.nodes[node].column
        builder.begin()
        for field in spec.fields {
            guard let found = tape.find(field, from: node, lastWins: lastWins) else {
                builder.addField(start: 0, end: 0, column: column, lineDelta: 0, isNull: true)
                continue
            }
            let value = tape.nodes[found]
            let lineDelta = Int(value.lineDelta - tape.nodes[node].lineDelta)
            let start = builder.length
            switch value.kind {
            case .null:
                builder.addField(
                    start: start, end: start, column: value.column, lineDelta: lineDelta, isNull: true,
                    isStatedNull: true)
                continue
            case .object, .array:
                scratch.removeAll(keepingCapacity: true)
                scanner.tape.writeJSON(of: found, into: &scratch, lastWins: lastWins)
                scratch.withUnsafeBufferPointer { builder.append($0.baseAddress!, $0.count) }
            case .string, .number, .literal:
                if value.end > value.start {
                    builder.append(tape.bytes.baseAddress! + Int(value.start), Int(value.end - value.start))
                }
            }
            builder.endField(
                start: start, column: value.column, lineDelta: lineDelta, isNull: false, isString: value.kind == .string
            )
        }
        var record = Record(
            context: spec.context, line: line, column: column, number: number, storage: builder.finish())
        record.parentRecord = parent
        ready.append(record)
        for child in spec.children {
            guard let found = tape.find(child.at, from: node, lastWins: lastWins) else { continue }
            for element in tape.elements(at: found) {
                recordNumber += 1
                add(child, node: element, number: recordNumber, parent: number, tape)
            }
        }
    }
}
