import Foundation

/// How a store tells one state of a row from the next, for optimistic locking: a save compares the
/// version an object read with the stored row's version now, and settles a difference by the
/// context's merge policy.
///
/// - `counter`: the store keeps a version number per row — 1 when inserted, one more at each saved
///   update (Core Data's `Z_OPT`; the graph SQLite layout's `_opt`, the in-memory and atomic stores).
/// - `contentHash`: the store keeps no version; a row's version is `StoreRow.contentVersion`, a hash
///   of its stored values. Any change of a value changes it — also a change made by another program,
///   which a counter that program does not know of would miss. (The plain SQLite layout, which keeps
///   no internal columns.)
public enum RowVersioning: Sendable {
    case counter
    case contentHash

    /// The version of `row` once written: the first (`previous` nil) or next counter value, or the
    /// row's content hash.
    public func version(ofWritten row: StoreRow, previous: Int64?) -> Int64 {
        switch self {
        case .counter: return (previous ?? 0) + 1
        case .contentHash: return row.contentVersion
        }
    }
}

extension StoreRow {
    /// A hash of the row's stored state — every attribute value and to-one destination — that is
    /// equal for equal values (`1.5` and `1.50`, `0.0` and `-0.0` alike) in every process: the row
    /// version of stores that version by content (`RowVersioning.contentHash`).
    public var contentVersion: Int64 { Self.contentVersion(of: attributeValues, toOnes: toOneDestinations) }

    /// The `contentVersion` of a row of these attribute values and to-one destinations.
    static func contentVersion(
        of attributeValues: [AttributeValue], toOnes toOneDestinations: [ManagedObjectID?]
    )
        -> Int64
    {
        var hash = ContentHash()
        for value in attributeValues { hash.add(value) }
        for destination in toOneDestinations {
            switch destination?.reference {
            case nil: hash.add(tag: 0)
            case .integer(let key)?:
                hash.add(tag: 1)
                hash.add(UInt64(bitPattern: key))
            case .string(let key)?:
                hash.add(tag: 2)
                hash.add(key.utf8)
            case .temporary(let number)?:
                hash.add(tag: 3)
                hash.add(number)
            }
        }
        return Int64(bitPattern: hash.value)
    }
}

/// 64-bit FNV-1a over a value's canonical bytes (stable across processes, unlike `Hasher`).
private struct ContentHash {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(tag: UInt8) { add(byte: tag) }

    mutating func add(byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    mutating func add(_ word: UInt64) {
        var word = word
        for _ in 0..<8 {
            add(byte: UInt8(truncatingIfNeeded: word))
            word >>= 8
        }
    }

    mutating func add(_ bytes: some Sequence<UInt8>) {
        var count: UInt64 = 0
        for byte in bytes {
            add(byte: byte)
            count += 1
        }
        add(count)
    }

    /// A double as its equality sees it: `-0.0` as `0.0`, every NaN alike.
    mutating func add(_ double: Double) {
        if double.isNaN { return add(UInt64.max) }
        add(double == 0 ? 0 : double.bitPattern)
    }

    mutating func add(_ attribute: AttributeValue) {
        switch attribute {
        case .null: add(tag: 0)
        case .integer(let v):
            add(tag: 1)
            add(UInt64(bitPattern: v))
        case .decimal(let v):
            add(tag: 2)
            add(DecimalText.canonical(v).utf8)
        case .double(let v):
            add(tag: 3)
            add(v)
        case .float(let v):
            add(tag: 4)
            add(Double(v))
        case .string(let v):
            add(tag: 5)
            add(v.utf8)
        case .boolean(let v): add(tag: v ? 7 : 6)
        case .date(let v):
            // To the microsecond: what PostgreSQL keeps of a time (a finer difference is no change).
            add(tag: 8)
            add((v.timeIntervalSinceReferenceDate * 1_000_000).rounded())
        case .binary(let v):
            add(tag: 9)
            add(v)
        case .uuid(let v):
            add(tag: 10)
            add(v.uuidString.utf8)
        case .uri(let v):
            add(tag: 11)
            add(v.absoluteString.utf8)
        }
    }
}
