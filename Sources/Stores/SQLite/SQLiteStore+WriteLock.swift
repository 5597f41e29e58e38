import Drivers
import Foundation
import ObjectGraph

extension SQLiteStore {
    /// Runs `body` while holding the write lock of the SQLite database at `url` as any writer takes
    /// it (`BEGIN IMMEDIATE`): another program writing the file waits (up to `timeout` seconds for
    /// one already writing) until `body` is done — what replacing a database another program shares
    /// needs, so that no write lands between the check that it is unchanged and the rename over it.
    /// The database's WAL and shared memory are left where they are (a new file may use them).
    /// - Throws: `StoreError` (`.io`) when the lock is not had in `timeout`, or the file
    ///   cannot be opened; what `body` throws.
    public static func whileWriteLocked<T>(at url: URL, timeout: Double = 10, _ body: () throws -> T) throws -> T {
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: url.path, mode: .readWrite)
            try connection.execute("PRAGMA busy_timeout = \(Int(timeout * 1000))")
        } catch let error as SQLiteError {
            throw StoreError(.io, "Could not open the target to lock it: \(error)", url: url, underlying: error)
        }
        connection.keepWALOnClose()
        do { try connection.execute("BEGIN IMMEDIATE") } catch let error as SQLiteError {
            throw StoreError(
                .io, "Another program kept writing the target for \(Int(timeout)) s; it was not replaced",
                url: url, underlying: error)
        }
        defer { try? connection.execute("ROLLBACK") }
        return try body()
    }
}
