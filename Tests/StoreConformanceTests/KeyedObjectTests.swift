import Foundation
import ObjectGraph
import TestSupport
import Testing

/// Objects known by one required integer key (`Account.number`, the entity's first uniqueness
/// constraint) — the key the plain SQLite layout keeps rows under, so there an object's ID is its
/// key. Every store settles conflicts on such keys alike, whatever names its objects.
@Suite struct KeyedObjectTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Account",
                attributes: [
                    AttributeDescription(name: "number", type: .integer64, isOptional: false),
                    AttributeDescription(name: "owner", type: .string),
                    AttributeDescription(name: "balance", type: .decimal),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "entries", destination: "Entry", inverse: "account", isToMany: true,
                        deleteRule: .cascade)
                ],
                uniquenessConstraints: [["number"]], tableName: "accounts"),
            EntityDescription(
                name: "Entry",
                attributes: [AttributeDescription(name: "amount", type: .decimal)],
                relationships: [
                    RelationshipDescription(name: "account", destination: "Account", inverse: "entries")
                ], tableName: "entries"),
        ])
    }

    static let outcomes = ConstraintConflictTests.outcomes

    @discardableResult
    static func account(
        _ graph: TestGraph, _ number: Int64, balance: Decimal, entry: Decimal? = nil,
        into context: ManagedObjectContext? = nil
    ) -> ManagedObject {
        let account = graph.insert(
            "Account", ["number": .integer(number), "owner": .string("A\(number)"), "balance": .decimal(balance)],
            into: context)
        if let entry {
            graph.insert("Entry", ["amount": .decimal(entry)], into: context).setRelatedObject(
                account, forKey: "account")
        }
        return account
    }

    @Test(arguments: StoreKind.allCases)
    func objectsAreFoundByTheirKeysAfterReopening(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try Self.model())
        let seven = Self.account(file.graph, 7, balance: 70, entry: 1)
        Self.account(file.graph, 42, balance: 420, entry: 2)
        try file.context.save()
        if kind.keepsObjectsUnderKeys {
            #expect(seven.objectID.primaryKey == 7, "the plain layout keeps the account under its number")
        }
        let context = try file.reopen().context
        let again = try context.existingObject(with: seven.objectID)
        #expect(again.integer(forKey: "number") == 7 && again.decimal(forKey: "balance") == 70)
        #expect(
            try file.stored("Entry", ["amount", "account.number"]) == [["1", "7"], ["2", "42"]],
            "entries point at their accounts")
    }

    /// Stored: account 7 (balance 100) with an entry. Saved now: another account 7 (balance 200) with an entry.
    @Test(arguments: StoreKind.allCases, outcomes)
    func insertingAKeyTheStoreHas(_ kind: StoreKind, _ expected: ConstraintConflictTests.Outcome) throws {
        let file = try StoreFile(kind, model: try Self.model())
        let stored = Self.account(file.graph, 7, balance: 100, entry: 1)
        try file.context.save()

        let context = file.graph.makeContext()
        context.mergePolicy = expected.policy
        let again = Self.account(file.graph, 7, balance: 200, entry: 2, into: context)
        if expected.fails {
            #expect { try context.save() } throws: { error in
                guard let conflict = (error as? MergeError)?.constraintConflicts.first else { return false }
                return conflict.keyValues == [.integer(7)] && conflict.existingObjectID == stored.objectID
            }
            #expect(try file.storedCount("Entry") == 1, "nothing was written")
            return
        }
        try context.save()
        #expect(again.objectID == stored.objectID, "the inserted object became the stored one")
        #expect(try file.stored("Account", ["number", "balance"]) == [["7", expected.budget]])
        #expect(try file.stored("Entry", ["amount", "account.number"]) == [["1", "7"], ["2", "7"]])
    }

    /// One save inserts account 9 twice (balances 100 then 200), each with an entry.
    @Test(arguments: StoreKind.allCases, outcomes)
    func twoObjectsOfOneSaveWithOneKey(_ kind: StoreKind, _ expected: ConstraintConflictTests.Outcome) throws {
        let file = try StoreFile(kind, model: try Self.model())
        file.context.mergePolicy = expected.policy
        let first = Self.account(file.graph, 9, balance: 100, entry: 1)
        let second = Self.account(file.graph, 9, balance: 200, entry: 2)
        Self.account(file.graph, 10, balance: 5)
        if expected.fails {
            #expect { try file.context.save() } throws: { error in
                (error as? MergeError)?.constraintConflicts.first?.otherObjectIDs.count == 1
            }
            #expect(try file.storedCount("Account") == 0, "nothing was written")
            return
        }
        try file.context.save()
        #expect(try file.stored("Account", ["number", "balance"]) == [["10", "5"], ["9", expected.budget]])
        #expect(try file.stored("Entry", ["amount", "account.number"]) == [["1", "9"], ["2", "9"]])
        let winner = expected.budget == "100" ? first : second
        #expect(winner.relatedObjects(forKey: "entries").count == 2)
        #expect(!winner.objectID.isTemporaryID)
    }

    @Test(arguments: StoreKind.allCases)
    func twoContextsImportingTheSameKeysConcurrentlyUnderObjectTrumps(_ kind: StoreKind) async throws {
        let file = try StoreFile(kind, model: try Self.model())
        try await ConstraintConflictTests.importConcurrently(file) { context, worker, n in
            let account = context.insertNewObject(forEntityName: "Account")
            account["number"] = .integer(Int64(n))
            account["balance"] = .decimal(Decimal(worker))
        }
        let numbers = try file.stored("Account", ["number"])
        #expect(numbers.count == 500 && Set(numbers).count == 500)
    }

    @Test(arguments: StoreKind.allCases)
    func aPermanentIDBeforeSavingNeedsTheKeyWhereTheStoreKeepsObjectsUnderIt(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try Self.model())
        let account = file.context.insertNewObject(forEntityName: "Account")
        if kind.keepsObjectsUnderKeys {
            #expect { try file.context.obtainPermanentIDs(for: [account]) } throws: { error in
                (error as? StoreError)?.code == .constraintViolation && "\(error)".contains("Account.number")
            }
            account["number"] = .integer(3)
        }
        try file.context.obtainPermanentIDs(for: [account])
        #expect(!account.objectID.isTemporaryID)
        account["number"] = .integer(3)
        try file.context.save()
        #expect(try file.stored("Account", ["number"]) == [["3"]])
    }
}
