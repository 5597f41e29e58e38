import Foundation

/// One JSON value read whole (a record with everything inside it), as a flat list of nodes in
/// document order: a container's members follow it, and `next` says where its last one ends. The
/// decoded bytes of strings, numbers as written and member names are in `bytes`.
struct JSONTape {
    enum Kind: UInt8 {
        case object, array, string, number, literal, null
    }

    struct Node {
        /// The line of the value's first byte, from the record's first line, and its 1-based column.
        var lineDelta: Int32
        var column: Int
        /// A scalar's bytes in `bytes` (a string decoded; a number or `true`/`false` as written).
        var start: Int32
        var end: Int32
        /// The index of the node after this value (after a container's last member).
        var next: Int32
        /// For a member of an object: its name in `bytes` (`nameStart < 0`: an array element or the root).
        var nameStart: Int32
        var nameEnd: Int32
        var nameHash: UInt32
        var kind: Kind
    }

    var nodes: [Node] = []
    var bytes: [UInt8] = []

    /// What the tape holds in memory: what `ReaderLimits.recordBytes` bounds.
    var size: Int { bytes.count + nodes.count * MemoryLayout<Node>.stride }

    mutating func removeAll() {
        nodes.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
    }

    /// The members (or elements) of container `index`, in order.
    func children(of index: Int) -> JSONTapeChildren { JSONTapeChildren(tape: self, index: index) }

    /// The name of member `index`, as text.
    func name(of index: Int) -> String {
        let node = nodes[index]
        guard node.nameStart >= 0 else { return "" }
        return String(decoding: bytes[Int(node.nameStart)..<Int(node.nameEnd)], as: UTF8.self)
    }

