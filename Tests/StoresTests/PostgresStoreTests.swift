import Drivers
import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

/// The PostgreSQL store against the tests' server: values of every type in PostgreSQL's own types,
/// predicates and sorts answered like memory, batch inserts leaving out the rows that clash, a
/// schema holding other tables, and a URL whose password is never shown.
@Suite struct PostgresStoreTests {
    /// `SQLiteStoreTests.samples` less what PostgreSQL text cannot hold (NUL).
    static var samples: [String: [String: AttributeValue]] {
        var samples = SQLiteStoreTests.samples
        samples["max"]!["str"] = .string("naïve \u{1F600} e\u{301} 'quoted' \"double\" \\ back")
        return samples
    }

    static func accountModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Account",
                attributes: [
                    AttributeDescription(name: "number", type: .integer64, isOptional: false),
                    AttributeDescription(name: "balance", type: .decimal),
                ],
                uniquenessConstraints: [["number"]], tableName: "account")
        ])
    }

    @Test func everyAttributeTypeRoundTripsInPostgresTypes() throws {
        let store = try PostgresSchema(model: try SQLiteStoreTests.everyTypeModel())
        for (tag, values) in Self.samples {
            let object = store.graph.insert("Sample", ["tag": .string(tag)])
            for (key, value) in values { object[key] = value }
        }
        try store.context.save()
        let objects = try store.reopen().context.fetch(FetchRequest(entityName: "Sample"))
        #expect(objects.count == Self.samples.count)
        for object in objects {
            let expected = Self.samples[object.string(forKey: "tag")!]!
            for attribute in object.entity.attributes where attribute.name != "tag" {
                let stored = object[attribute.name], wanted = expected[attribute.name] ?? .null
                if case .double(let d) = wanted, d.isNaN {
                    #expect({ if case .double(let e) = stored { return e.isNaN } else { return false } }())
                } else {
                    #expect(stored == wanted, "\(attribute.name) of \(object.string(forKey: "tag")!)")
                }
            }
        }
        // What psql shows: PostgreSQL's types and texts.
        #expect(
            try store.query("SELECT date, day, dec, uuid, bool, i16 FROM \"Sample\" WHERE tag = 'max'")[0] == [
                "2004-11-29 21:33:09.123456+00", "9999-12-31", "12345678901234567890.123456789012345678",
                "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "t", "32767",
            ])
        let types = try store.query(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() "
                + "AND table_name = 'Sample' ORDER BY ordinal_position")
        #expect(
            types.map { $0[1]! } == [
                "bigint", "text", "smallint", "integer", "bigint", "numeric", "double precision", "real", "text",
                "boolean", "timestamp with time zone", "date", "bytea", "uuid", "text",
            ])
    }

    @Test func textWithANulCharacterIsRefusedNamingTheAttribute() throws {
        let store = try PostgresSchema(model: try SQLiteStoreTests.everyTypeModel())
        store.graph.insert("Sample", ["tag": "nul", "str": "a\0b"])
        #expect {
            try store.context.save()
        } throws: { error in
            "\(error)".contains("Sample.str") && "\(error)".contains("U+0000")
        }
        #expect(try store.query("SELECT count(*) FROM \"Sample\"") == [["0"]])
    }

    @Test(arguments: predicateCases)
    func sqlAnswersLikeMemory(_ testCase: PredicateCase) throws {
        let store = try PostgresSchema(model: try CompanyModel.make())
        let people = insertPeople(store.graph)
        try store.context.save()
        let memory = try TestGraph(model: store.model)
        let memoryPeople = insertPeople(memory)
        try memory.context.save()
        let inMemory = try memory.makeContext().fetch(try testCase.request(people: memoryPeople)).map(\.label).sorted()

        let request = try testCase.request(people: people)
        let context = store.graph.makeContext()
        let fetched = try context.fetch(request).map(\.label).sorted()
        #expect(fetched == testCase.expected)
        #expect(fetched == inMemory)
        #expect(try context.count(for: request) == testCase.expected.count)
        #expect(try context.fetchObjectIDs(request).count == testCase.expected.count)
    }

    @Test(arguments: SQLitePredicateTests.sorts)
    func sortingAndPagingMatchMemory(_ sorts: [FetchSortDescriptor]) throws {
        let store = try PostgresSchema(model: try CompanyModel.make())
        insertPeople(store.graph)
        store.graph.insert("Employee", ["name": "ada", "salary": .decimal(Decimal(string: "1200.5")!)])
        try store.context.save()
        let memory = try TestGraph(model: store.model)
        insertPeople(memory)
        memory.insert("Employee", ["name": "ada", "salary": .decimal(Decimal(string: "1200.5")!)])
        try memory.context.save()
        for (offset, limit) in [(0, 0), (1, 3), (4, 10), (10, 1)] {
            var request = FetchRequest(entityName: "Employee", sortDescriptors: sorts)
            request.fetchOffset = offset
            request.fetchLimit = limit
            let expected = try memory.makeContext().fetch(request).map(\.label)
            #expect(
                try store.graph.makeContext().fetch(request).map(\.label) == expected, "offset \(offset) limit \(limit)"
            )
        }
    }

    @Test func aBatchInsertLeavesOutTheRowsThatClashAndWritesTheRest() throws {
        let store = try PostgresSchema(model: try Self.accountModel())
        let account = store.model.entity(named: "Account")!
        let number = account.attribute(named: "number")!.index, balance = account.attribute(named: "balance")!.index
        func request(_ numbers: [Int64]) -> BatchInsertRequest {
            var request = BatchInsertRequest(entity: account)
            for value in numbers {
                let object = request.appendObject()
                request[object, number] = .integer(value)
                request[object, balance] = .decimal(Decimal(value))
            }
            return request
        }
        let coordinator = store.graph.coordinator
        #expect(try coordinator.execute(request([1, 2, 3])).allSatisfy { $0 != nil })
        // 2 is stored, 5 comes twice: the first 5 is written.
        let ids = try coordinator.execute(request([4, 2, 5, 5, 6]))
        #expect(ids.map { $0 != nil } == [true, false, true, false, true])
        #expect(
            try store.query("SELECT number FROM account ORDER BY number").map { $0[0]! } == [
                "1", "2", "3", "4", "5", "6",
            ])
    }

    @Test func aSchemaHoldingOtherTablesKeepsThemAndAClashIsRefused() throws {
        let url = PostgresTestServer.freshSchemaURL()
        defer { PostgresTestServer.dropSchema(of: url) }
        let schema = URLComponents(url: url, resolvingAgainstBaseURL: false)!.queryItems!.last!.value!
        let connection = try PostgresConnection(conninfo: PostgresTestServer.conninfo)
        try connection.execute("CREATE SCHEMA \"\(schema)\"; CREATE TABLE \"\(schema)\".notes (body text)")
        try connection.execute("INSERT INTO \"\(schema)\".notes VALUES ('keep me')")
        PostgresStore.register()
        let graph = try TestGraph(model: try Self.accountModel(), storeType: PostgresStore.storeType, url: url)
        graph.insert("Account", ["number": 1, "balance": .decimal(10)])
        try graph.context.save()
        #expect(try connection.query("SELECT body FROM \"\(schema)\".notes") == [["keep me"]])

        try connection.execute("CREATE SCHEMA \"\(schema)_b\"; CREATE TABLE \"\(schema)_b\".account (x int)")
        defer { try? connection.execute("DROP SCHEMA \"\(schema)_b\" CASCADE") }
        let other = URL(string: url.absoluteString.replacingOccurrences(of: schema, with: schema + "_b"))!
        #expect {
            _ = try TestGraph(model: try Self.accountModel(), storeType: PostgresStore.storeType, url: other)
        } throws: { error in
            (error as? StoreError)?.code == .incompatibleModel && "\(error)".contains("account")
        }
        #expect(try connection.query("SELECT count(*) FROM \"\(schema)_b\".account") == [["0"]])
    }

    /// PostgreSQL keeps 63 bytes of a name: two longer ones sharing those would be one column. A
    /// model with such a name is refused, naming it, before anything is made.
    @Test func aNameLongerThanPostgreSQLKeepsIsRefusedNamingIt() throws {
        let long = "amount_" + String(repeating: "é", count: 30)  // 67 bytes, 37 characters
        let model = try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Account",
                attributes: [
                    AttributeDescription(name: "number", type: .integer64, isOptional: false),
                    AttributeDescription(name: long, type: .decimal),
                ],
                uniquenessConstraints: [["number"]], tableName: "account")
        ])
        let schema = PostgresTestSchema()
        PostgresStore.register()
        #expect {
            _ = try TestGraph(model: model, storeType: PostgresStore.storeType, url: schema.url)
        } throws: { error in
            (error as? StoreError)?.code == .incompatibleModel && "\(error)".contains("column \(long) of table account")
                && "\(error)".contains("63 bytes")
        }
        let made = try schema.query("SELECT count(*) FROM pg_tables WHERE schemaname = $1", [schema.name])
        #expect(made == [["0"]], "nothing was made")
    }

    /// A schema name PostgreSQL would cut to 63 bytes (then not find again by its whole name) or an
    /// empty one is refused before anything is made.
    @Test func aSchemaNameLongerThanPostgreSQLKeepsIsRefused() throws {
        PostgresStore.register()
        for name in [String(repeating: "s", count: 70), ""] {
            let url = URL(string: PostgresTestServer.url + "&schema=\(name)")!
            #expect {
                _ = try TestGraph(model: try Self.accountModel(), storeType: PostgresStore.storeType, url: url)
            } throws: { error in
                (error as? StoreError)?.code == .invalidOption
                    && "\(error)".contains(name.isEmpty ? "empty" : "63 bytes")
            }
        }
        let made = try PostgresTestSchema().query(
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE $1", [String(repeating: "s", count: 60) + "%"])
        #expect(made == [["0"]])
    }

    @Test func theStoresURLNeverHoldsThePassword() throws {
        let url = URL(
            string: PostgresTestServer.url.replacingOccurrences(
                of: "postgresql://", with: "postgresql://sluice:Sw0rdfish!@")
                + "&schema=t_pw_\(UUID().uuidString.prefix(8).lowercased())")!
        defer { PostgresTestServer.dropSchema(of: url) }
        PostgresStore.register()
        let graph = try TestGraph(model: try Self.accountModel(), storeType: PostgresStore.storeType, url: url)
        #expect(graph.store.url?.absoluteString.contains("Sw0rdfish") == false)
        #expect(graph.store.url?.absoluteString.contains("sluice@") == true)
        graph.insert("Account", ["number": 1])
        graph.insert("Account", ["number": 1])
        #expect {
            try graph.context.save()
        } throws: { error in
            !"\(error)".contains("Sw0rdfish")
        }
    }
}
