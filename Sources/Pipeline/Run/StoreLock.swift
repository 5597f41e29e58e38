import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The one-writer lock: an advisory `flock` on `<target>.lock`, held while a run writes a store, so
/// two runs never write the same target at once. The kernel releases it if the process dies.
public final class StoreLock {
    public let path: String
    private let descriptor: Int32

    /// Takes the lock.
    /// - Parameters:
    ///   - waiting: seconds to wait for another process to release it (0: not at all).
    ///   - shared: a reader's lock (a dry run): taken beside other readers, never beside a writer;
    ///     the lock file is opened read-only, and `nil` comes back when there is none (no run has
    ///     written the store).
    /// - Throws: `StoreLock.Error.locked` when another process holds it (after `waiting`); `.io`
    ///   when the lock file cannot be opened.
    public init?(forStoreAt storePath: String, waiting: Double = 0, shared: Bool = false) throws {
        let lockPath = storePath + ".lock"
        let fd = shared ? open(lockPath, O_RDONLY | O_CLOEXEC) : open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 && shared && errno == ENOENT { return nil }
        guard fd >= 0 else { throw Error.io(path: lockPath, errno: errno) }
        let deadline = Date().addingTimeInterval(max(0, waiting))
        while flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0 {
            let reason = errno
            guard reason == EWOULDBLOCK || reason == EINTR else {
                close(fd)
                throw Error.io(path: lockPath, errno: reason)
            }
            // A signal stops the wait (the run then reports it stopped, not locked).
            guard Date() < deadline, RunStop.requested == nil else {
                close(fd)
                throw Error.locked(path: lockPath)
            }
            usleep(100_000)
        }
        self.path = lockPath
        self.descriptor = fd
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    public enum Error: Swift.Error, CustomStringConvertible, Equatable {
        case locked(path: String)
        /// The lock file cannot be opened or locked: the call's `errno`.
        case io(path: String, errno: Int32)

        public var description: String {
            switch self {
            case .locked(let path):
                return "Another run is writing this store (lock \(path) is held); wait for it to finish"
            case .io(let path, let errno): return "Cannot open lock file \(path): \(String(cString: strerror(errno)))"
            }
        }
    }
}
