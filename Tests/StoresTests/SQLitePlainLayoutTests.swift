import Drivers
import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

/// The plain layout as other tools see it: names, keys, foreign keys, value formats; and what it
/// changes for the object graph (IDs of keyed objects, versions by content).
@Suite struct SQLitePlainLayoutTests {
    /// Customers known by their source's integer key, orders pointing at them, a line item per order
    /// known by order and number, products with a text key (their own `id`), tags many-to-many.
    static func shopModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Customer",
                attributes: [
                    AttributeDescription(name: "id", type: .integer64, isOptional: false, columnName: "customer_id"),
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "signedUp", type: .date, columnName: "signed_up"),
                    AttributeDescription(name: "balance", type: .decimal),
                    AttributeDescription(name: "vip", type: .boolean),
                ],
                relationships: [
                    RelationshipDescription(name: "orders", destination: "Order", inverse: "customer", isToMany: true)
                ], uniquenessConstraints: [["id"]], tableName: "customers"),
            EntityDescription(
                name: "Order",
                attributes: [
                    AttributeDescription(name: "number", type: .integer64, isOptional: false, columnName: "order_id"),
                    AttributeDescription(name: "total", type: .decimal),
                ],
                relationships: [
                    RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders"),
                    RelationshipDescription(name: "product", destination: "Product", inverse: nil),
                ], uniquenessConstraints: [["number"]], tableName: "orders"),
            EntityDescription(
                name: "Product",
                attributes: [AttributeDescription(name: "sku", type: .string, isOptional: false)],
                relationships: [
                    RelationshipDescription(name: "tags", destination: "Tag", inverse: "products", isToMany: true)
                ], uniquenessConstraints: [["sku"]], tableName: "products"),
            EntityDescription(
                name: "Tag", attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(name: "products", destination: "Product", inverse: "tags", isToMany: true)
                ], tableName: "tags"),
        ])
    }

    static func fill(_ graph: TestGraph) throws {
        let ada = graph.insert(
            "Customer",
            [
                "id": 10, "name": "Ada", "balance": .decimal(Decimal(string: "512.25")!),
                "signedUp": .date(Date(timeIntervalSince1970: 1_700_000_000.5)), "vip": true,
            ])
        let bob = graph.insert("Customer", ["id": 11, "name": "Bob", "balance": .decimal(Decimal(string: "99.9")!)])
        let widget = graph.insert("Product", ["sku": "W-1"])
        widget.addRelatedObject(graph.insert("Tag", ["name": "blue"]), forKey: "tags")
        for (number, customer) in [(1001, ada), (1002, bob), (1003, ada)] {
            let order = graph.insert("Order", ["number": .integer(Int64(number)), "total": .decimal(Decimal(number))])
            order.setRelatedObject(customer, forKey: "customer")
            order.setRelatedObject(widget, forKey: "product")
        }
        try graph.context.save()
    }

    @Test func theFileHasTheSourcesNamesKeysAndReferences() throws {
        let file = try SQLiteFile(model: try Self.shopModel())
        try Self.fill(file.graph)
        #expect(
            try file.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") == [
                [.text("_sluice_metadata")], [.text("customers")], [.text("orders")], [.text("products")],
                [.text("products_tags")], [.text("tags")],
            ])
        #expect(
            try file.query("SELECT name, type, pk FROM pragma_table_info('customers') ORDER BY cid") == [
                [.text("customer_id"), .text("INTEGER"), .integer(1)], [.text("name"), .text("TEXT"), .integer(0)],
                [.text("signed_up"), .text("DATETIME"), .integer(0)],
                [.text("balance"), .text("NUMERIC"), .integer(0)],
                [.text("vip"), .text("BOOLEAN"), .integer(0)],
            ])
        #expect(
            try file.query("SELECT name FROM pragma_table_info('orders') ORDER BY cid") == [
                [.text("order_id")], [.text("total")], [.text("customer_id")], [.text("product_id")],
            ])
        #expect(
            try file.query("SELECT \"from\", \"table\", \"to\" FROM pragma_foreign_key_list('orders') ORDER BY 1") == [
                [.text("customer_id"), .text("customers"), .text("customer_id")],
                [.text("product_id"), .text("products"), .text("sku")],
            ])
        // The source's keys join the tables, text keys too: a product is kept under its sku.
        #expect(
            try file.query(
                """
                SELECT o.order_id, c.name, p.sku FROM orders o JOIN customers c USING (customer_id)
                JOIN products p ON p.sku = o.product_id ORDER BY 1
                """) == [
                    [.integer(1001), .text("Ada"), .text("W-1")], [.integer(1002), .text("Bob"), .text("W-1")],
                    [.integer(1003), .text("Ada"), .text("W-1")],
                ])
        #expect(
            try file.query("SELECT sku, tag_id FROM products_tags") == [[.text("W-1"), .integer(1)]],
            "a many-to-many's join table names each side after the key it holds")
        // Numbers compare as numbers, dates read with SQLite's date functions, booleans are 0/1.
        #expect(try file.query("SELECT count(*) FROM customers WHERE balance > 100") == [[.integer(1)]])
        #expect(
            try file.query("SELECT datetime(signed_up), balance, vip FROM customers WHERE customer_id = 10") == [
                [.text("2023-11-14 22:13:20"), .real(512.25), .integer(1)]
            ])
        #expect(try file.query("SELECT name FROM customers ORDER BY balance DESC") == [[.text("Ada")], [.text("Bob")]])
        let columns = try file.query(
            "SELECT p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'")
        #expect(!columns.contains { if case .text(let name) = $0[0] { name.hasPrefix("_") } else { true } })
    }

    @Test func aStoredObjectKeepsTheKeyItIsKeptUnder() throws {
        let file = try SQLiteFile(model: try Self.shopModel())
        try Self.fill(file.graph)
        let ada = try #require(try file.context.fetch(FetchRequest(entityName: "Customer")).first { $0["id"] == 10 })
        ada["id"] = 12
        #expect { try file.context.save() } throws: { error in
            (error as? StoreError)?.code == .constraintViolation && "\(error)".contains("cannot change its id")
        }
        #expect(try file.query("SELECT customer_id FROM customers ORDER BY 1") == [[.integer(10)], [.integer(11)]])
    }

    /// Without a version column a row's version is a hash of its values: a change another program
    /// makes is a conflict too, settled by the merge policy.
    @Test(arguments: [MergePolicy.error, .objectTrumps])
    func anotherProgramsChangeIsAConflict(policy: MergePolicy) throws {
        let file = try SQLiteFile(model: try Self.shopModel())
        try Self.fill(file.graph)
        let context = try file.reopen().context
        let bob = try #require(try context.fetch(FetchRequest(entityName: "Customer")).first { $0["id"] == 11 })
        try SQLiteConnection(path: file.url.path).execute("UPDATE customers SET name = 'Robert' WHERE customer_id = 11")
        bob["balance"] = .decimal(1)
        context.mergePolicy = policy
        if policy == .error {
            #expect { try context.save() } throws: { error in
                (error as? MergeError)?.conflicts.first?.storeValues?["name"] == "Robert"
            }
        } else {
            try context.save()
            #expect(
                try file.query("SELECT name, balance FROM customers WHERE customer_id = 11") == [
                    [.text("Robert"), .integer(1)]
                ])
        }
    }

    /// A decimal no double holds is kept exactly (as its digits); fetches still compare and sort it
    /// exactly, finishing in memory what SQL would order wrong.
    @Test func decimalsBeyondADoubleStayExactAndCompareRight() throws {
        let file = try SQLiteFile(model: try Self.shopModel())
        try Self.fill(file.graph)
        let precise = Decimal(string: "500.00000000000000000001")!
        file.graph.insert("Customer", ["id": 12, "name": "Cy", "balance": .decimal(precise)])
        try file.context.save()
        #expect(
            try file.query("SELECT typeof(balance) FROM customers ORDER BY customer_id").map { $0[0] } == [
                .text("real"), .text("real"), .text("blob"),
            ])
        let context = try file.reopen().context
        var request = FetchRequest(
            entityName: "Customer", predicate: try FetchPredicate(format: "balance > 500 AND balance < 510"))
        #expect(try context.fetch(request).map { $0.string(forKey: "name") } == ["Cy"])
        request = FetchRequest(entityName: "Customer", sortDescriptors: [FetchSortDescriptor("balance")])
        #expect(try context.fetch(request).map { $0.string(forKey: "name") } == ["Bob", "Cy", "Ada"])
        #expect(try context.fetch(request).map { $0.decimal(forKey: "balance") }.contains(precise))
    }

    @Test(arguments: ["iso8601", "unix"])
    func datesComeBackExactAndCompareInSQL(dates: String) throws {
        let file = try SQLiteFile(model: try Self.shopModel(), options: ["dates": dates])
        let instants: [Double] = [
            0, 1_700_000_000, 1_700_000_000.001, 1_700_000_000.123456789, -86_400.25, 951_782_400,
        ]
        for (offset, instant) in instants.enumerated() {
            file.graph.insert(
                "Customer", ["id": .integer(Int64(offset)), "signedUp": .date(Date(timeIntervalSince1970: instant))])
        }
        try file.context.save()
        let context = try file.reopen(options: ["dates": dates]).context
        var request = FetchRequest(entityName: "Customer", sortDescriptors: [FetchSortDescriptor("signedUp")])
        let read = try context.fetch(request).map { $0.date(forKey: "signedUp")!.timeIntervalSince1970 }
        #expect(read == instants.sorted(), "every date exact, sorted in SQL")
        request.predicate = try FetchPredicate(
            format: "signedUp >= %@", Date(timeIntervalSince1970: 1_700_000_000.001))
        #expect(try context.count(for: request) == 2)
        let stored = try file.query("SELECT signed_up FROM customers WHERE customer_id = 1")[0][0]
        #expect(stored == (dates == "unix" ? .integer(1_700_000_000) : .text("2023-11-14 22:13:20")))
    }

    @Test func aStoreKeepsItsLayoutAndRefusesAnother() throws {
        let file = try SQLiteFile(model: try Self.shopModel(), options: ["layout": "graph"])
        try Self.fill(file.graph)
        #expect(
            try file.query("SELECT count(*) FROM pragma_table_info('Customer') WHERE name = '_pk'") == [[.integer(1)]])
        #expect(throws: StoreError.self) { try file.reopen(options: ["layout": "plain"]) }
        let reopened = try file.reopen()
        #expect(try reopened.context.count(for: FetchRequest(entityName: "Order")) == 3)
        #expect(throws: StoreError.self) {
            try SQLiteFile(model: try Self.shopModel(), options: ["layout": "graph", "dates": "unix"])
        }
        #expect(throws: StoreError.self) { try SQLiteFile(model: try Self.shopModel(), options: ["dates": "epoch"]) }
    }

    /// What the table itself keeps present (NOT NULL, the INTEGER PRIMARY KEY), which whole-graph
    /// validation then need not scan for; nothing in the graph layout, which declares no NOT NULL.
    @Test func theStoreSaysWhichRequiredValuesItsTablesEnforce() throws {
        let model = try Self.shopModel()
        let customer = try #require(model.entity(named: "Customer")), order = try #require(model.entity(named: "Order"))
        for (layout, expected) in [("plain", true), ("graph", false)] {
            let file = try SQLiteFile(model: model, options: ["layout": layout])
            try Self.fill(file.graph)
            let coordinator = file.context.persistentStoreCoordinator
            #expect(try coordinator.enforcesPresence(of: customer.attribute(named: "id")!, in: customer) == expected)
            #expect(try coordinator.enforcesPresence(of: order.attribute(named: "number")!, in: order) == expected)
            #expect(try !coordinator.enforcesPresence(of: customer.attribute(named: "name")!, in: customer))
        }
    }

    /// Key counters and the layout live in the one metadata table; a reopened store goes on from them.
    @Test func keysGoOnAfterReopeningWithoutATableOfTheirOwn() throws {
        let file = try SQLiteFile(model: try Self.shopModel())
        try Self.fill(file.graph)
        let graph = try file.reopen()
        graph.insert("Tag", ["name": "red"])
        try graph.context.save()
        #expect(
            try file.query("SELECT id, name FROM tags ORDER BY id") == [
                [.integer(1), .text("blue")], [.integer(2), .text("red")],
            ])
        #expect(try file.query("SELECT value FROM _sluice_metadata WHERE key = 'layout'") == [[.text("plain")]])
    }

    /// A store made before text keys (no `textKeys` in its metadata) keeps a text-keyed entity under
    /// an integer key column of its own, as it was made.
    @Test func aStoreMadeBeforeTextKeysKeepsItsIntegerKeys() throws {
        let file = try SQLiteFile(model: try Self.shopModel())
        #expect(try file.query("SELECT value FROM _sluice_metadata WHERE key = 'textKeys'") == [[.text("true")]])
        file.graph.coordinator.removePersistentStore(file.graph.store)
        // The tables as a store of before made them (empty: the store reopened makes them again).
        try SQLiteConnection(path: file.url.path).execute(
            """
            DELETE FROM _sluice_metadata WHERE key = 'textKeys';
            DROP TABLE products_tags; DROP TABLE orders; DROP TABLE products;
            """)
        try Self.fill(try file.reopen())
        #expect(
            try file.query("SELECT name, type, pk FROM pragma_table_info('products') ORDER BY cid") == [
                [.text("id"), .text("INTEGER"), .integer(1)], [.text("sku"), .text("TEXT"), .integer(0)],
            ])
        #expect(try file.query("SELECT DISTINCT typeof(product_id) FROM orders") == [[.text("integer")]])
        let recorded = try file.query("SELECT value FROM _sluice_metadata WHERE key = 'textKeys'")
        #expect(recorded == [] || recorded == [[.text("false")]])
    }

    /// Lightweight migration (option `lightweight_migration`): a model that only adds an entity and
    /// optional attributes opens the store, its tables and columns added; one that changes a type or
    /// adds a required attribute is refused, the file as it was.
    @Test func aModelThatOnlyAddsOpensTheStoreAndOthersAreRefused() throws {
        func model(_ customer: [AttributeDescription], tag: Bool = false) throws -> ManagedObjectModel {
            var entities = [
                EntityDescription(
                    name: "Customer",
                    attributes: [AttributeDescription(name: "id", type: .integer64, isOptional: false)] + customer,
                    uniquenessConstraints: [["id"]], tableName: "customers")
            ]
            if tag {
                entities.append(
                    EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)]))
            }
            return try ManagedObjectModel(entities: entities)
        }
        let name = AttributeDescription(name: "name", type: .string)
        let file = try SQLiteFile(model: try model([name]))
        file.graph.insert("Customer", ["id": 1, "name": "Ann"])
        try file.context.save()
        file.graph.coordinator.removePersistentStore(file.graph.store)
        let before = try file.query("SELECT sql FROM sqlite_master ORDER BY name")
        for refused in [
            try model([AttributeDescription(name: "name", type: .integer64)]),
            try model([name, AttributeDescription(name: "phone", type: .string, isOptional: false)]),
        ] {
            #expect(throws: StoreError.self) {
                _ = try TestGraph(
                    model: refused, storeType: SQLiteStore.storeType, url: file.url,
                    options: ["lightweight_migration": "true"])
            }
            #expect(try file.query("SELECT sql FROM sqlite_master ORDER BY name") == before)
        }
        let grown = try model([name, AttributeDescription(name: "phone", type: .string)], tag: true)
        let graph = try TestGraph(
            model: grown, storeType: SQLiteStore.storeType, url: file.url, options: ["lightweight_migration": "true"])
        graph.insert("Tag", ["label": "new"])
        try graph.context.save()
        #expect(try file.query("SELECT id, name, phone FROM customers") == [[.integer(1), .text("Ann"), .null]])
        #expect(try file.query("SELECT label FROM Tag") == [[.text("new")]])
        graph.coordinator.removePersistentStore(graph.store)
        // From then on the store is the grown model's: it opens without the option.
        _ = try TestGraph(model: grown, storeType: SQLiteStore.storeType, url: file.url)
    }

    /// A table nothing refers to and without a key attribute is kept under SQLite's rowid (issue
    /// 33): no column added. A store written before, whose such table has an `id INTEGER PRIMARY
    /// KEY` (the rowid by another name), still opens, grows and reads its rows.
    @Test func aTableKeptUnderTheRowidAlsoOpensWithTheKeyColumnOfBefore() throws {
        func model(_ extra: [AttributeDescription] = []) throws -> ManagedObjectModel {
            try ManagedObjectModel(entities: [
                EntityDescription(
                    name: "Log", attributes: [AttributeDescription(name: "msg", type: .string)] + extra,
                    tableName: "log")
            ])
        }
        let file = try SQLiteFile(model: try model())
        file.graph.insert("Log", ["msg": "start"])
        file.graph.insert("Log", ["msg": "start"])
        try file.context.save()
        #expect(try file.query("SELECT name FROM pragma_table_info('log')") == [[.text("msg")]])
        #expect(
            try file.query("SELECT rowid, msg FROM log ORDER BY 1") == [
                [.integer(1), .text("start")], [.integer(2), .text("start")],
            ])
        file.graph.coordinator.removePersistentStore(file.graph.store)
        // As an earlier version made the table: a key column of its own.
        let connection = try SQLiteConnection(path: file.url.path, mode: .readWrite)
        try connection.execute(
            """
            CREATE TABLE old_log (id INTEGER PRIMARY KEY, msg TEXT);
            INSERT INTO old_log SELECT rowid, msg FROM log;
            DROP TABLE log;
            ALTER TABLE old_log RENAME TO log;
            """)
        let grown = try model([AttributeDescription(name: "level", type: .string)])
        let graph = try TestGraph(
            model: grown, storeType: SQLiteStore.storeType, url: file.url, options: ["lightweight_migration": "true"])
        graph.insert("Log", ["msg": "stop", "level": "info"])
        try graph.context.save()
        #expect(try graph.makeContext().fetch(FetchRequest(entityName: "Log")).count == 3)
        #expect(
            try file.query("SELECT id, msg, level FROM log ORDER BY id") == [
                [.integer(1), .text("start"), .null], [.integer(2), .text("start"), .null],
                [.integer(3), .text("stop"), .text("info")],
            ])
    }
}
