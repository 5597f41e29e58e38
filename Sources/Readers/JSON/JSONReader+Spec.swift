extension JSONReader {
    /// A record spec made ready for reading: its paths parsed, its records' context made once.
    struct CompiledSpec {
        /// A field or child path: member names (with their hashes) and array elements.
        struct Path {
            /// A member's name (its bytes kept by `names`, for the reader's life) or an array's element.
            struct Step {
                let name: UnsafePointer<UInt8>
                let length: Int
                let hash: UInt32
                /// The element's index; -1 for a member.
                let element: Int
            }
            var steps: [Step]
        }

        /// The bytes of every name the paths hold (the steps point into them).
        final class Names {
            var blocks: [UnsafeMutableBufferPointer<UInt8>] = []
            func keep(_ name: [UInt8]) -> UnsafePointer<UInt8> {
                let block = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(name.count, 1))
                _ = block.initialize(from: name)
                blocks.append(block)
                return UnsafePointer(block.baseAddress!)
            }
            deinit { for block in blocks { block.deallocate() } }
        }

        let path: String
        let context: Record.Context
        let names: Names
        let fields: [Path]
        /// Where the children are in the parent record.
        let at: Path
        let children: [CompiledSpec]

        init(_ spec: RecordSpec, file: String, isChild: Bool = false, names: Names = Names()) throws {
            path = spec.path
            self.names = names
            context = Record.Context(
                file: file, schema: RecordSchema(names: spec.fields.map(\.name)), kind: spec.kind, isTyped: true)
            fields = try spec.fields.map { try Self.path($0.path, names: names) }
            if isChild {
                guard !spec.path.isEmpty, spec.path != "." else {
                    throw ReaderError(
                        .invalidOption,
                        "the child record path \(spec.path.debugDescription) names nothing in its record")
                }
                at = try Self.path(spec.path, names: names)
            } else {
                at = Path(steps: [])
            }
            children = try spec.children.map { try CompiledSpec($0, file: file, isChild: true, names: names) }
        }

        /// `customer.address.city`, `lines[0].sku`, `a\.b` (a dot in a name), `.` (the record itself).
        static func path(_ text: String, names: Names) throws -> Path {
            if text == "." { return Path(steps: []) }
            var steps: [Path.Step] = []
            var name: [UInt8] = []
            var hasName = false
            var bytes = Array(text.utf8)[...]
            func invalid(_ why: String) -> ReaderError {
                ReaderError(
                    .invalidOption,
                    "the JSON path \(text.debugDescription) \(why) (paths are like customer.address.city or "
                        + "lines[0].sku)"
                )
            }
            func flush() {
                steps.append(
                    Path.Step(name: names.keep(name), length: name.count, hash: JSONTape.hash(name), element: -1))
                name = []
                hasName = false
            }
            /// The byte before: a dot must follow a name or an index, and come before one.
            var previous: UInt8?
            while let byte = bytes.popFirst() {
                switch byte {
                case UInt8(ascii: "\\"):
                    guard let escaped = bytes.popFirst() else { throw invalid("ends in a lone \\") }
                    name.append(escaped)
                    hasName = true
                case UInt8(ascii: "."):
                    guard hasName || previous == UInt8(ascii: "]") else { throw invalid("has an empty name") }
                    if hasName { flush() }
                case UInt8(ascii: "["):
                    guard previous != UInt8(ascii: ".") else { throw invalid("has an empty name") }
                    if hasName { flush() }
                    let digits = bytes.prefix { $0 != UInt8(ascii: "]") }
                    guard let index = Int(String(decoding: digits, as: UTF8.self)), index >= 0,
                        digits.count < bytes.count
                    else { throw invalid("has an index that is not a number in [ ]") }
                    bytes = bytes.dropFirst(digits.count + 1)
                    steps.append(Path.Step(name: names.keep([]), length: 0, hash: 0, element: index))
                    if let next = bytes.first, next != UInt8(ascii: "."), next != UInt8(ascii: "[") {
                        throw invalid("has a name right after ]")
                    }
                    previous = UInt8(ascii: "]")
                    continue
                default:
                    name.append(byte)
                    hasName = true
                }
                previous = byte
            }
            if hasName { flush() }
            guard !steps.isEmpty, previous != UInt8(ascii: ".") else { throw invalid("has an empty name") }
            return Path(steps: steps)
        }
    }
}
