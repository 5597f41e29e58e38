import Foundation

/// A first-in first-out queue of at most `capacity` elements between threads — and of elements
/// weighing at most `maxWeight` (bytes) from their push until they are finished: `push` waits while
/// it is full, `pop` while it is empty; after `close()` pushes are dropped and `pop` returns what is
/// left, then `nil`. How the reading thread hands batches of records to the importing contexts
/// without reading ahead more than a few batches. Consumers call `finished()` for each element they
/// are done with, so the producer can wait for everything it pushed (`waitUntilFinished()`).
///
/// Elements are numbered in the order they are popped, and consumers working on them in parallel
/// take turns in that order for the part of their work whose order matters (`Turn`): a pass's
/// contexts map batches in parallel and write them in input order.
final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    // @unchecked: `items`, `unfinished`, `isClosed`, `popped` and `turn` are only touched with
    // `condition` locked.
    private let condition = NSCondition()
    /// At most `capacity` elements: taking the first is cheap, and nothing taken stays referenced.
    private var items: [Element] = []
    /// Elements pushed and not yet `finished()`.
    private var unfinished = 0
    private var isClosed = false
    private var cancelled = false
    /// Elements popped so far, and the number of the element whose turn it is.
    private var popped = 0
    private var turn = 0
    /// The weights of the elements pushed and not finished, oldest first, and their sum.
    private var weights: [Int] = []
    private var unfinishedWeight = 0
    let capacity: Int
    let maxWeight: Int

    init(capacity: Int, maxWeight: Int = .max) {
        precondition(capacity > 0)
        self.capacity = capacity
        self.maxWeight = maxWeight
    }

    /// Adds an element of `weight`, waiting for room (an element heavier than `maxWeight` goes once
    /// nothing else is unfinished); `false` (the element dropped) once the queue is closed.
    @discardableResult
    func push(_ element: Element, weight: Int = 0) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !isClosed && (items.count >= capacity || (unfinished > 0 && unfinishedWeight + weight > maxWeight)) {
            condition.wait()
        }
        guard !isClosed else { return false }
        items.append(element)
        unfinished += 1
        weights.append(weight)
        unfinishedWeight += weight
        condition.broadcast()
        return true
    }

    /// Waits while the unfinished elements weigh `maxWeight` or more; `false` once the queue is
    /// closed (the producer stops).
    func waitForRoom() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !isClosed && unfinished > 0 && unfinishedWeight >= maxWeight { condition.wait() }
        return !isClosed
    }

    /// A consumer is done with an element it popped (elements finish in about the order they were
    /// pushed: the oldest weight goes).
    func finished() {
        condition.lock()
        unfinished -= 1
        if !weights.isEmpty { unfinishedWeight -= weights.removeFirst() }
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until every element pushed so far is `finished()` (or the queue is cancelled).
    func waitUntilFinished() {
        condition.lock()
        defer { condition.unlock() }
        while unfinished > 0 && !cancelled { condition.wait() }
    }

    /// The oldest element, waiting for one, and its turn; `nil` when the queue is closed and empty.
    func pop() -> (element: Element, turn: Turn)? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !isClosed { condition.wait() }
        guard !items.isEmpty else { return nil }
        let element = items.removeFirst()
        popped += 1
        condition.broadcast()
        return (element, Turn(queue: self, number: popped - 1))
    }

    /// A popped element's turn: `begin()` waits until the turns of the elements popped before it
    /// ended, `end()` (after `begin()`, which it calls when needed) lets the next one begin. Every
    /// turn popped must end, or the queue be cancelled (which ends every wait, with an error).
    final class Turn: @unchecked Sendable {
        // @unchecked: used by the consumer that popped it only.
        private let queue: BoundedQueue
        private let number: Int
        private var begun = false
        private var ended = false

        fileprivate init(queue: BoundedQueue, number: Int) {
            self.queue = queue
            self.number = number
        }

        /// Waits for the turn. - Throws: `CancellationError` when the queue was cancelled meanwhile.
        func begin() throws {
            guard !begun else { return }
            begun = true
            guard queue.waitForTurn(number) else { throw CancellationError() }
        }

        /// Ends the turn (beginning it first, when it was not).
        func end() throws {
            guard !ended else { return }
            try begin()
            ended = true
            queue.passTurn()
        }
    }

    /// Waits until it is the turn of element `number`; `false` when the queue was cancelled.
    private func waitForTurn(_ number: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while turn != number && !cancelled { condition.wait() }
        return !cancelled
    }

    private func passTurn() {
        condition.lock()
        turn += 1
        condition.broadcast()
        condition.unlock()
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
