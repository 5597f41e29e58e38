import Foundation

/// Text compared as SQLite compares it: byte for byte. Swift's `String ==` and hashing follow
/// Unicode canonical equivalence, so `é` (U+00E9) and `e` + U+0301 would be one key to a
/// dictionary while a store, a SQL dump and SQLite keep them apart; values and references use these
/// instead.
enum ExactText {
    /// Whether `a` and `b` hold the same UTF-8 bytes.
    @inline(__always) static func equal(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
    }

    /// Feeds `text`'s UTF-8 bytes (and their count) to `hasher`.
    @inline(__always) static func hash(_ text: String, into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { bytes in
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
    }
}

extension AttributeValue {
    /// Equal values: as Swift compares each kind, but text byte for byte (`ExactText`).
    public static func == (lhs: AttributeValue, rhs: AttributeValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.integer(let a), .integer(let b)): return a == b
        case (.decimal(let a), .decimal(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.float(let a), .float(let b)): return a == b
        case (.string(let a), .string(let b)): return ExactText.equal(a, b)
        case (.boolean(let a), .boolean(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.binary(let a), .binary(let b)): return a == b
        case (.uuid(let a), .uuid(let b)): return a == b
        case (.uri(let a), .uri(let b)): return a == b
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .integer(let v):
            hasher.combine(1)
            hasher.combine(v)
        case .decimal(let v):
            hasher.combine(2)
            hasher.combine(v)
        case .double(let v):
            hasher.combine(3)
            hasher.combine(v)
        case .float(let v):
            hasher.combine(4)
            hasher.combine(v)
        case .string(let v):
            hasher.combine(5)
            ExactText.hash(v, into: &hasher)
        case .boolean(let v):
            hasher.combine(6)
            hasher.combine(v)
        case .date(let v):
            hasher.combine(7)
            hasher.combine(v)
        case .binary(let v):
            hasher.combine(8)
            hasher.combine(v)
        case .uuid(let v):
            hasher.combine(9)
            hasher.combine(v)
        case .uri(let v):
            hasher.combine(10)
            hasher.combine(v)
        }
    }
}

extension ManagedObjectID.Reference {
    /// Equal references: text keys byte for byte (`ExactText`), as the store keeps them.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.temporary(let a), .temporary(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.string(let a), .string(let b)): return ExactText.equal(a, b)
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .temporary(let n):
            hasher.combine(0)
            hasher.combine(n)
        case .integer(let key):
            hasher.combine(1)
            hasher.combine(key)
        case .string(let key):
            hasher.combine(2)
            ExactText.hash(key, into: &hasher)
        }
    }
}
