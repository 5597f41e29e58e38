import Foundation

/// The text encoding of an input. Readers work on UTF-8; other encodings are converted as they stream.
public enum TextEncoding: String, Sendable, CaseIterable {
    /// UTF-8 (a byte order mark is skipped). A UTF-16 byte order mark switches to UTF-16.
    case utf8 = "utf-8"
    case latin1 = "iso-8859-1"
    case windows1252 = "windows-1252"
    /// UTF-16; the byte order mark decides the byte order (little-endian without one).
    case utf16 = "utf-16"
    case utf16LE = "utf-16le"
    case utf16BE = "utf-16be"

    /// Parses the names configuration files use (`utf-8`, `UTF8`, `latin1`, `cp1252`, ...).
    public init?(name: String) {
        let key = name.lowercased().replacingOccurrences(of: "_", with: "-")
        switch key {
        case "utf-8", "utf8": self = .utf8
        case "iso-8859-1", "latin1", "latin-1", "iso8859-1": self = .latin1
        case "windows-1252", "cp1252", "win1252": self = .windows1252
        case "utf-16", "utf16": self = .utf16
        case "utf-16le", "utf16le": self = .utf16LE
        case "utf-16be", "utf16be": self = .utf16BE
        default: return nil
        }
    }
}
