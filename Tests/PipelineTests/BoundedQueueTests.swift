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
            while let value = queue.pop() {
                taken.increment()
                results.append(value)
            }
        }
        #expect(results.sorted == Array(0..<2_000))
    }

    @Test func closeLetsConsumersFinishAndDropsLaterPushes() {
        let queue = BoundedQueue<String>(capacity: 2)
        #expect(queue.push("a"))
        queue.close()
        #expect(!queue.push("b"))
        #expect(queue.pop() == "a")
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
        func append(_ value: Int) { lock.withLock { values.append(value) } }
    }
}
