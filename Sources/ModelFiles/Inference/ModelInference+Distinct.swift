import Readers

extension ModelInference {
    /// The values of a key candidate while they are all different, each with the line it came at,
    /// compared by their text: ids written as plain numbers by value (`IntegerFirstLines`:
    /// 4 bytes a dense id, so a million-row file's ids take 4 MB, not a 48 MB hash table), every
    /// other text by its hash.
    package struct DistinctValues {
        private var integers = IntegerFirstLines()
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
            let key = Key(text)
            if case .integer(let value) = key {
                switch integers.register(value, line: line) {
                case .new: return nil
                case .first(let first): return first
                case .elsewhere: break
                }
            }
            return hashes.updateValue(line, forKey: text.hashValue)
        }

        /// Whether a value of this key was registered.
        func contains(_ key: Key) -> Bool {
            switch key {
            case .integer(let value): integers.contains(value) ?? (hashes[String(value).hashValue] != nil)
            case .hash(let hash): hashes[hash] != nil
            }
        }
    }
}
