/// The line at which each small non-negative integer key first came (ids, the usual key), kept by
/// value in pages of 65,536 allocated as values arrive: 4 bytes a value, so 1,000,000 dense ids take
/// 4 MB where a hash table takes tens. A page is allocated only while the pages hold at least one key
/// per 16 slots (past the first four): the values of a page never allocated are `elsewhere` — the
/// caller keeps them its general way — and stay there, so every value has one home.
package struct IntegerFirstLines: Sendable {
    /// Values from 0 up to this one (exclusive) are kept by value.
    package static let limit = 1 << 26

    /// Where a value stands.
    package enum Lookup: Equatable {
        /// Not seen before (registered, when asked to).
        case new
        /// Seen first at this line.
        case first(line: Int)
        /// Kept by the caller's general path (its page is not allocated).
        case elsewhere
    }

    private var pages: [[Int32]?] = []
    private var sparsePages = Set<Int>()
    private var keys = 0
    /// Pages allocated (256 KiB each).
    package private(set) var pageCount = 0

    package init() {}

    /// Looks `value` (`0..<limit`) up; registers it as first seen at `line` when it is new and
    /// `insert` is true. Lines are kept in 32 bits: one beyond 2,147,483,646 is told as that one.
    package mutating func register(_ value: Int, line: Int, insert: Bool = true) -> Lookup {
        let page = value >> 16, slot = value & 0xFFFF
        if page >= pages.count { pages += repeatElement(nil, count: page + 1 - pages.count) }
        if pages[page] == nil {
            if sparsePages.contains(page) { return .elsewhere }
            guard insert else { return .new }  // a page never made holds no key
            guard pageCount < 4 || keys >= pageCount << 12 else {
                sparsePages.insert(page)
                return .elsewhere
            }
            pages[page] = [Int32](repeating: 0, count: 1 << 16)
            pageCount += 1
        }
        let first = pages[page]![slot]
        if first != 0 { return .first(line: Int(first) - 1) }
        guard insert else { return .new }
        pages[page]![slot] = Int32(min(max(line, 0), Int(Int32.max) - 1) + 1)
        keys += 1
        return .new
    }

    /// Whether `value` (`0..<limit`) was registered; `nil` when it belongs `elsewhere`.
    package func contains(_ value: Int) -> Bool? {
        let page = value >> 16
        guard page < pages.count, let values = pages[page] else { return sparsePages.contains(page) ? nil : false }
        return values[value & 0xFFFF] != 0
    }

    /// The value of digits written as a number writes itself (no sign, no leading zero) below
    /// `limit`; `nil` otherwise. Only such text is the same key exactly when it is the same value.
    package static func smallInteger(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let first = bytes.first, first &- 48 < 10, first != 48 || bytes.count == 1, bytes.count <= 8 else {
            return nil
        }
        var value = 0
        for byte in bytes {
            guard byte &- 48 < 10 else { return nil }
            value = value * 10 + Int(byte &- 48)
        }
        return value < limit ? value : nil
    }
}
