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

    /// Whether the name of member `index` is `name` (with its hash).
    @inline(__always) func name(of index: Int, is name: [UInt8], hash: UInt32) -> Bool {
        let node = nodes[index]
        guard node.nameHash == hash, node.nameStart >= 0, Int(node.nameEnd - node.nameStart) == name.count else {
            return false
        }
        return bytes.withUnsafeBufferPointer { all in
            name.withUnsafeBufferPointer { wanted in
                wanted.isEmpty || memcmp(all.baseAddress! + Int(node.nameStart), wanted.baseAddress!, wanted.count) == 0
            }
        }
    }

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

    /// The first member of object `index` whose name it holds twice, if any.
    func repeatedMember(in index: Int) -> Int? {
        let members = Array(children(of: index))
        if members.count < 2 { return nil }
        if members.count <= 16 {
            for (place, member) in members.enumerated() {
                let node = nodes[member]
                for earlier in members[..<place]
                where name(of: earlier, is: Array(bytes[Int(node.nameStart)..<Int(node.nameEnd)]), hash: node.nameHash)
                {
                    return member
                }
            }
            return nil
        }
        var seen: [UInt32: [Int]] = [:]
        for member in members {
            let node = nodes[member]
            let name = Array(bytes[Int(node.nameStart)..<Int(node.nameEnd)])
            if let earlier = seen[node.nameHash],
                earlier.contains(where: { self.name(of: $0, is: name, hash: node.nameHash) })
            {
                return member
            }
            seen[node.nameHash, default: []].append(member)
        }
        return nil
    }

    /// Writes value `index` as compact JSON text (strings escaped as JSON requires).
    func writeJSON(of index: Int, into out: inout [UInt8]) {
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
            if let last = stack.last, current != last.end, out.last != UInt8(ascii: "{"), out.last != UInt8(ascii: "[")
            {
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
