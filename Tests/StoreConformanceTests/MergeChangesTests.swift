import Foundation
import ObjectGraph
import Synchronization
import TestSupport
import Testing

/// Did-save notifications and `mergeChanges(fromContextDidSave:)` between sibling contexts.
@Suite struct MergeChangesTests {
    /// A store with department Sales (Ann, Bob) saved by the first context; the second has them loaded.
    struct Siblings {
        let file: StoreFile
        let first: ManagedObjectContext, second: ManagedObjectContext
        let sales: ManagedObjectID, ann: ManagedObjectID, bob: ManagedObjectID
        init(_ kind: StoreKind) throws {
            file = try StoreFile(kind, model: try CompanyModel.make())
            first = file.context
            second = file.graph.makeContext()
            let sales = file.graph.insert("Department", ["name": "Sales"])
            let ann = file.graph.insert("Employee", ["name": "Ann", "age": .integer(30)])
            let bob = file.graph.insert("Employee", ["name": "Bob"])
            ann.setRelatedObject(sales, forKey: "department")
            bob.setRelatedObject(sales, forKey: "department")
            try first.save()
            (self.sales, self.ann, self.bob) = (sales.objectID, ann.objectID, bob.objectID)
            #expect(try second.existingObject(with: self.sales).relatedObjects(forKey: "employees").count == 2)
            _ = try second.existingObject(with: self.ann).string(forKey: "name")
        }
    }

    /// Collects the notifications a callback receives.
    final class Received: Sendable {
        let saves = Mutex<[ContextDidSave]>([])
        var all: [ContextDidSave] { saves.withLock { $0 } }
    }

    @Test(arguments: StoreKind.allCases)
    func aSiblingMergesUpdatesDeletesAndInserts(_ kind: StoreKind) throws {
        let s = try Siblings(kind)
        let received = Received()
        let observation = s.first.observeDidSave { save in received.saves.withLock { $0.append(save) } }
        defer { observation.cancel() }

        let ann = try s.first.existingObject(with: s.ann)
        ann["name"] = "Anne"
        s.first.delete(try s.first.existingObject(with: s.bob))
        let cy = s.file.graph.insert("Employee", ["name": "Cy"])
        cy.setRelatedObject(try s.first.existingObject(with: s.sales), forKey: "department")
        s.first.name = "importer"
        try s.first.save()

        #expect(received.all.count == 1)
        let save = try #require(received.all.first)
        #expect(
            save.inserted == [cy.objectID] && save.deleted == [s.bob] && save.contextName == "importer"
                && save.reachedStores)
        #expect(Set(save.updated) == [s.ann, s.sales])

