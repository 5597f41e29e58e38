import Foundation
import ObjectGraph
import TestSupport
import Testing

/// Uniqueness constraints (Department.name is unique) settled by each merge policy.
@Suite struct ConstraintConflictTests {
    struct Outcome: Sendable, CustomTestStringConvertible {
        let policy: MergePolicy
        let fails: Bool
        /// The budget the one stored department ends with.
        let budget: String
        var testDescription: String { "\(policy)" }
    }

    /// Which side's budget stays: the saving object's (200) or the store's / the first object's (100).
    static let outcomes = [
        Outcome(policy: .error, fails: true, budget: "100"),
        Outcome(policy: .storeTrumps, fails: false, budget: "100"),
        Outcome(policy: .objectTrumps, fails: false, budget: "200"),
        Outcome(policy: .overwrite, fails: false, budget: "200"),
        Outcome(policy: .rollback, fails: false, budget: "100"),
    ]

    /// Stored: Sales (budget 100) with Ann. Saved now: another Sales (budget 200) with Bob.
    @Test(arguments: StoreKind.allCases, outcomes)
    func insertingAKeyTheStoreHas(_ kind: StoreKind, _ expected: Outcome) throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let stored = file.graph.insert("Department", ["name": "Sales", "budget": .decimal(100)])
        file.graph.insert("Employee", ["name": "Ann"]).setRelatedObject(stored, forKey: "department")
        try file.context.save()