    /// FNV-1a of a member name.
    @inline(__always) static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return hash
    }

    static func hash(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBufferPointer { hash($0) } }

    /// The first member of object `index` whose name it holds twice, if any: names are compared
    /// by hash first (their bytes only when the hashes are equal), pair by pair for a few members,
    /// through a table of hashes for many.
    func repeatedMember(in index: Int) -> Int? {
        let end = Int(nodes[index].next)
        var count = 0
        var member = index + 1
        while member < end && count <= 16 {
            count += 1
            member = Int(nodes[member].next)
        }
        if count < 2 { return nil }
        if count <= 16 {
            var later = Int(nodes[index + 1].next)
            while later < end {
                var earlier = index + 1
                while earlier < later {
                    if sameName(earlier, later) { return later }
                    earlier = Int(nodes[earlier].next)
                }
                later = Int(nodes[later].next)
            }
            return nil
        }
        var seen: [UInt32: [Int]] = [:]
        for member in children(of: index) {
            let hash = nodes[member].nameHash
            if let earlier = seen[hash], earlier.contains(where: { sameName($0, member) }) { return member }
            seen[hash, default: []].append(member)
        }
        return nil
    }

    /// Whether members `a` and `b` have the same name.
    @inline(__always) private func sameName(_ a: Int, _ b: Int) -> Bool {
        let first = nodes[a], second = nodes[b]
        guard first.nameHash == second.nameHash, first.nameEnd - first.nameStart == second.nameEnd - second.nameStart
        else { return false }
        return bytes.withUnsafeBufferPointer { all in
            first.nameEnd == first.nameStart
                || memcmp(
                    all.baseAddress! + Int(first.nameStart), all.baseAddress! + Int(second.nameStart),
                    Int(first.nameEnd - first.nameStart)) == 0
        }
    }

    /// Writes value `index` as compact JSON text (strings escaped as JSON requires).
    /// With `lastWins`, a member whose name comes again later in its object is left out.
    func writeJSON(of index: Int, into out: inout [UInt8], lastWins: Bool = false) {
        var stack: [(closer: UInt8, end: Int)] = []
        var current = index
        let end = Int(nodes[index].next)
        while current < end {
            // Close the containers this node is past.
            while let last = stack.last, current >= last.end {
                out.append(last.closer)
                stack.removeLast()
            }
            let node = nodes[current]
            if lastWins, node.nameStart >= 0, current != index, let parentEnd = stack.last?.end {
                var later = Int(node.next)
                while later < parentEnd, !sameName(current, later) { later = Int(nodes[later].next) }
                if later < parentEnd {
                    current = Int(node.next)
                    continue
                }
            }
            // A value after another in its container takes a comma (a container's first follows its bracket).
            if !stack.isEmpty, out.last != UInt8(ascii: "{"), out.last != UInt8(ascii: "[") {
                out.append(UInt8(ascii: ","))
            }
            if node.nameStart >= 0, current != index {
                Self.writeString(bytes[Int(node.nameStart)..<Int(node.nameEnd)], into: &out)
                out.append(UInt8(ascii: ":"))
            }
            switch node.kind {
            case .object, .array:
                out.append(node.kind == .object ? UInt8(ascii: "{") : UInt8(ascii: "["))
                stack.append((node.kind == .object ? UInt8(ascii: "}") : UInt8(ascii: "]"), Int(node.next)))
            case .string: Self.writeString(bytes[Int(node.start)..<Int(node.end)], into: &out)
            case .number, .literal: out.append(contentsOf: bytes[Int(node.start)..<Int(node.end)])
            case .null: out.append(contentsOf: "null".utf8)
            }
            current += 1
        }
        while let last = stack.popLast() { out.append(last.closer) }
    }

    static func writeString(_ text: ArraySlice<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 10: out.append(contentsOf: "\\n".utf8)
            case 13: out.append(contentsOf: "\\r".utf8)
            case 9: out.append(contentsOf: "\\t".utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 15)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// A tape's nodes and bytes in place, while a record is made of them: fields found by path
/// without copies or reference counting.
struct JSONTapeView {
    let nodes: UnsafeBufferPointer<JSONTape.Node>
    let bytes: UnsafeBufferPointer<UInt8>

    /// The node a path leads to from `node`; `nil` when the record has none there. With
    /// `lastWins`, a name given twice finds its last member.
    func find(_ path: JSONReader.CompiledSpec.Path, from node: Int, lastWins: Bool) -> Int? {
        var current = node
        for step in path.steps {
            if step.element < 0 {
                while nodes[current].kind == .array {
                    guard Int(nodes[current].next) > current + 1 else { return nil }
                    current += 1  // the first element
                }
                guard nodes[current].kind == .object else { return nil }
                let end = Int(nodes[current].next)
                var member = current + 1, found = -1
                while member < end {
                    if isNamed(member, step) {
                        found = member
                        if !lastWins { break }
                    }
                    member = Int(nodes[member].next)
                }
                guard found >= 0 else { return nil }
                current = found
            } else {
                guard nodes[current].kind == .array else { return nil }
                let end = Int(nodes[current].next)
                var element = current + 1, place = 0
                while element < end, place < step.element {
                    element = Int(nodes[element].next)
                    place += 1
                }
                guard element < end else { return nil }
                current = element
            }
        }
        return current
    }

    @inline(__always) private func isNamed(_ index: Int, _ step: JSONReader.CompiledSpec.Path.Step) -> Bool {
        let node = nodes[index]
        guard node.nameHash == step.hash, node.nameStart >= 0, Int(node.nameEnd - node.nameStart) == step.length
        else { return false }
        return step.length == 0 || memcmp(bytes.baseAddress! + Int(node.nameStart), step.name, step.length) == 0
    }

    /// The values a child path found stands for: an array's elements (every one, null too; arrays
    /// in it looked through), an object or scalar itself, nothing for null.
    func elements(at index: Int) -> [Int] {
        switch nodes[index].kind {
        case .null: return []
        case .array:
            var found: [Int] = []
            let end = Int(nodes[index].next)
            var element = index + 1
            while element < end {
                if nodes[element].kind == .array {
                    found += elements(at: element)
                } else {
                    found.append(element)
                }
                element = Int(nodes[element].next)
            }
            return found
        default: return [index]
        }
    }
}

/// The members of one container of a tape.
struct JSONTapeChildren: Sequence, IteratorProtocol {
    let tape: JSONTape
    var current: Int
    let end: Int

    init(tape: JSONTape, index: Int) {
        self.tape = tape
        current = index + 1
        end = Int(tape.nodes[index].next)
    }

    mutating func next() -> Int? {
        guard current < end else { return nil }
        defer { current = Int(tape.nodes[current].next) }
        return current
    }
}
