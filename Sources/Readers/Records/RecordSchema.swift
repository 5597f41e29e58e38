import Foundation

/// The field names shared by the records of one kind (a CSV header, a table's columns, XML field paths).
public final class RecordSchema: Sendable {
    public let names: [String]
    private let indexByName: [String: Int]

    public init(names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        for (i, name) in names.enumerated() where index[name] == nil { index[name] = i }
        indexByName = index
    }

    /// The index of the first field called `name`.
    public func index(of name: String) -> Int? { indexByName[name] }
}
