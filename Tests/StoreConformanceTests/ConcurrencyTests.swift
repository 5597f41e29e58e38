import Foundation
import ObjectGraph
import TestSupport
import Testing

/// Contexts on private queues sharing one coordinator, and the traps that catch a context or object
/// used off its queue.
@Suite struct ConcurrencyTests {
    @Test(arguments: StoreKind.allCases)
    func twoPrivateContextsInsertAndSaveConcurrentlyIntoOneStore(_ kind: StoreKind) async throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let coordinator = file.graph.coordinator
        let workers = 2, batches = 20, batchSize = 250
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
                context.name = "worker \(worker)"
                group.addTask {
                    try await context.perform {
                        for batch in 0..<batches {
                            for n in 0..<batchSize {
                                context.insertNewObject(forEntityName: "Badge")["code"] = .string(
                                    "\(worker)-\(batch)-\(n)")
                            }
                            try context.save()
                            context.reset()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let expected = workers * batches * batchSize
        let codes = try file.stored("Badge", ["code"]), ids = try file.storedIDs("Badge")
        #expect(codes.count == expected && Set(codes).count == expected)
        #expect(ids.count == expected && Set(ids).count == expected, "every object has an ID of its own")
    }

    // The traps below fire in the context, before any store is asked, so the kind of store makes no
    // difference to them: they run once, on an in-memory store (a trapping exit test's process could
    // not remove a store file either).

    @Test func usingAPrivateQueueContextOffItsQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let context = ConcurrencyTests.inMemoryContext(.privateQueue)
            _ = context.insertNewObject(forEntityName: "Badge")
        }
        #expect(violationReported(result))
    }

    @Test func usingAnObjectOffItsContextsQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let context = ConcurrencyTests.inMemoryContext(.privateQueue)
            let badge = context.performAndWait { context.insertNewObject(forEntityName: "Badge") }
            badge["code"] = .string("set off the queue")
        }
        #expect(violationReported(result))
    }

    @Test func aConfinementContextUsedFromAnotherThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let context = ConcurrencyTests.inMemoryContext(.confinement)
            let thread = Thread { _ = context.insertNewObject(forEntityName: "Badge") }
            thread.start()
            while true { sleep(1) }
        }
        #expect(violationReported(result))
    }

    /// A context on a new in-memory store (exit tests cannot capture values, so they call this).
    static func inMemoryContext(_ type: ManagedObjectContext.ConcurrencyType) -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try! CompanyModel.make())
        _ = try! coordinator.addPersistentStore(type: InMemoryStore.storeType)
        return ManagedObjectContext(concurrencyType: type, coordinator: coordinator)
    }

    private func violationReported(_ result: ExitTest.Result?) -> Bool {
        guard let result else { return false }
        return String(decoding: result.standardErrorContent, as: UTF8.self).contains("Sluice concurrency violation")
    }
}
