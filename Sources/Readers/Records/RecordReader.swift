import Foundation

/// Reads records one at a time: a throwing pull iterator (iteration can fail and cannot restart).
///
/// ```swift
/// var reader = try CSVReader(path: "orders.csv")
/// while let record = try reader.next() { print(record.string(0) ?? "NULL") }
/// ```
public protocol RecordReader {
    /// The next record, or `nil` at the end of the input.
    /// - Throws: `ReaderError`; after a recoverable one (`isRecoverable`) the next call goes on with the
    ///   following record.
    mutating func next() throws -> Record?

    /// Whether the next call may give a nested record of one already given, without reading on (an
    /// XML record's children follow it): until it is `false`, a batch cannot know that its last
    /// record is complete. `false` for readers without nested records.
    var nextMayBeChild: Bool { get }
}

extension RecordReader {
    public var nextMayBeChild: Bool { false }
}
