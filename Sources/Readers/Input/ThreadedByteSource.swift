import Foundation

/// Reads another source on a background thread, a few chunks ahead, so decompression runs on one core
/// while parsing runs on another. Memory is bounded: at most `depth` chunks wait.
///
/// Errors of the underlying source reach the reader at the point in the stream where they happened.
final class ThreadedByteSource: ByteSource {
    let name: String
    private let state: State
    private var current: [UInt8] = []
    private var offset = 0

    /// The queue between the two threads.
    ///
    /// `@unchecked Sendable`: every field is read and written only while `condition` is locked; the
    /// underlying source is used by the producer thread alone once it starts.
    private final class State: @unchecked Sendable {
        let condition = NSCondition()
        var chunks: [[UInt8]] = []
        var failure: Error?
        var finished = false
        var cancelled = false
        let depth: Int
        init(depth: Int) { self.depth = depth }
    }

    /// A box that hands the (non-Sendable) source to the producer thread, which is its only user from
    /// then on.
    private struct Handoff: @unchecked Sendable { let source: ByteSource }

    init(_ base: ByteSource, chunkSize: Int = 1 << 20, depth: Int = 4) {
        name = base.name
        let state = State(depth: depth)
        self.state = state
        let handoff = Handoff(source: base)
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: chunkSize)
            while true {
                state.condition.lock()
                while state.chunks.count >= state.depth && !state.cancelled { state.condition.wait() }
                let stop = state.cancelled
                state.condition.unlock()
                if stop { return }
                let n: Int
                do {
                    n = try buffer.withUnsafeMutableBytes { try handoff.source.read(into: $0) }
                } catch {
                    state.condition.lock()
                    state.failure = error
                    state.finished = true
                    state.condition.broadcast()
                    state.condition.unlock()
                    return
                }
                state.condition.lock()
                if n == 0 { state.finished = true } else { state.chunks.append(Array(buffer[..<n])) }
                state.condition.broadcast()
                state.condition.unlock()
                if n == 0 { return }
            }
        }
        thread.name = "sluice.read-ahead"
        thread.start()
    }

    deinit {
        state.condition.lock()
        state.cancelled = true
        state.condition.broadcast()
        state.condition.unlock()
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if offset == current.count {
            state.condition.lock()
            while state.chunks.isEmpty && !state.finished { state.condition.wait() }
            if state.chunks.isEmpty {
                let failure = state.failure
                state.condition.unlock()
                if let failure { throw failure }
                return 0
            }
            current = state.chunks.removeFirst()
            offset = 0
            state.condition.broadcast()
            state.condition.unlock()
        }
        let n = min(buffer.count, current.count - offset)
        current.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
        offset += n
        return n
    }
}