        let context = file.graph.makeContext()
        context.mergePolicy = expected.policy
        let sales = file.graph.insert("Department", ["name": "Sales", "budget": .decimal(200)], into: context)
        file.graph.insert("Employee", ["name": "Bob"], into: context).setRelatedObject(sales, forKey: "department")
        if expected.fails {
            #expect { try context.save() } throws: { error in
                guard let conflict = (error as? MergeError)?.constraintConflicts.first else { return false }
                return conflict.keyNames == ["name"] && conflict.keyValues == ["Sales"]
                    && conflict.existingObjectID == stored.objectID
                    && "\(error)".contains(#"Department name = "Sales": "#)
            }
            #expect(try file.storedCount("Person") == 1, "nothing was written")
            return
        }
        try context.save()
        #expect(sales.objectID == stored.objectID, "the inserted object became the stored one")
        #expect(try file.stored("Department", ["name", "budget"]) == [["Sales", expected.budget]])
        #expect(
            try file.stored("Person", ["name", "department.name"]) == [["Ann", "Sales"], ["Bob", "Sales"]],
            "Bob joins the stored department; Ann stays in it")
    }

    /// One save inserts Research twice (budgets 100 then 200), each with an employee.
    @Test(arguments: StoreKind.allCases, outcomes)
    func twoObjectsOfOneSaveWithOneKey(_ kind: StoreKind, _ expected: Outcome) throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let context = file.context
        context.mergePolicy = expected.policy
        let first = file.graph.insert("Department", ["name": "Research", "budget": .decimal(100)])
        let second = file.graph.insert("Department", ["name": "Research", "budget": .decimal(200)])
        file.graph.insert("Employee", ["name": "Cy"]).setRelatedObject(first, forKey: "department")
        file.graph.insert("Employee", ["name": "Di"]).setRelatedObject(second, forKey: "department")
        file.graph.insert("Badge", ["code": "B1"])
        if expected.fails {
            #expect { try context.save() } throws: { error in
                guard let conflict = (error as? MergeError)?.constraintConflicts.first else { return false }
                return conflict.existingObjectID == nil && conflict.otherObjectIDs.count == 1
                    && "\(error)".contains("2 objects of this save")
            }
            #expect(try file.storedCount("Badge") == 0, "nothing was written")
            return
        }
        try context.save()
        #expect(try file.stored("Department", ["name", "budget"]) == [["Research", expected.budget]])
        #expect(
            try file.stored("Person", ["name", "department.name"]) == [["Cy", "Research"], ["Di", "Research"]],
            "both employees end in the one department")
        let winner = expected.budget == "100" ? first : second, loser = expected.budget == "100" ? second : first
        #expect(winner.managedObjectContext === context && loser.managedObjectContext == nil)
        #expect(winner.relatedObjects(forKey: "employees").count == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func anInsertedKeyOfARegisteredObjectUpdatesThatObject(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let stored = file.graph.insert("Department", ["name": "Sales", "budget": .decimal(100)])
        try file.context.save()
        file.context.mergePolicy = .objectTrumps
        let again = file.graph.insert("Department", ["name": "Sales", "budget": .decimal(300)])
        file.graph.insert("Employee", ["name": "Eve"]).setRelatedObject(again, forKey: "department")
        try file.context.save()
        #expect(stored.decimal(forKey: "budget") == 300)
        #expect(stored.relatedObjects(forKey: "employees").compactMap { $0.string(forKey: "name") } == ["Eve"])
        #expect(try file.stored("Department", ["name", "budget"]) == [["Sales", "300"]])
    }

    @Test(arguments: StoreKind.allCases, MergePolicy.allCases)
    func anUpdateOntoATakenKey(_ kind: StoreKind, _ policy: MergePolicy) throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let sales = file.graph.insert("Department", ["name": "Sales"])
        let research = file.graph.insert("Department", ["name": "Research"])
        try file.context.save()
        file.context.mergePolicy = policy
        research["name"] = "Sales"
        research["budget"] = .decimal(5)
        if policy == .error {
            #expect { try file.context.save() } throws: {
                ($0 as? MergeError)?.constraintConflicts.first?.existingObjectID == sales.objectID
            }
        } else {
            try file.context.save()
            #expect(research.string(forKey: "name") == "Research", "the key goes back; the other change is kept")
            #expect(try file.stored("Department", ["name", "budget"]) == [["Research", "5"], ["Sales", "nil"]])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func twoContextsImportingTheSameKeysConcurrentlyUnderObjectTrumps(_ kind: StoreKind) async throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        try await Self.importConcurrently(file) { context, worker, n in
            let department = context.insertNewObject(forEntityName: "Department")
            department["name"] = .string("D\(n)")
            department["budget"] = .decimal(Decimal(worker))
        }
        let names = try file.stored("Department", ["name"])
        #expect(names.count == 500 && Set(names).count == 500)
    }

    /// Two private-queue contexts under object-trumps each insert the objects 0..<500 (`insert`
    /// makes object `n` for worker `worker`), saving and resetting every 50.
    static func importConcurrently(
        _ file: StoreFile, insert: @escaping @Sendable (ManagedObjectContext, Int, Int) -> Void
    ) async throws {
        let coordinator = file.graph.coordinator
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<2 {
                let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
                context.mergePolicy = .objectTrumps
                group.addTask {
                    try await context.perform {
                        for batch in 0..<10 {
                            for n in 0..<50 { insert(context, worker, batch * 50 + n) }
                            try context.save()
                            context.reset()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Two sub-entities share their parent's key: an object of one cannot become the stored row (or
    /// the other new object) of the other, under any policy — the key is in conflict.
    @Test(arguments: StoreKind.allCases, MergePolicy.allCases)
    func aKeyHeldByASiblingEntityIsAConflictUnderEveryPolicy(_ kind: StoreKind, _ policy: MergePolicy) throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Doc", isAbstract: true, attributes: [AttributeDescription(name: "number", type: .integer64)],
                uniquenessConstraints: [["number"]]),
            EntityDescription(
                name: "Invoice", parent: "Doc", attributes: [AttributeDescription(name: "due", type: .string)]),
            EntityDescription(
                name: "CreditNote", parent: "Doc",
                attributes: [
                    AttributeDescription(name: "reason", type: .string),
                    AttributeDescription(name: "extra", type: .string),
                ]),
        ])
        let file = try StoreFile(kind, model: model)
        file.graph.insert("Invoice", ["number": 2, "due": "a"])
        try file.context.save()
        let context = file.graph.makeContext()
        context.mergePolicy = policy
        let note = context.insertNewObject(forEntityName: "CreditNote")
        note["number"] = 2
        note["reason"] = "x"
        #expect(throws: MergeError.self) { try context.save() }
        context.rollback()
        let first = context.insertNewObject(forEntityName: "Invoice"),
            second = context.insertNewObject(forEntityName: "CreditNote")
        first["number"] = 3
        second["number"] = 3
        #expect(throws: MergeError.self) { try context.save() }
        #expect(try file.stored("Doc", ["number", "due"]) == [["2", "a"]])
    }
}
