import Foundation
import ObjectGraph
import Readers

/// One failure of a rejected record: which attribute (or relationship key), the raw text, the rule,
/// a sentence, and where the field is.
public struct RejectFailure: Sendable, Equatable {
    public var property: String
    public var raw: String?
    public var rule: String
    public var message: String
    public var position: SourcePosition
}

/// A record that cannot become an object: every failure of it, not the first.
public struct RecordReject: Error, Sendable, CustomStringConvertible {
    public var source: String
    public var entity: String
    public var position: SourcePosition
    public var failures: [RejectFailure]

    /// `customers.csv:3:1 (record 2): Customer: <each failure's message>; …`
    public var description: String {
        "\(position): \(entity): " + failures.map(\.message).joined(separator: "; ")
    }
}
