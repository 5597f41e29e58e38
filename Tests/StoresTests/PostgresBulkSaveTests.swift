import Foundation
import ObjectGraph
import TestSupport
import Testing

/// A save's many rows of one entity in a few statements (`PostgresStore+BulkSave`): inserted by
/// one COPY, updated from a staging table by one UPDATE, deleted by one DELETE — and, when the
/// server refuses such a statement, the rows again one by one, so the error names the object.
@Suite struct PostgresBulkSaveTests {
    @Test func manyRowsAreInsertedUpdatedAndDeletedAsOneByOne() throws {
        let store = try PostgresSchema(model: try PostgresStreamingTests.memberModel())
        let context = store.context
        for number in 1...60 {
            store.graph.insert("Member", ["number": .integer(Int64(number)), "email": .string("m\(number)@x")])
        }
        try context.save()
        let before = try store.query("SELECT number, xmin::text FROM member WHERE number > 40 ORDER BY number")

        context.reset()
        for member in try context.fetch(Self.members("number <= 40")) {
            member["email"] = .string("changed\(Self.number(of: member))@x")
        }
        try context.save()
        #expect(try store.query("SELECT count(*) FROM member WHERE email LIKE 'changed%'") == [["40"]])
        #expect(
            try store.query("SELECT email FROM member WHERE number = 7") == [["changed7@x"]],
            "every row has its own values")
        #expect(
            try store.query("SELECT number, xmin::text FROM member WHERE number > 40 ORDER BY number") == before,
            "rows not saved are not written")

        context.reset()
        for member in try context.fetch(Self.members("number > 30")) { context.delete(member) }
        try context.save()
        #expect(try store.query("SELECT count(*), max(number) FROM member") == [["30", "30"]])
    }

    /// The store's own save (a context finds such clashes before it asks the store).
    @Test func aBulkStatementTheServerRefusesNamesTheObjectThatBrokeIt() throws {
        let store = try PostgresSchema(model: try PostgresStreamingTests.memberModel())
        let member = store.model.entity(named: "Member")!
        for number in 1...20 {
            store.graph.insert("Member", ["number": .integer(Int64(number)), "email": .string("m\(number)@x")])
        }
        try store.context.save()
        let template = try #require(try store.context.fetch(Self.members("number == 1")).first?.objectID)
        func id(_ number: Int64) -> ManagedObjectID { template.withReference(.integer(number)) }
        func refusal(_ request: SaveChangesRequest, names number: Int64) -> Bool {
            do {
                try store.graph.store.save(request)
                return false
            } catch let error as StoreError {
                return error.code == .constraintViolation && error.objectID == id(number)
            } catch { return false }
        }

        // Twenty new members, the fifteenth with an email a stored member has.
        var inserts = SaveChangesRequest()
        for number in Int64(21)...40 {
            inserts.insertedRows.append(
                StoreRow(
                    objectID: id(number), entity: member, version: 1,
                    attributeValues: [.integer(number), .string(number == 35 ? "m3@x" : "m\(number)@x")],
                    toOneDestinations: []))
        }
        #expect(refusal(inserts, names: 35))
        #expect(try store.query("SELECT count(*) FROM member") == [["20"]], "nothing of the save was written")

        // Ten members updated, the fourth onto an email another member keeps.
        var updates = SaveChangesRequest()
        for var row in try store.graph.store.rows(for: (1...10).map(id)) {
            guard case .integer(let number) = row.attributeValues[0] else { continue }
            row.attributeValues[1] = .string(number == 4 ? "m15@x" : "new\(number)@x")
            updates.updatedRows.append(row)
        }
        #expect(updates.updatedRows.count == 10)
        #expect(refusal(updates, names: 4))
        #expect(try store.query("SELECT count(*) FROM member WHERE email LIKE 'new%'") == [["0"]])
        updates.updatedRows.removeAll { $0.objectID == id(4) }
        try store.graph.store.save(updates)
        #expect(try store.query("SELECT count(*) FROM member WHERE email LIKE 'new%'") == [["9"]])
    }

    static func members(_ format: String) throws -> FetchRequest {
        FetchRequest(entityName: "Member", predicate: try FetchPredicate(format: format))
    }

    static func number(of member: ManagedObject) -> Int64 {
        if case .integer(let number) = member["number"] { return number }
        return -1
    }
}
