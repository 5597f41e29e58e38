import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The one-writer lock: an advisory `flock` on `<target>.lock`, held while a run writes a store, so
/// two runs never write the same target at once. The kernel releases it if the process dies.
///
/// The lock file lasts only as long as a run holds it: the last holder removes it while it still
/// holds the lock, and a run that took the lock of a file removed meanwhile (it opened the file just
/// before) lets it go and locks the file now at that name — so two runs never hold locks on two
/// different files of one name. A killed run's lock file stays (the kernel cannot remove it); the
/// next run takes it and removes it in turn.
public final class StoreLock {
    public let path: String
    private let descriptor: Int32
    private let shared: Bool

    /// Takes the lock.
    /// - Parameters:
    ///   - waiting: seconds to wait for another process to release it (0: not at all).
    ///   - shared: a reader's lock (a dry run): taken beside other readers, never beside a writer;
    ///     the lock file is opened read-only, and `nil` comes back when there is none (no run is
    ///     writing the store).
    /// - Throws: `StoreLock.Error.locked` when another process holds it (after `waiting`); `.io`
    ///   when the lock file cannot be opened.
    public init?(forStoreAt storePath: String, waiting: Double = 0, shared: Bool = false) throws {
        let lockPath = storePath + ".lock"
        let deadline = Date().addingTimeInterval(max(0, waiting))
        while true {
            let fd = shared ? open(lockPath, O_RDONLY | O_CLOEXEC) : open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            if fd < 0 && shared && errno == ENOENT { return nil }
            guard fd >= 0 else { throw Error.io(path: lockPath, errno: errno) }
            do {
                try Self.lock(fd, shared: shared, path: lockPath, until: deadline)
            } catch {
                close(fd)
                throw error
            }
            if Self.isStill(fd, at: lockPath) {
                self.path = lockPath
                self.descriptor = fd
                self.shared = shared
                return
            }
            // The holder removed the file as it let go: lock the one now at that name.
            close(fd)
        }
    }

    /// Waits for the lock on `fd` until `deadline`.
    private static func lock(_ fd: Int32, shared: Bool, path: String, until deadline: Date) throws {
        while flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0 {
            let reason = errno
            guard reason == EWOULDBLOCK || reason == EINTR else { throw Error.io(path: path, errno: reason) }
            // A signal stops the wait (the run then reports it stopped, not locked).
            guard Date() < deadline, RunStop.requested == nil else { throw Error.locked(path: path) }
            usleep(100_000)
        }
    }

    /// Whether the file open as `fd` is still the one named `path` (not removed or replaced).
    private static func isStill(_ fd: Int32, at path: String) -> Bool {
        var open = stat(), named = stat()
        return fstat(fd, &open) == 0 && stat(path, &named) == 0 && open.st_dev == named.st_dev
            && open.st_ino == named.st_ino
    }

    deinit {
        // The last holder removes the file while holding it exclusively (a reader only when no other
        // reader holds it: taking it exclusively must not wait).
        if !shared || flock(descriptor, LOCK_EX | LOCK_NB) == 0, Self.isStill(descriptor, at: path) {
            unlink(path)
        }
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
