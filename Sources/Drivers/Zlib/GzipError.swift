import CZlib

/// A zlib failure: the data is corrupt, truncated or fails its checksum.
public struct GzipError: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public var description: String { message }
}
