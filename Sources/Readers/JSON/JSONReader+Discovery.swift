import Foundation

extension JSONReader {
    /// Proposes a record spec for the records at `recordPath` from every record (or the first
    /// `sampleRecords`; a member only the last record has is a field too): every scalar member a
    /// field (members of nested objects too, by path: `customer.address.city`, three objects
    /// deep), arrays of objects child records (their own members fields, their arrays children in
    /// turn), arrays of scalars child records of one field (`value`, the element itself). A member
    /// that is sometimes one shape and sometimes another, an array of arrays or of mixed values, or
    /// an object nested deeper is a field holding its JSON text.
    /// - Throws: `ReaderError` for unreadable or malformed input.
    public static func discoverSpec(
        path: String, lines: Bool, recordPath: String, sampleRecords: Int = .max, limits: ReaderLimits = .standard
    ) throws -> RecordSpec {
        let reader = try JSONReader(
            path: path, lines: lines, spec: RecordSpec(path: recordPath, fields: []), limits: limits)
        let shape = Shape()
        var records = 0
        while records < sampleRecords {
            do {
                guard try reader.nextValue() else { break }
            } catch let error as ReaderError where error.isRecoverable {
                continue
            }
            records += 1
            guard reader.scanner.valueError == nil else { continue }
            shape.observe(reader.scanner.tape, 0, prefix: "", depth: 0)
        }
        return shape.spec(path: recordPath, kind: nil)
    }

    /// The record path of a document read without one: `/` when its root is an array.
    /// - Throws: `recordPathNeeded(for:)` when the root is an object (`/` would make the whole
    ///   document one record); `ReaderError` when the file cannot be read.
    public static func defaultRecordPath(of path: String) throws -> String {
        guard path != "-" else { return "/" }  // standard input is not read twice
        let source = try Input.open(path)
        var head = [UInt8](repeating: 0, count: 4096)
        let count = try head.withUnsafeMutableBytes { try source.read(into: $0) }
        let first = head[..<count].first { ![32, 9, 10, 13, 0xEF, 0xBB, 0xBF].contains($0) }
        if first == UInt8(ascii: "{") { throw recordPathNeeded(for: path) }
        return "/"
    }

    /// The error for a JSON document whose root is an object, read without a record path: it
    /// names the arrays of objects inside (what `--record` could take) when the document is small
    /// enough to look at whole.
    public static func recordPathNeeded(for path: String, limits: ReaderLimits = .standard) -> ReaderError {
        var found: [String] = []
        if let reader = try? JSONReader(
            path: path, lines: false, spec: RecordSpec(path: "/", fields: []), limits: limits),
            (try? reader.nextValue()) == true
        {
            arrays(in: reader.scanner.tape, 0, path: "", into: &found)
        }
        let proposals = found.prefix(8).joined(separator: ", ")
        return ReaderError(
            .invalidOption,
            "the root of \(path) is an object: give --record, the path of the array whose elements are the records"
                + (found.isEmpty ? " (like /data/items)" : "; arrays of objects in it: \(proposals)"))
    }

    /// The paths of arrays of objects inside `node`, with how many elements each has.
    private static func arrays(in tape: JSONTape, _ node: Int, path: String, into found: inout [String]) {
        guard tape.nodes[node].kind == .object else { return }
        for member in tape.children(of: node) {
            let name = tape.name(of: member).replacingOccurrences(of: "~", with: "~0")
                .replacingOccurrences(of: "/", with: "~1")
            let memberPath = path + "/" + name
            if tape.nodes[member].kind == .array {
                let elements = Array(tape.children(of: member))
                if elements.contains(where: { tape.nodes[$0].kind == .object }) {
                    found.append("\(memberPath) (\(elements.count) elements)")
                }
            } else {
                arrays(in: tape, member, path: memberPath, into: &found)
            }
        }
    }

