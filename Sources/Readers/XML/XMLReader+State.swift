extension XMLReader {
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
}
