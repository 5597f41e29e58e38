import Dispatch
import Foundation
import ObjectGraph
import TestSupport
import Testing

/// A `.mainQueue` context: its work runs on the main queue (`perform` / `performAndWait` from other
/// threads), where the context is used directly.
@Suite struct MainQueueContextTests {
    @Test func aMainQueueContextRunsItsWorkOnTheMainQueue() async throws {
        let graph = try TestGraph(model: try CompanyModel.make())
        let context = ManagedObjectContext(concurrencyType: .mainQueue, coordinator: graph.coordinator)
        let id = try await context.perform { () -> ManagedObjectID in
            let badge = context.insertNewObject(forEntityName: "Badge")
            badge["code"] = "main"
            try context.save()
            return badge.objectID
        }
        // From another thread, `performAndWait` runs the block on the main queue and waits for it.
        let seen = try await Task.detached { () -> String? in
            try context.performAndWait {
                dispatchPrecondition(condition: .onQueue(.main))
                return try context.existingObject(with: id).string(forKey: "code")
            }
        }.value
        #expect(seen == "main")
        let code = try await context.perform { () -> String? in
            let object = try context.existingObject(with: id)
            object["code"] = "changed on main"
            try context.save()
            return object.string(forKey: "code")
        }
        #expect(code == "changed on main")
        let stored = try graph.makeContext().existingObject(with: id).string(forKey: "code")
        #expect(stored == "changed on main")
    }
}
