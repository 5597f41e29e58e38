import Drivers
import Foundation

extension XMLReader {
    /// Proposes a record spec for the elements at `recordPath` by looking at the first `sampleRecords`
    /// of them: the record element's attributes, the text and attributes of its child elements (and of
    /// their children), and child elements that repeat inside a record as child records.
    /// Elements are matched by local name (namespace prefixes are ignored here).
    /// - Throws: `ReaderError` for unreadable or malformed input, or when no element matches.
    public static func discoverSpec(
        path: String, recordPath: String, sampleRecords: Int = 1000, limits: ReaderLimits = .standard
    ) throws -> RecordSpec {
        let source = try Input.open(path)
        // Elements are compared by local name: a step's namespace prefix (`p:order`) is left out here.
        let steps = recordPath.split(separator: "/").map { String($0.split(separator: ":").last ?? $0) }
        let discovery = Discovery(recordPath: steps, limit: sampleRecords, maxRecordBytes: limits.recordBytes)
        let parser: XMLPushParser
        do { parser = try XMLPushParser(handler: discovery, fileName: source.name) } catch {
            throw ReaderError(.malformedXML, "\(error)", underlying: error)
        }
        discovery.parser = parser
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while !discovery.isDone, try parser.feedNextChunk(from: source, buffer: &chunk) {}
        if let line = discovery.tooLargeAt {
            throw limits.tooLarge(
                "the record", at: SourcePosition(file: source.name, line: line, column: 1, record: discovery.records))
        }
        guard discovery.records > 0 else {
            throw ReaderError(.invalidOption, "no element of \(path) matches the record path \(recordPath)")
        }
        // Repeated elements inside another repeated one stay with the outer one's records.
        let repeated = discovery.repeated.filter { path in
            !discovery.repeated.contains { path.hasPrefix($0 + "/") }
        }
        var fields: [(name: String, path: String)] = discovery.fields.filter { field in
            !repeated.contains(where: { field == $0 || field.hasPrefix($0 + "/") })
        }.map { (fieldName($0), $0) }
        fields.sort { $0.path < $1.path }
        let children = repeated.sorted().map { child in
            // The repeated element's own text (`<tag>x</tag>`) is a field of the child record too.
            let own: [(name: String, path: String)] =
                discovery.fields.contains(child) ? [(fieldName(String(child.split(separator: "/").last!)), ".")] : []
            return RecordSpec(
                path: child, kind: child,
                fields: own
                    + discovery.fields.filter { $0.hasPrefix(child + "/") }.sorted().map { field in
                        let relative = String(field.dropFirst(child.count + 1))
                        return (fieldName(relative), relative)
                    })
        }
        return RecordSpec(path: recordPath, fields: fields, children: children)
    }

    /// `@id` → `id`, `ship-to/city` → `ship-to_city`.
    static func fieldName(_ path: String) -> String {
        path.replacingOccurrences(of: "@", with: "").replacingOccurrences(of: "/", with: "_")
    }

    private final class Discovery: XMLEventHandler {
        let recordPath: [String]
        let limit: Int
        var stack: [String] = []
        var records = 0
        /// Field paths relative to the record element (`@a`, `b`, `b/@c`, `b/d`), in first-seen order.
        var fields: [String] = []
        var repeated: Set<String> = []
        /// For each open element inside a record (the record's own first): the names of its children so far.
        var seenChildren: [Set<String>] = []
        var hasText: [Bool] = []
        /// How deep inside a record fields are looked for: a record's children, grandchildren (a
        /// wrapper's repeated elements, `variants/variant`) and their children.
        static let depth = 3
        var isDone = false

        /// The text a record may hold (`ReaderLimits`), what the current one holds so far, and the
        /// line of the record that held more (the discovery then stops).
        let maxRecordBytes: Int
        var recordBytes = 0
        var recordLine = 0
        var tooLargeAt: Int?
        weak var parser: XMLPushParser?

        init(recordPath: [String], limit: Int, maxRecordBytes: Int) {
            self.recordPath = recordPath
            self.limit = limit
            self.maxRecordBytes = maxRecordBytes
        }

        /// How many of the open elements, outermost first, match the record path's steps (at most
        /// all of them): kept as elements open and close, so an event costs the same at any depth.
        private var matching = 0

        /// The open elements inside a record, from the record's (empty: the record element itself);
        /// `nil` outside records and deeper than `depth` (nothing is looked for there).
        private var relative: [String]? {
            guard matching == recordPath.count, stack.count >= matching, stack.count - matching <= Self.depth + 1
            else { return nil }
            return Array(stack[matching...])
        }

        private func note(_ field: String) { if !fields.contains(field) { fields.append(field) } }

        override func startElement(
            localName: UnsafePointer<UInt8>, namespaceURI: UnsafePointer<UInt8>?,
            attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int
        ) {
            let name = String(cString: localName)
            if matching == stack.count, matching < recordPath.count, recordPath[matching] == name { matching += 1 }
            stack.append(name)
            hasText.append(false)
            guard let relative, relative.count <= Self.depth else { return }
            if relative.isEmpty {
                records += 1
                recordBytes = 0
                recordLine = parser?.line ?? 0
                seenChildren = []
            } else if relative.count < Self.depth, !seenChildren.isEmpty {
                // A name twice under one parent: a repeated element (a child entity, not a field).
                if !seenChildren[seenChildren.count - 1].insert(relative.last!).inserted {
                    repeated.insert(relative.joined(separator: "/"))
                }
            }
            if relative.count < Self.depth { seenChildren.append([]) }
            let prefix = relative.joined(separator: "/")
            for a in 0..<attributeCount {
                guard let name = attributes?[5 * a] else { continue }
                note((prefix.isEmpty ? "" : prefix + "/") + "@" + String(cString: name))
            }
        }

        override func endElement() {
            if let relative, !relative.isEmpty, relative.count <= Self.depth, hasText.last == true {
                note(relative.joined(separator: "/"))
            }
            if let relative, relative.count < Self.depth, !seenChildren.isEmpty { seenChildren.removeLast() }
            if relative?.isEmpty == true, records >= limit { isDone = true }
            if matching == stack.count { matching -= 1 }
            stack.removeLast()
            hasText.removeLast()
        }

        override func characters(_ text: UnsafeBufferPointer<UInt8>) {
            if matching == recordPath.count, stack.count >= matching {
                recordBytes += text.count
                if recordBytes > maxRecordBytes, tooLargeAt == nil {
                    tooLargeAt = recordLine
                    isDone = true
                }
            }
            if !hasText.isEmpty, text.contains(where: { $0 != 32 && $0 != 10 && $0 != 9 && $0 != 13 }) {
                hasText[hasText.count - 1] = true
            }
        }
    }
}
