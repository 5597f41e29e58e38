import Foundation

/// A failure of a store or the coordinator: an unknown store type, a store written with another model,
/// a conflict with the stored state, a missing object, an I/O or format problem.
///
/// The `code` says what kind of failure it is (what a caller decides on); `underlying` keeps the
/// error that caused it (a `SQLiteError`, a POSIX error, a parse failure of an atomic store's file).
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case unknownStoreType
        case incompatibleModel
        case conflict
        case objectNotFound
        case noStoreForEntity
        case io
        case corrupt
        /// A save would break a uniqueness constraint of the model.
        case constraintViolation
        /// A store option has an unknown name or a value the store cannot use.
        case invalidOption
    }

    public var code: Code
    /// One sentence saying what went wrong and what to do.
    public var message: String
    public var url: URL?
    public var objectID: ManagedObjectID?
    /// The error that caused this one, when there was one.
    public var underlying: (any Error & Sendable)?

    public init(
        _ code: Code, _ message: String, url: URL? = nil, objectID: ManagedObjectID? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.url = url
        self.objectID = objectID
        self.underlying = underlying
    }

    /// A store's location as messages show it: a file's path, or a URL without a password (in its
    /// user part or a `password` parameter).
    static func shown(_ url: URL) -> String {
        guard !url.isFileURL, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.path
        }
        components.password = nil
        components.queryItems = components.queryItems?.filter { $0.name != "password" }
        if components.queryItems?.isEmpty == true { components.queryItems = nil }
        return components.string ?? url.path
    }

    public var description: String {
        var text = message
        if let url { text += " (store \(Self.shown(url)))" }
        if let objectID { text += " [object \(objectID)]" }
        return text
    }
}
