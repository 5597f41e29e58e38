import Foundation

/// How much of one record a reader keeps in memory: a record larger than `recordBytes` (a 100 MB
/// text node, a gigabyte of text out of a small gzip file, a quote never closed, a SQL statement
/// without its `;`) is a `ReaderError.Kind.recordTooLarge` at its position, before it is read whole.
/// A pipeline sets it with `limits: { record: 256 MB }`.
public struct ReaderLimits: Sendable, Equatable {
    /// The largest record, in bytes of its fields' text (a SQL dump: of its statement).
    public var recordBytes: Int
    /// JSON: how deep values may nest (`limits: { depth: 1000 }`).
    public var depth: Int
    /// JSON: the longest number, in characters (`limits: { number: 4096 }`): a longer one refuses its record.
    public var numberCharacters: Int

    public init(
        recordBytes: Int = ReaderLimits.defaultRecordBytes, depth: Int = ReaderLimits.defaultDepth,
        numberCharacters: Int = ReaderLimits.defaultNumberCharacters
    ) {
        self.recordBytes = recordBytes
        self.depth = depth
        self.numberCharacters = numberCharacters
    }

    public static let defaultDepth = 1_000
    public static let defaultNumberCharacters = 4_096

    public static let defaultRecordBytes = 64 << 20
    /// The largest limit that can be set: 1 GiB (SQLite holds no larger value either).
    public static let maximumRecordBytes = 1 << 30
    public static let standard = ReaderLimits()

    /// The error for a record that outgrew the limit, at `position`.
    public func tooLarge(_ what: String, at position: SourcePosition?, hint: String = "") -> ReaderError {
        ReaderError(
            .recordTooLarge,
            "\(what) is larger than the record size limit, \(Self.describe(recordBytes))\(hint) "
                + "(a pipeline's limits: { record: SIZE } raises it)",
            at: position)
    }

    /// `67108864` → `64 MiB`.
    public static func describe(_ bytes: Int) -> String {
        for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)]
        where bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return "\(bytes >> shift) \(unit)"
        }
        return "\(bytes) bytes"
    }

    /// Reads `64 MB`, `64MiB`, `512k`, `1G` or a number of bytes; `nil` for anything else, nothing
    /// above zero or more than `maximumRecordBytes`. Units are powers of 1,024 (`MB` as `MiB`).
    public static func parseSize(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let digits = trimmed.prefix { $0.isNumber }
        guard let number = Int(digits), number > 0 else { return nil }
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces)
        let shifts: [String: Int] = [
            "": 0, "b": 0, "k": 10, "kb": 10, "kib": 10, "m": 20, "mb": 20, "mib": 20, "g": 30, "gb": 30, "gib": 30,
        ]
        guard let shift = shifts[unit], number <= Int.max >> shift, number << shift <= maximumRecordBytes else {
            return nil
        }
        return number << shift
    }
}
