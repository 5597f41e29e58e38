import Foundation

/// A registration for did-save callbacks; `cancel()` ends it.
public final class DidSaveObservation: Sendable {
    private let list: DidSaveObservers
    private let key: UInt64
    init(list: DidSaveObservers, key: UInt64) {
        self.list = list
        self.key = key
    }
    public func cancel() { list.remove(key) }
}

/// Callbacks for did-save notifications of a context or of every root context of a coordinator.
/// `@unchecked Sendable`: `callbacks` and `nextKey` are read and written only under `lock`.
final class DidSaveObservers: @unchecked Sendable {
    private let lock = NSLock()
    private var callbacks: [UInt64: @Sendable (ContextDidSave) -> Void] = [:]
    private var nextKey: UInt64 = 0

    func add(_ callback: @escaping @Sendable (ContextDidSave) -> Void) -> DidSaveObservation {
        lock.withLock {
            nextKey += 1
            callbacks[nextKey] = callback
            return DidSaveObservation(list: self, key: nextKey)
        }
    }

    func remove(_ key: UInt64) { lock.withLock { _ = callbacks.removeValue(forKey: key) } }

    /// Calls every callback (outside the lock, in registration order).
    func post(_ save: ContextDidSave) {
        let current = lock.withLock { callbacks.sorted { $0.key < $1.key }.map(\.value) }
        for callback in current { callback(save) }
    }

    /// A stream of the notifications posted from now on, until the consumer stops iterating.
    func stream() -> AsyncStream<ContextDidSave> {
        let (stream, continuation) = AsyncStream.makeStream(of: ContextDidSave.self, bufferingPolicy: .unbounded)
        let observation = add { continuation.yield($0) }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }
}
