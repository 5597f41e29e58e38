import Readers

extension ModelInference {
    /// The values of a key candidate while they are all different, each with the line it came at,
    /// compared by their text: ids written as plain numbers by value — in a small table first, then,
    /// past `stagedLimit` of them, in pages (`IntegerFirstLines`: 4 bytes a dense id, so a million-row
    /// file's ids take 4 MB, not a 48 MB hash table, and a database of many small tables no page
    /// each) — every other text by its hash.
    package struct DistinctValues {
        /// Ids kept by value in a table before they move to pages.
        static let stagedLimit = 4_096
        private var staged: [Int: Int] = [:]
        private var integers: IntegerFirstLines?
        private var hashes: [Int: Int] = [:]

        /// What identifies a value: a small integer written as itself by its value, any other text
        /// by its hash.
        package enum Key: Hashable {
            case integer(Int)
            case hash(Int)

            init(_ text: String) {
                var text = text
                if let value = text.withUTF8({ IntegerFirstLines.smallInteger(UnsafeRawBufferPointer($0)) }) {
                    self = .integer(value)
                } else {
                    self = .hash(text.hashValue)
                }
            }
        }

        /// Registers the value seen at `line`; returns the line it came at first when it came before.
        mutating func insert(_ text: String, line: Int) -> Int? {
            switch Key(text) {
            case .hash(let hash): return hashes.updateValue(line, forKey: hash)
            case .integer(let value):
                guard integers != nil else {
                    if let first = staged[value] { return first }
                    staged[value] = line
                    if staged.count >= Self.stagedLimit { movePages() }
                    return nil
                }
                return register(value, line: line)
            }
        }

        /// Moves the staged ids to pages (those of sparse pages to the hashes).
        private mutating func movePages() {
            integers = IntegerFirstLines()
            for (value, line) in staged.sorted(by: { $0.value < $1.value }) { _ = register(value, line: line) }
            staged = [:]
        }

        private mutating func register(_ value: Int, line: Int) -> Int? {
            switch integers!.register(value, line: line) {
            case .new: return nil
            case .first(let first): return first
            case .elsewhere: return hashes.updateValue(line, forKey: String(value).hashValue)
            }
        }

        /// Whether a value of this key was registered.
        func contains(_ key: Key) -> Bool {
            switch key {
            case .hash(let hash): return hashes[hash] != nil
            case .integer(let value):
                guard let integers else { return staged[value] != nil }
                return integers.contains(value) ?? (hashes[String(value).hashValue] != nil)
            }
        }
    }
}
