import Foundation

/// A first-in first-out queue of at most `capacity` elements between threads: `push` waits while it
/// is full, `pop` while it is empty; after `close()` pushes are dropped and `pop` returns what is
/// left, then `nil`. How the reading thread hands batches of records to the importing contexts
/// without reading ahead more than a few batches. Consumers call `finished()` for each element they
/// are done with, so the producer can wait for everything it pushed (`waitUntilFinished()`).
final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    // @unchecked: `items`, `unfinished` and `isClosed` are only touched with `condition` locked.
    private let condition = NSCondition()
    /// At most `capacity` elements: taking the first is cheap, and nothing taken stays referenced.
    private var items: [Element] = []
    /// Elements pushed and not yet `finished()`.
    private var unfinished = 0
    private var isClosed = false
    private var cancelled = false
    let capacity: Int

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// Adds an element, waiting for room; `false` (the element dropped) once the queue is closed.
    @discardableResult
    func push(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !isClosed && items.count >= capacity { condition.wait() }
        guard !isClosed else { return false }
        items.append(element)
        unfinished += 1
        condition.broadcast()
        return true
    }

    /// A consumer is done with an element it popped.
    func finished() {
        condition.lock()
        unfinished -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until every element pushed so far is `finished()` (or the queue is cancelled).
    func waitUntilFinished() {
        condition.lock()
        defer { condition.unlock() }
        while unfinished > 0 && !cancelled { condition.wait() }
    }

    /// The oldest element, waiting for one; `nil` when the queue is closed and empty.
    func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !isClosed { condition.wait() }
        guard !items.isEmpty else { return nil }
        let element = items.removeFirst()
        condition.broadcast()
        return element
    }

    /// No more elements will come; waiting pushers and poppers wake up.
    func close() {
        condition.lock()
        isClosed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Closes the queue and drops what it holds (a consumer failed: the producer must stop).
    func cancel() {
        condition.lock()
        isClosed = true
        cancelled = true
        items.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}
