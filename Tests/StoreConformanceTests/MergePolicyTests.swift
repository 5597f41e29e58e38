import Foundation
import ObjectGraph
import TestSupport
import Testing

/// Two contexts on one store read the same employee; the first saves a change of name and age,
/// then the second saves a change of name and salary under each merge policy.
@Suite struct MergePolicyTests {
    struct Outcome: Sendable, CustomTestStringConvertible {
        let policy: MergePolicy
        let fails: Bool
        let name: String, age: Int64, salary: String
        var testDescription: String { "\(policy)" }
    }

    static let outcomes = [
        Outcome(policy: .error, fails: true, name: "Anne", age: 31, salary: "100"),
        Outcome(policy: .storeTrumps, fails: false, name: "Anne", age: 31, salary: "200"),
        Outcome(policy: .objectTrumps, fails: false, name: "Annie", age: 31, salary: "200"),
        Outcome(policy: .overwrite, fails: false, name: "Annie", age: 30, salary: "200"),
        Outcome(policy: .rollback, fails: false, name: "Anne", age: 31, salary: "100"),
    ]

    @Test(arguments: StoreKind.allCases, outcomes)
    func theSameConflictUnderEachPolicy(_ kind: StoreKind, _ expected: Outcome) throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let first = file.context, second = file.graph.makeContext()
        let ann = file.graph.insert("Employee", ["name": "Ann", "age": .integer(30), "salary": .decimal(100)])
        try first.save()
        let theirs = try second.existingObject(with: ann.objectID)

        ann["name"] = "Anne"
        ann["age"] = .integer(31)
        try first.save()

        theirs["name"] = "Annie"
        theirs["salary"] = .decimal(200)
        second.mergePolicy = expected.policy
        if expected.fails {
            #expect { try second.save() } throws: { error in
                guard let error = error as? MergeError, let conflict = error.conflicts.first else { return false }
                let diff = "\(error)"
                let versions =
                    kind.versionsByContent
                    ? conflict.snapshotVersion != conflict.storeVersion
                    : conflict.snapshotVersion == 1 && conflict.storeVersion == 2
                return error.conflicts.count == 1 && conflict.objectID == ann.objectID && versions
                    && conflict.storeValues?["name"] == "Anne"
                    && conflict.objectValues["name"] == "Annie"
                    && diff.contains(#"name: read "Ann" · this context "Annie" · store "Anne""#)
                    && !diff.contains("hiredAt")
            }
            #expect(second.hasChanges, "a refused save keeps the context's changes")
        } else {
            try second.save()
            #expect(!second.hasChanges)
            #expect(theirs.string(forKey: "name") == expected.name && theirs.integer(forKey: "age") == expected.age)
        }
        let stored = try file.reopen().context.existingObject(with: ann.objectID)
        #expect(stored.string(forKey: "name") == expected.name)
        #expect(stored.integer(forKey: "age") == expected.age)
        #expect(stored.decimal(forKey: "salary") == Decimal(string: expected.salary))
    }

    @Test(arguments: StoreKind.allCases, MergePolicy.allCases)
    func anObjectDeletedElsewhereWhileChangedHere(_ kind: StoreKind, _ policy: MergePolicy) throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let first = file.context, second = file.graph.makeContext()
        let ann = file.graph.insert("Person", ["name": "Ann"])
        try first.save()
        let theirs = try second.existingObject(with: ann.objectID)
        first.delete(ann)
        try first.save()
        theirs["name"] = "Annie"
        second.mergePolicy = policy
        switch policy {
        case .error:
            #expect { try second.save() } throws: { error in
                "\(error)".contains("another save deleted it")
                    && (error as? MergeError)?.conflicts.first?.storeValues == nil
            }
        case .storeTrumps, .rollback:
            try second.save()
            #expect(second.registeredObject(for: ann.objectID) == nil, "the store's delete wins")
            #expect(try file.storedCount("Person") == 0)
        case .objectTrumps, .overwrite:
            try second.save()
            #expect(try file.reopen().context.existingObject(with: ann.objectID).string(forKey: "name") == "Annie")
        }
    }

    @Test(arguments: StoreKind.allCases, MergePolicy.allCases)
    func deletingARowAnotherSaveDeletedAlreadyGoesOnUnderEveryPolicy(_ kind: StoreKind, _ policy: MergePolicy) throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let first = file.context, second = file.graph.makeContext()
        let ann = file.graph.insert("Person", ["name": "Ann"])
        let bob = file.graph.insert("Person", ["name": "Bob"])
        try first.save()
        let theirs = try second.existingObject(with: ann.objectID)
        first.delete(ann)
        try first.save()
        second.mergePolicy = policy
        second.delete(theirs)
        try second.existingObject(with: bob.objectID)["name"] = "Bobby"
        try second.save()  // the delete is done already: the rest of the save goes on
        #expect(second.registeredObject(for: ann.objectID) == nil && !second.hasChanges)
        #expect(try file.stored("Person", ["name"]) == [["Bobby"]])
    }

    @Test(arguments: StoreKind.allCases)
    func withoutAConflictNothingIsMerged(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try CompanyModel.make())
        let ann = file.graph.insert("Person", ["name": "Ann"])
        try file.context.save()
        ann["name"] = "Anne"
        try file.context.save()
        ann["name"] = "Annie"
        try file.context.save()  // its own saves move the version on: no conflict under .error
        #expect(try file.reopen().context.existingObject(with: ann.objectID).string(forKey: "name") == "Annie")
    }
}
