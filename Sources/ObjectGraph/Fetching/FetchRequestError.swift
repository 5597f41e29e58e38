import Foundation

/// An error in a fetch that only shows against the model: a key path naming no property, a to-many
/// relationship used where a value is needed, a variable left unsubstituted.
public struct FetchRequestError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
