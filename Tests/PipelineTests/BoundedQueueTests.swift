import Foundation
import Testing

@testable import Pipeline

@Suite struct BoundedQueueTests {
    /// A producer thread and three consumers: every element arrives once, and the producer never
    /// runs more than `capacity` ahead of the consumers.
    @Test func everyElementOnceAndNeverMoreThanCapacityAhead() {
        let queue = BoundedQueue<Int>(capacity: 3)
        let taken = Counter()
        let producer = Thread {
            for value in 0..<2_000 {
                queue.push(value)
                // Pushed but not yet counted: at most the capacity, plus one popped but not yet
                // counted by each of the three consumers.
                #expect(value + 1 - taken.count <= 3 + 3)
            }
            queue.close()
        }
        producer.start()
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            while let (value, turn) = queue.pop() {
                taken.increment()
                results.append(value)
                try? turn.end()
            }
        }
        #expect(results.sorted == Array(0..<2_000))
    }

    /// Consumers working in parallel at uneven speeds do their turns in the order they popped.
    @Test func turnsFollowTheOrderOfPopping() {
        let queue = BoundedQueue<Int>(capacity: 4)
        Thread {
            for value in 0..<300 { queue.push(value) }
            queue.close()
        }.start()
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            while let (value, turn) = queue.pop() {
                if value % 3 == 0 { Thread.sleep(forTimeInterval: 0.001) }  // a slow element
                #expect(throws: Never.self) { try turn.begin() }
                results.append(value)
                #expect(throws: Never.self) { try turn.end() }
            }
        }
        #expect(results.inOrder == Array(0..<300))
    }

    /// A consumer waiting for its turn is woken by a cancel, with an error.
    @Test func cancelEndsAWaitForATurn() {
        let queue = BoundedQueue<Int>(capacity: 2)
        queue.push(1)
        queue.push(2)
        let first = queue.pop()!, second = queue.pop()!
        let done = DispatchSemaphore(value: 0)
        Thread {
            #expect(throws: CancellationError.self) { try second.turn.begin() }
            done.signal()
        }.start()
        Thread.sleep(forTimeInterval: 0.05)
        queue.cancel()
        done.wait()
        #expect(first.element == 1 && second.element == 2)
    }

    @Test func closeLetsConsumersFinishAndDropsLaterPushes() {
        let queue = BoundedQueue<String>(capacity: 2)
        #expect(queue.push("a"))
        queue.close()
        #expect(!queue.push("b"))
        #expect(queue.pop()?.element == "a")
        #expect(queue.pop() == nil)
    }

    @Test func cancelWakesABlockedProducer() {
        let queue = BoundedQueue<Int>(capacity: 1)
        queue.push(1)
        let done = DispatchSemaphore(value: 0)
        Thread {
            #expect(!queue.push(2), "blocked on a full queue, then cancelled")
            done.signal()
        }.start()
        Thread.sleep(forTimeInterval: 0.05)
        queue.cancel()
        done.wait()
        #expect(queue.pop() == nil, "cancel drops what the queue held")
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        var count: Int { lock.withLock { value } }
        func increment() { lock.withLock { value += 1 } }
    }

    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [Int] = []
        var sorted: [Int] { lock.withLock { values.sorted() } }
        var inOrder: [Int] { lock.withLock { values } }
        func append(_ value: Int) { lock.withLock { values.append(value) } }
    }
}