        let theirAnn = try s.second.existingObject(with: s.ann)
        #expect(theirAnn.string(forKey: "name") == "Ann", "nothing changes before the merge")
        s.second.mergeChanges(fromContextDidSave: save)
        #expect(theirAnn.string(forKey: "name") == "Anne")
        #expect(s.second.registeredObject(for: s.bob) == nil)
        let employees = try s.second.existingObject(with: s.sales).relatedObjects(forKey: "employees")
        #expect(Set(employees.compactMap { $0.string(forKey: "name") }) == ["Anne", "Cy"])
        #expect(
            try s.second.fetch(
                FetchRequest(entityName: "Employee", predicate: try FetchPredicate(format: "name == 'Cy'"))
            ).count == 1)
        #expect(!s.second.hasChanges, "merging makes no changes of its own")
    }

    @Test(arguments: StoreKind.allCases)
    func aSiblingsLocalChangesSurviveAMergeOfOtherProperties(_ kind: StoreKind) throws {
        let s = try Siblings(kind)
        let theirs = try s.second.existingObject(with: s.ann)
        theirs["age"] = .integer(41)
        s.second.mergePolicy = .objectTrumps
        let received = Received()
        let observation = s.first.observeDidSave { save in received.saves.withLock { $0.append(save) } }
        defer { observation.cancel() }
        try s.first.existingObject(with: s.ann)["name"] = "Anne"
        try s.first.save()
        s.second.mergeChanges(fromContextDidSave: try #require(received.all.first))
        #expect(theirs.string(forKey: "name") == "Anne" && theirs.integer(forKey: "age") == 41)
        try s.second.save()  // the merge adopted the new version: no conflict
        let stored = try s.file.reopen().context.existingObject(with: s.ann)
        #expect(stored.string(forKey: "name") == "Anne" && stored.integer(forKey: "age") == 41)
    }

    struct DeleteOutcome: Sendable, CustomTestStringConvertible {
        let policy: MergePolicy
        /// Whether the second context keeps Ann after the merge.
        let keeps: Bool
        /// What its save does: fails, leaves no Ann in the store, or writes Ann ("Annie") again.
        let save: String
        var testDescription: String { "\(policy)" }
    }

    static let deleteOutcomes = [
        DeleteOutcome(policy: .error, keeps: true, save: "fails"),
        DeleteOutcome(policy: .storeTrumps, keeps: false, save: "gone"),
        DeleteOutcome(policy: .objectTrumps, keeps: true, save: "written"),
        DeleteOutcome(policy: .overwrite, keeps: true, save: "written"),
        DeleteOutcome(policy: .rollback, keeps: false, save: "gone"),
    ]

    @Test(arguments: StoreKind.allCases, deleteOutcomes)
    func mergingADeleteOfAnObjectTheSiblingChanged(_ kind: StoreKind, _ expected: DeleteOutcome) throws {
        let s = try Siblings(kind)
        let theirs = try s.second.existingObject(with: s.ann)
        theirs["name"] = "Annie"
        s.second.mergePolicy = expected.policy
        let received = Received()
        let observation = s.file.graph.coordinator.observeDidSave { save in received.saves.withLock { $0.append(save) }
        }
        defer { observation.cancel() }
        s.first.delete(try s.first.existingObject(with: s.ann))
        try s.first.save()

        s.second.mergeChanges(fromContextDidSave: try #require(received.all.first))
        #expect((s.second.registeredObject(for: s.ann) != nil) == expected.keeps)
        let employees = try s.second.existingObject(with: s.sales).relatedObjects(forKey: "employees")
        if !expected.keeps {
            #expect(!employees.contains(theirs), "a removed object leaves its department's employees")
        }
        switch expected.save {
        case "fails":
            #expect { try s.second.save() } throws: { "\($0)".contains("another save deleted it") }
        case "gone":
            try s.second.save()
            #expect(try s.file.stored("Employee", ["name"]) == [["Bob"]])
        default:
            try s.second.save()
            let stored = try s.file.reopen().context.existingObject(with: s.ann)
            #expect(stored.string(forKey: "name") == "Annie")
            #expect(
                stored.relatedObject(forKey: "department")?.objectID == s.sales, "written again with its relationships")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func asyncObserversAndAutomaticMergingSeeEverySave(_ kind: StoreKind) async throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let coordinator = file.graph.coordinator
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let badge = try await writer.perform {
            let badge = writer.insertNewObject(forEntityName: "Badge")
            badge["code"] = "v1"
            try writer.save()
            return badge.objectID
        }
        try await reader.perform {
            reader.automaticallyMergesChangesFromParent = true
            _ = try reader.existingObject(with: badge).string(forKey: "code")
        }
        let saves = coordinator.didSaves()
        let listener = Task { () -> [ManagedObjectID] in
            for await save in saves { return save.updated }
            return []
        }
        try await writer.perform {
            try writer.existingObject(with: badge)["code"] = "v2"
            try writer.save()
        }
        #expect(await listener.value == [badge])
        let code = try await reader.perform { try reader.existingObject(with: badge).string(forKey: "code") }
        #expect(code == "v2", "the reader merged the writer's save on its own queue")
    }
}
