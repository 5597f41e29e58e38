import Drivers
import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

/// Batch inserts into the tables a run's transaction made: batches whose unique keys each rise
/// above every key written before go into a COPY left open (the server shows it running between
/// batches); any other batch — a key met before, keys out of order, a table saved to row by row —
/// is checked by the server and its clashing rows left out, as outside a run.
@Suite struct PostgresStreamingTests {
    static func memberModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Member",
                attributes: [
                    AttributeDescription(name: "number", type: .integer64, isOptional: false),
                    AttributeDescription(name: "email", type: .string),
                ],
                uniquenessConstraints: [["number"], ["email"]], tableName: "member")
        ])
    }

    @Test func risingKeysStreamAndEveryClashIsStillFound() throws {
        let store = try PostgresSchema(model: try Self.memberModel(), options: ["transaction": "run"])
        let member = store.model.entity(named: "Member")!
        let coordinator = store.graph.coordinator
        func insert(_ rows: [(Int64, String?)]) throws -> [Bool] {
            var request = BatchInsertRequest(entity: member)
            for (number, email) in rows {
                let object = request.appendObject()
                request[object, 0] = .integer(number)
                request[object, 1] = email.map { .string($0) } ?? .null
            }
            return try coordinator.execute(request).map { $0 != nil }
        }
        let observer = try PostgresConnection(conninfo: PostgresTestServer.conninfo)
        func copyIsOpen() throws -> Bool {
            let running = try observer.query(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'sluice' AND query LIKE 'COPY %' "
                    + "AND state = 'active' AND query LIKE $1", ["%\(store.schema.name)%"])
            return running == [["1"]]
        }
        #expect(try insert([(1, "a@x"), (2, nil), (3, "b@x")]) == [true, true, true])
        #expect(try copyIsOpen())
        #expect(try insert([(4, "c@x"), (5, "d@x")]) == [true, true])
        #expect(try copyIsOpen())
        // A stored number, a number twice, an email met before under a higher number: checked.
        #expect(try insert([(3, "z@x")]) == [false])
        #expect(try copyIsOpen() == false)
        #expect(try insert([(6, "e@x"), (6, "f@x")]) == [true, false])
        #expect(try insert([(7, "a@x"), (8, "g@x")]) == [false, true])
        // Out of order, no clash: all written; rising again above the highest: streamed again.
        #expect(try insert([(10, "i@x"), (9, "h@x")]) == [true, true])
        #expect(try insert([(11, "zz@x"), (12, nil), (13, nil)]) == [true, true, true])
        #expect(try copyIsOpen())
        // Written row by row by a save: the table's keys are no longer followed.
        store.graph.insert("Member", ["number": 14, "email": .string("k@x")])
        try store.context.save()
        #expect(try insert([(15, "k@x")]) == [false])
        #expect(try insert([(16, "l@x")]) == [true])
        #expect(try copyIsOpen() == false)
        for written in coordinator.persistentStores { try written.finishWriting() }
        let stored = try store.query("SELECT number, email FROM member ORDER BY number")
        let expected: [String] = (1...16).filter { $0 != 7 && $0 != 15 }.map { String($0) }
        #expect(stored.map { $0[0]! } == expected)
        #expect(stored.compactMap { $0[1] }.count == Set(stored.compactMap { $0[1] }).count)
    }

    /// A COPY left open counts toward the session's statement timeout: it is ended well inside it,
    /// so a load slower than the timeout, batch after batch, still goes through.
    @Test func aStreamedCopyEndsWellInsideTheStatementTimeout() throws {
        let url = URL(
            string: PostgresTestServer.freshSchemaURL().absoluteString + "&options=-c%20statement_timeout%3D400")!
        defer { PostgresTestServer.dropSchema(of: url) }
        PostgresStore.register()
        let graph = try TestGraph(
            model: try Self.memberModel(), storeType: PostgresStore.storeType, url: url, options: ["transaction": "run"]
        )
        let member = graph.model.entity(named: "Member")!
        for batch in 0..<6 {
            var request = BatchInsertRequest(entity: member)
            for number in Int64(batch * 10)..<Int64(batch * 10 + 10) {
                request[request.appendObject(), 0] = .integer(number)
            }
            #expect(try graph.coordinator.execute(request).allSatisfy { $0 != nil })
            Thread.sleep(forTimeInterval: 0.15)  // the run reading and mapping the next batch
        }
        try graph.store.finishWriting()
        #expect(try graph.storedCount("Member") == 60)
    }
}
