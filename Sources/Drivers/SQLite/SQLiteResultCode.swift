import CSQLite

/// A SQLite result code by name (`.constraint`, `.busy`, `.ioError`, …), primary or extended.
///
/// Compare an error's primary code to a named one instead of masking numbers:
///
/// ```swift
/// catch let error as SQLiteError where error.code.primary == .constraint { … }
/// ```
public struct SQLiteResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The number SQLite returned (an extended code keeps its high bits).
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary result code (the low 8 bits of an extended code).
    public var primary: SQLiteResultCode { SQLiteResultCode(rawValue: rawValue & 0xff) }

    /// SQLite's English name for the code, e.g. `constraint failed`.
    public var description: String { String(cString: sqlite3_errstr(rawValue)) }

    public static let ok = Self(rawValue: SQLITE_OK)
    public static let error = Self(rawValue: SQLITE_ERROR)
    public static let `internal` = Self(rawValue: SQLITE_INTERNAL)
    public static let permission = Self(rawValue: SQLITE_PERM)
    public static let abort = Self(rawValue: SQLITE_ABORT)
    public static let busy = Self(rawValue: SQLITE_BUSY)
    public static let locked = Self(rawValue: SQLITE_LOCKED)
    public static let noMemory = Self(rawValue: SQLITE_NOMEM)
    public static let readOnly = Self(rawValue: SQLITE_READONLY)
    public static let interrupt = Self(rawValue: SQLITE_INTERRUPT)
    public static let ioError = Self(rawValue: SQLITE_IOERR)
    public static let corrupt = Self(rawValue: SQLITE_CORRUPT)
    public static let notFound = Self(rawValue: SQLITE_NOTFOUND)
    public static let full = Self(rawValue: SQLITE_FULL)
    public static let cannotOpen = Self(rawValue: SQLITE_CANTOPEN)
    public static let `protocol` = Self(rawValue: SQLITE_PROTOCOL)
    public static let schema = Self(rawValue: SQLITE_SCHEMA)
    public static let tooBig = Self(rawValue: SQLITE_TOOBIG)
    public static let constraint = Self(rawValue: SQLITE_CONSTRAINT)
    public static let mismatch = Self(rawValue: SQLITE_MISMATCH)
    public static let misuse = Self(rawValue: SQLITE_MISUSE)
    public static let noLargeFileSupport = Self(rawValue: SQLITE_NOLFS)
    public static let authorization = Self(rawValue: SQLITE_AUTH)
    public static let range = Self(rawValue: SQLITE_RANGE)
    public static let notADatabase = Self(rawValue: SQLITE_NOTADB)
    public static let row = Self(rawValue: SQLITE_ROW)
    public static let done = Self(rawValue: SQLITE_DONE)
}