    /// What the sampled records hold, path by path (relative to the record).
    private final class Shape {
        enum Seen { case null, scalar, object, objects, scalars, empty, other }
        var paths: [String] = []
        var seen: [String: Set<Seen>] = [:]
        var children: [String: Shape] = [:]
        /// How many objects deep members become fields by path.
        static let depth = 3

        func note(_ path: String, _ what: Seen) {
            if seen[path] == nil { paths.append(path) }
            seen[path, default: []].insert(what)
        }

        func child(_ path: String) -> Shape {
            if let known = children[path] { return known }
            let made = Shape()
            children[path] = made
            return made
        }

        func observe(_ tape: JSONTape, _ node: Int, prefix: String, depth: Int) {
            guard tape.nodes[node].kind == .object else {
                note(".", tape.nodes[node].kind == .null ? .null : .scalar)
                return
            }
            for member in tape.children(of: node) {
                let name = tape.name(of: member).replacingOccurrences(of: "\\", with: "\\\\")
                    .replacingOccurrences(of: ".", with: "\\.").replacingOccurrences(of: "[", with: "\\[")
                let path = prefix.isEmpty ? name : prefix + "." + name
                switch tape.nodes[member].kind {
                case .null: note(path, .null)
                case .string, .number, .literal: note(path, .scalar)
                case .object:
                    if depth + 1 < Self.depth {
                        note(path, .object)
                        observe(tape, member, prefix: path, depth: depth + 1)
                    } else {
                        note(path, .other)
                    }
                case .array:
                    let elements = Array(tape.children(of: member))
                    let kinds = Set(elements.map { tape.nodes[$0].kind })
                    if elements.isEmpty {
                        note(path, .empty)
                    } else if kinds.isSubset(of: [.object, .null]) {
                        note(path, .objects)
                        let shape = child(path)
                        for element in elements where tape.nodes[element].kind == .object {
                            shape.observe(tape, element, prefix: "", depth: 0)
                        }
                    } else if kinds.isSubset(of: [.string, .number, .literal, .null]) {
                        note(path, .scalars)
                        child(path).note(".", .scalar)
                    } else {
                        note(path, .other)
                    }
                }
            }
        }

        /// The spec of what was seen: fields, then children.
        func spec(path: String, kind: String?) -> RecordSpec {
            var fields: [String] = [], childPaths: [String] = []
            // A path that is a field as a whole (its JSON text) takes what was seen inside it.
            var whole: [String] = []
            for path in paths {
                let what = seen[path, default: []].subtracting([.null])
                if whole.contains(where: { path.hasPrefix($0 + ".") }) { continue }
                if what.isEmpty || what == [.scalar] {
                    fields.append(path)
                } else if what == [.object] {
                    continue  // its members are fields of their own
                } else if what.isSubset(of: [.objects, .empty]) && what.contains(.objects)
                    || what.isSubset(of: [.scalars, .empty]) && what.contains(.scalars)
                {
                    childPaths.append(path)
                } else {
                    fields.append(path)
                    whole.append(path)
                }
            }
            var names: Set<String> = []
            let named = fields.map { path -> (name: String, path: String) in
                var name = path == "." ? "value" : Self.fieldName(path)
                let base = name
                var number = 2
                while !names.insert(name).inserted {
                    name = "\(base)_\(number)"
                    number += 1
                }
                return (name, path)
            }
            let nested = childPaths.map { childPath -> RecordSpec in
                // The kind names the child's entity and table after the array's own name.
                children[childPath]!.spec(path: childPath, kind: childPath.replacingOccurrences(of: ".", with: "/"))
            }
            return RecordSpec(path: path, kind: kind, fields: named, children: nested)
        }

        /// `customer.address.city` → `customer_address_city`.
        static func fieldName(_ path: String) -> String {
            path.replacingOccurrences(of: "\\.", with: "_").replacingOccurrences(of: ".", with: "_")
                .replacingOccurrences(of: "\\", with: "")
        }
    }
}
