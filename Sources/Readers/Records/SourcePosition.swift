/// Where a record or value came from in its input: the file, the 1-based line and column, and the
/// 1-based record number. Every reader error and every reject carries one.
public struct SourcePosition: Hashable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    public var record: Int?

    public init(file: String, line: Int, column: Int, record: Int? = nil) {
        self.file = file
        self.line = line
        self.column = column
        self.record = record
    }

    /// `orders.csv:12:7 (record 11)`: the form compilers and editors understand, plus the record.
    public var description: String {
        var text = "\(file):\(line):\(column)"
        if let record { text += " (record \(record))" }
        return text
    }
}
