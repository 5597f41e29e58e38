import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The one-writer lock: an advisory `flock` on `<target>.lock`, held while a run writes a store, so
/// two runs never write the same target at once. The kernel releases it if the process dies.
public final class StoreLock {
    public let path: String
    private let descriptor: Int32

    /// Takes the lock without waiting.
    /// - Throws: `StoreLock.Error.locked` when another process holds it; `.io` when the lock file
    ///   cannot be opened.
    public init(forStoreAt storePath: String) throws {
        let lockPath = storePath + ".lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Error.io(path: lockPath, errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            close(fd)
            if reason == EWOULDBLOCK { throw Error.locked(path: lockPath) }
            throw Error.io(path: lockPath, errno: reason)
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
