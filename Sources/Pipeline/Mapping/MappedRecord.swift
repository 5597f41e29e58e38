import Foundation
import ObjectGraph

/// What one record becomes before it meets a context: the values of the mapped attributes, then
/// the parts of each lookup's key (in the destination's attribute types), in one array — one
/// allocation per record. `RecordMapper` says which attribute or key each position holds
/// (`attributes`, `key(_:of:)`, `singleKey(_:of:)`).
public struct MappedRecord: Sendable {
    public var values: [AttributeValue] = []
}
