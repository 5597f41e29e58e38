import Foundation
import ObjectGraph
import TestSupport
import Testing

/// Derived attributes, transient relationships and fetched properties on every kind of store.
@Suite struct ComputedPropertyStoreTests {
    /// A customer with two orders of two and one lines, saved.
    static func shop(_ file: StoreFile) throws -> (customer: ManagedObject, orders: [ManagedObject]) {
        let graph = file.graph
        let customer = graph.insert("Customer", ["name": "Zoë Öster"])
        var orders: [ManagedObject] = []
        for (number, amounts) in [(1, ["70.50", "40"]), (2, ["12.25"])] {
            let order = graph.insert("Order", ["number": .integer(Int64(number))])
            order.setRelatedObject(customer, forKey: "customer")
            for (n, amount) in amounts.enumerated() {
                let line = graph.insert(
                    "Line", ["sku": .string("sku-\(number)-\(n)"), "amount": .decimal(Decimal(string: amount)!)])
                line.setRelatedObject(order, forKey: "order")
            }
            orders.append(order)
        }
        try graph.context.save()
        return (customer, orders)
    }

    @Test(arguments: StoreKind.allCases)
    func derivedAttributesAreComputedAtSaveAndStored(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try ComputedModel.make())
        let before = Date()
        _ = try Self.shop(file)
        #expect(
            try file.stored("Customer", ["name", "searchName", "orderCount"]) == [["Zoë Öster", "zoe oster", "2"]])
        #expect(
            try file.stored("Order", ["number", "total", "customerName"]) == [
                ["1", "110.5", "Zoë Öster"], ["2", "12.25", "Zoë Öster"],
            ])
        #expect(try file.stored("Line", ["sku", "label"]).map(\.[1]) == ["SKU-1-0", "SKU-1-1", "SKU-2-0"])
        let savedAt = try file.reopen().context.fetch(FetchRequest(entityName: "Order")).compactMap {
            $0.date(forKey: "savedAt")
        }
        #expect(
            savedAt.count == 2
                && savedAt.allSatisfy { $0 >= before.addingTimeInterval(-1) && $0 <= Date().addingTimeInterval(1) })
    }

    @Test(arguments: StoreKind.allCases)
    func aChangedMemberRecomputesTheValuesDerivedFromIt(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try ComputedModel.make())
        _ = try Self.shop(file)
        let context = try file.reopen().context
        // Only a line changes: its order's total follows at the save; a value set by hand is replaced.
        let line = try #require(
            try context.fetch(
                FetchRequest(entityName: "Line", predicate: try FetchPredicate(format: "sku == 'sku-2-0'"))
            ).first)
        line["amount"] = .decimal(Decimal(string: "99.75")!)
        let first = try #require(
            try context.fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "number == 1")))
                .first)
        first["total"] = .decimal(1)
        try context.save()
        #expect(try file.stored("Order", ["number", "total"]) == [["1", "110.5"], ["2", "99.75"]])
        // A deleted order leaves its customer's count; a renamed customer renames its orders' copies.
        context.delete(first)
        let customer = try #require(first.relatedObject(forKey: "customer"))
        customer["name"] = "Ada"
        try context.save()
        #expect(try file.stored("Customer", ["searchName", "orderCount"]) == [["ada", "1"]])
        #expect(try file.stored("Order", ["number", "customerName"]) == [["2", "Ada"]])
    }

    @Test(arguments: StoreKind.allCases)
    func transientRelationshipsLiveInMemoryOnly(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try ComputedModel.make())
        let (customer, orders) = try Self.shop(file)
        customer.setRelatedObject(orders[1], forKey: "favorite")
        customer.addRelatedObject(orders[0], forKey: "watched")
        #expect(orders[1].relatedObject(forKey: "favoriteOf") === customer, "the inverse is kept in memory")
        #expect(orders[0].relatedObjects(forKey: "watchers") == [customer])
        try file.context.save()
        let context = try file.reopen().context
        for order in try context.fetch(FetchRequest(entityName: "Order")) {
            #expect(order.relatedObject(forKey: "favoriteOf") == nil)
            #expect(order.relatedObjects(forKey: "watchers").isEmpty, "nothing stored, nothing read back")
            #expect(order.relatedObject(forKey: "customer") != nil, "stored relationships are")
        }
        let fetched = try context.fetch(
            FetchRequest(entityName: "Customer", predicate: try FetchPredicate(format: "favorite == nil")))
        #expect(fetched.count == 1, "a predicate sees a transient relationship as the store has it: empty")
    }

    @Test(arguments: StoreKind.allCases)
    func fetchedPropertiesFetchWithTheSourceAndKeepTheirResultUntilRefresh(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try ComputedModel.make())
        _ = try Self.shop(file)
        file.graph.insert("Customer", ["name": "zoë öster"])
        file.graph.insert("Customer", ["name": "Bob"])
        try file.context.save()
        let context = try file.reopen().context
        let customers = try context.fetch(
            FetchRequest(entityName: "Customer", sortDescriptors: [FetchSortDescriptor("name")]))
        let zoe = try #require(customers.first { $0.string(forKey: "name") == "Zoë Öster" })
        let big = try zoe.fetchedObjects(forKey: "bigOrders")
        #expect(big.map { $0.integer(forKey: "number") } == [1])
        #expect(
            ((zoe.value(forKey: "namesakes") as? [ManagedObject]) ?? []).map { $0.string(forKey: "name") } == [
                "zoë öster"
            ])
        // A weak, one-way property: a change does not reach it until the object is refreshed.
        let second = try #require(
            try context.fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "number == 2")))
                .first)
        second.relatedObjects(forKey: "lines").first?["amount"] = .decimal(500)
        try context.save()
        #expect(try zoe.fetchedObjects(forKey: "bigOrders").count == 1, "kept")
        context.refresh(zoe, mergeChanges: false)
        #expect(try zoe.fetchedObjects(forKey: "bigOrders").map { $0.integer(forKey: "number") } == [2, 1])
    }

    /// A re-import makes new objects for stored rows (an upsert by key): derived values are computed
    /// once the new objects are the stored ones, over the stored members, and an unchanged row
    /// stays as it is (`now()` included).
    @Test(arguments: StoreKind.allCases)
    func aReimportOfTheSameRowsLeavesDerivedValuesAsTheyAre(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try ComputedModel.make())
        _ = try Self.shop(file)
        let before = try file.stored("Order", ["number", "total", "savedAt"])
        let context = try file.reopen().context
        context.mergePolicy = .objectTrumps
        let customer = try #require(try context.fetch(FetchRequest(entityName: "Customer")).first)
        for (number, amounts) in [(1, ["70.50", "40"]), (2, ["12.25"])] {
            let order = context.insertNewObject(forEntityName: "Order")
            order["number"] = .integer(Int64(number))
            order.setRelatedObject(customer, forKey: "customer")
            for (n, amount) in amounts.enumerated() {
                let line = context.insertNewObject(forEntityName: "Line")
                line["sku"] = .string("sku-\(number)-\(n)")
                line["amount"] = .decimal(Decimal(string: amount)!)
                line.setRelatedObject(order, forKey: "order")
            }
        }
        try context.save()
        #expect(try file.stored("Order", ["number", "total", "savedAt"]) == before)
        #expect(try file.stored("Customer", ["orderCount"]) == [["2"]])
        // The orders alone again (a source of orders without their lines): the stored lines count.
        let again = try file.reopen().context
        again.mergePolicy = .objectTrumps
        for number in [1, 2] { again.insertNewObject(forEntityName: "Order")["number"] = .integer(Int64(number)) }
        try again.save()
        #expect(try file.stored("Order", ["number", "total"]) == [["1", "110.5"], ["2", "12.25"]])
    }

    @Test(arguments: StoreKind.allCases)
    func aStoreWithTransientRelationshipsMigratesIntoEveryKind(_ kind: StoreKind) throws {
        let file = try StoreFile(.sqlite, model: try ComputedModel.make())
        let (customer, orders) = try Self.shop(file)
        customer.addRelatedObject(orders[0], forKey: "watched")
        try file.context.save()
        guard let name = kind.fileName else { return }  // in-memory and PostgreSQL take no file
        let directory = try TemporaryDirectory()
        let moved = try file.graph.coordinator.migratePersistentStore(
            file.graph.store, to: directory.url.appendingPathComponent(name), type: kind.storeType,
            options: kind.options)
        let reader = ManagedObjectContext(concurrencyType: .confinement, coordinator: file.graph.coordinator)
        #expect(try reader.count(for: FetchRequest(entityName: "Line")) == 3)
        #expect(moved.identifier != file.graph.store.identifier)
    }

    /// A line that moves to another order leaves the old order's total, whether it moves in memory
    /// or a re-import makes it again under another order (the old order is not in memory then).
    @Test(arguments: StoreKind.allCases)
    func aMemberMovingToAnotherOwnerLeavesTheOldOwnersValues(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try ComputedModel.make())
        _ = try Self.shop(file)
        let context = try file.reopen().context
        let orders = try context.fetch(
            FetchRequest(entityName: "Order", sortDescriptors: [FetchSortDescriptor("number")]))
        let line = try #require(
            try context.fetch(
                FetchRequest(entityName: "Line", predicate: try FetchPredicate(format: "sku == 'sku-1-1'"))
            ).first)
        line.setRelatedObject(orders[1], forKey: "order")
        try context.save()
        #expect(try file.stored("Order", ["number", "total"]) == [["1", "70.5"], ["2", "52.25"]])
        let again = try file.reopen().context
        again.mergePolicy = .objectTrumps
        let second = try #require(
            try again.fetch(FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "number == 2")))
                .first)
        let moved = again.insertNewObject(forEntityName: "Line")  // sku-1-0 again, now under order 2
        moved["sku"] = "sku-1-0"
        moved["amount"] = .decimal(Decimal(string: "70.50")!)
        moved.setRelatedObject(second, forKey: "order")
        try again.save()
        #expect(try file.stored("Order", ["number", "total"]) == [["1", "0"], ["2", "122.75"]])
    }
}
