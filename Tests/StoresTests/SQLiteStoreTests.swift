import Drivers
import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

@Suite struct SQLiteStoreTests {
    static func everyTypeModel() throws -> ManagedObjectModel {
        let types: [(String, AttributeType)] = [
            ("i16", .integer16), ("i32", .integer32), ("i64", .integer64), ("dec", .decimal),
            ("dbl", .double), ("flt", .float), ("str", .string), ("bool", .boolean),
            ("date", .date), ("day", .calendarDate), ("bin", .binary), ("uuid", .uuid), ("uri", .uri),
        ]
        return try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Sample",
                attributes: [AttributeDescription(name: "tag", type: .string)]
                    + types.map { AttributeDescription(name: $0.0, type: $0.1) })
        ])
    }

    static let samples: [String: [String: AttributeValue]] = [
        "max": [
            "i16": .integer(Int64(Int16.max)), "i32": .integer(Int64(Int32.max)), "i64": .integer(Int64.max),
            "dec": .decimal(Decimal(string: "12345678901234567890.123456789012345678")!),
            "dbl": .double(Double.greatestFiniteMagnitude),
            "flt": .float(Float.greatestFiniteMagnitude), "str": .string("naïve \u{1F600} e\u{301} \0 nul"),
            "bool": .boolean(true),
            "date": .date(Date(timeIntervalSinceReferenceDate: 123_456_789.123456)),
            "day": .date(Date(timeIntervalSince1970: 253_402_214_400)),  // 9999-12-31
            "bin": .binary(Data([0, 1, 2, 255])),
            "uuid": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
            "uri": .uri(URL(string: "https://example.com/a?b=c#d")!),
        ],
        "min": [
            "i16": .integer(Int64(Int16.min)), "i32": .integer(Int64(Int32.min)), "i64": .integer(Int64.min),
            "dec": .decimal(Decimal(string: "-0.000000000000000000000000000001")!), "dbl": .double(-Double.infinity),
            "flt": .float(-0.0), "str": .string(""), "bool": .boolean(false),
            "date": .date(Date(timeIntervalSinceReferenceDate: -978_307_200)), "bin": .binary(Data()),
            "day": .date(Date(timeIntervalSince1970: -62_135_596_800)),  // 0001-01-01
            "uuid": .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!),
            "uri": .uri(URL(fileURLWithPath: "/tmp/a b")),
        ],
        "odd": [
            "dbl": .double(.nan), "flt": .float(.infinity), "dec": .decimal(Decimal(string: "1.50")!),
            "i64": .integer(0),
        ],
        "nulls": [:],
    ]

    @Test(arguments: ["plain", "graph"])
    func everyAttributeTypeRoundTrips(layout: String) throws {
        let file = try SQLiteFile(model: try Self.everyTypeModel(), options: ["layout": layout])
        for (tag, values) in Self.samples {
            let object = file.graph.insert("Sample", ["tag": .string(tag)])
            for (key, value) in values { object[key] = value }
        }
        try file.context.save()
        let reopened = try file.reopen()
        let objects = try reopened.context.fetch(FetchRequest(entityName: "Sample"))
        #expect(objects.count == Self.samples.count)
        #expect(try reopened.context.fetch(FetchRequest(entityName: "Sample")).allSatisfy { !$0.hasChanges })
        for object in objects {
            let expected = Self.samples[object.string(forKey: "tag")!]!
            for attribute in object.entity.attributes where attribute.name != "tag" {
                let stored = object[attribute.name], wanted = expected[attribute.name] ?? .null
                if case .double(let d) = wanted, d.isNaN {
                    guard case .double(let e) = stored else {
                        Issue.record("NaN came back as \(stored)")
                        continue
                    }
                    #expect(e.isNaN)
                } else {
                    #expect(stored == wanted, "\(attribute.name) of \(object.string(forKey: "tag")!)")
                }
            }
        }
        let max = try file.query("SELECT date, dec, uuid, bool FROM Sample WHERE tag = 'max'")[0]
        let odd = try file.query("SELECT dec, typeof(dec) FROM Sample WHERE tag = 'odd'")[0]
        if layout == "graph" {
            // Dates as seconds since 2001, decimals as exact text.
            #expect(
                max == [
                    .real(123_456_789.123456), .text("12345678901234567890.123456789012345678"),
                    .text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"), .integer(1),
                ])
            #expect(odd == [.text("1.5"), .text("text")])
        } else {
            // Dates as text SQLite's date functions read; a decimal as a number where one holds it
            // exactly, else its digits (as a BLOB: a NUMERIC column would round text to 15 digits).
            #expect(
                max == [
                    .text("2004-11-29 21:33:09.123456"), .blob(Data("12345678901234567890.123456789012345678".utf8)),
                    .text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"), .integer(1),
                ])
            #expect(odd == [.real(1.5), .text("real")])
            #expect(
                try file.query("SELECT datetime(date), date(date) FROM Sample WHERE tag = 'max'")[0] == [
                    .text("2004-11-29 21:33:09"), .text("2004-11-29"),
                ])
            // A calendar date is the day alone, in a DATE column: what the source's own SQL compares.
            #expect(
                try file.query("SELECT day, date(day) = day FROM Sample WHERE tag IN ('max', 'min') ORDER BY day")
                    == [[.text("0001-01-01"), .integer(1)], [.text("9999-12-31"), .integer(1)]])
            #expect(
                try file.query("SELECT type FROM pragma_table_info('Sample') WHERE name = 'day'") == [[.text("DATE")]])
        }
    }

    @Test func relationshipsOfEveryKindAreWrittenAndReadBack() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        let g = file.graph
        let sales = g.insert("Department", ["name": "Sales"])
        let ada = g.insert("Employee", ["name": "Ada"]), bob = g.insert("Employee", ["name": "Bob"]),
            cy = g.insert("Employee", ["name": "Cy"])
        let apollo = g.insert("Project", ["title": "Apollo"]), gemini = g.insert("Project", ["title": "Gemini"])
        let badge = g.insert("Badge", ["code": "B-1"])
        let list = g.insert("Playlist", ["title": "Mix"])
        let tracks = ["one", "two", "three"].map { g.insert("Track", ["title": .string($0)]) }
        for person in [ada, bob] { person.setRelatedObject(sales, forKey: "department") }
        ada.addRelatedObject(apollo, forKey: "projects")
        ada.addRelatedObject(gemini, forKey: "projects")
        bob.addRelatedObject(gemini, forKey: "projects")
        bob.setRelatedObject(ada, forKey: "manager")
        cy.setRelatedObject(ada, forKey: "manager")
        ada.addRelatedObject(bob, forKey: "cousins")
        ada.setRelatedObject(cy, forKey: "spouse")
        bob.setRelatedObject(badge, forKey: "badge")
        for track in tracks.reversed() { list.addRelatedObject(track, forKey: "tracks") }
        try file.context.save()

        let context = try file.reopen().context
        func one(_ entity: String, _ name: String) throws -> ManagedObject {
            let key = entity == "Project" || entity == "Playlist" ? "title" : "name"
            return try context.fetch(
                FetchRequest(entityName: entity, predicate: try FetchPredicate(format: "%K == %@", key, name)))[0]
        }
        let ada2 = try one("Employee", "Ada"), bob2 = try one("Employee", "Bob"), cy2 = try one("Employee", "Cy")
        #expect(Set(try one("Department", "Sales").relatedObjects(forKey: "employees").map(\.label)) == ["Ada", "Bob"])
        #expect(Set(ada2.relatedObjects(forKey: "projects").map(\.label)) == ["Apollo", "Gemini"])
        #expect(Set(try one("Project", "Gemini").relatedObjects(forKey: "members").map(\.label)) == ["Ada", "Bob"])
        #expect(Set(ada2.relatedObjects(forKey: "reports").map(\.label)) == ["Bob", "Cy"])
        #expect(bob2.relatedObject(forKey: "manager") === ada2)
        #expect(bob2.relatedObjects(forKey: "cousins").map(\.label) == ["Ada"])
        #expect(ada2.relatedObjects(forKey: "cousins").map(\.label) == ["Bob"])
        #expect(cy2.relatedObject(forKey: "spouse") === ada2)
        #expect(bob2.relatedObject(forKey: "badge")?.label == "B-1")
        #expect(try one("Playlist", "Mix").relatedObjects(forKey: "tracks").map(\.label) == ["three", "two", "one"])

        // Reorder and unlink, then read back again.
        let mix = try one("Playlist", "Mix")
        let three = mix.relatedObjects(forKey: "tracks")[0]
        mix.removeRelatedObject(three, forKey: "tracks")
        mix.addRelatedObject(three, forKey: "tracks")
        ada2.removeRelatedObject(try one("Project", "Gemini"), forKey: "projects")
        try context.save()
        let context3 = try file.reopen().context
        let mix3 = try context3.fetch(FetchRequest(entityName: "Playlist"))[0]
        #expect(mix3.relatedObjects(forKey: "tracks").map(\.label) == ["two", "one", "three"])
        let gemini3 = try context3.fetch(
            FetchRequest(entityName: "Project", predicate: try FetchPredicate(format: "title == 'Gemini'")))[0]
        #expect(gemini3.relatedObjects(forKey: "members").map(\.label) == ["Bob"])
    }

    @Test func deleteRulesReachTheFile() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        let g = file.graph
        let sales = g.insert("Department", ["name": "Sales"])
        let room = g.insert("Room", ["number": "1"])
        room.setRelatedObject(sales, forKey: "department")
        let desk = g.insert("Desk", ["label": "D"])
        desk.setRelatedObject(room, forKey: "room")
        let ada = g.insert("Employee", ["name": "Ada"])
        ada.setRelatedObject(sales, forKey: "department")
        let apollo = g.insert("Project", ["title": "Apollo"])
        ada.addRelatedObject(apollo, forKey: "projects")
        let badge = g.insert("Badge", ["code": "B"])
        ada.setRelatedObject(badge, forKey: "badge")
        try file.context.save()

        let context = try file.reopen().context
        let department = try context.fetch(FetchRequest(entityName: "Department"))[0]
        context.delete(department)  // cascade rooms → desks; nullify employees
        try context.save()
        #expect(try file.query("SELECT count(*) FROM Room")[0] == [.integer(0)])
        #expect(try file.query("SELECT count(*) FROM Desk")[0] == [.integer(0)])
        #expect(try file.query("SELECT department_id FROM Person WHERE name = 'Ada'")[0] == [.null])

        let employee = try context.fetch(FetchRequest(entityName: "Employee"))[0]
        context.delete(employee)  // its many-to-many links go; the badge (No Action, inverse-less) stays
        try context.save()
        #expect(try file.query("SELECT count(*) FROM Person_projects")[0] == [.integer(0)])
        #expect(try file.query("SELECT count(*) FROM Project")[0] == [.integer(1)])
        #expect(try file.query("SELECT count(*) FROM Badge")[0] == [.integer(1)])
    }

    @Test func denyRuleFailsTheSaveAndTheFileStaysAsItWas() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        let sales = file.graph.insert("Department", ["name": "Sales"])
        file.graph.insert("Contract", ["code": "C"]).setRelatedObject(sales, forKey: "department")
        try file.context.save()
        let before = try file.dump()
        file.context.delete(sales)
        #expect(throws: ValidationError.self) { try file.context.save() }
        #expect(try file.dump() == before)
    }

    @Test func aStoreFailureRollsBackTheWholeSave() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        file.graph.insert("Department", ["name": "Sales"])
        try file.context.save()
        let before = try file.dump()
        // Many good rows, then one that breaks the unique name: nothing of the save may remain.
        for n in 0..<50 { file.graph.insert("Employee", ["name": .string("E\(n)")]) }
        file.graph.insert("Department", ["name": "Sales"])
        #expect { try file.context.save() } throws: { error in
            (error as? MergeError)?.constraintConflicts.first?.entityName == "Department"
        }
        #expect(try file.dump() == before)
        #expect(file.context.hasChanges, "the context keeps its changes after a failed save")
    }

    @Test func largeSavesUseMultiRowInsertsAndNameTheRowThatBreaksAConstraint() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        for n in 0..<1_000 {
            file.graph.insert("Department", ["name": .string("D\(n)"), "budget": .decimal(Decimal(n))])
        }
        try file.context.save()
        #expect(
            try file.query("SELECT count(*), sum(CAST(budget AS INTEGER)) FROM Department")[0] == [
                .integer(1_000), .integer(499_500),
            ])
        let before = try file.dump()

        var duplicate: ManagedObject?
        for n in 0..<300 {
            let department = file.graph.insert("Department", ["name": .string(n == 150 ? "D7" : "E\(n)")])
            if n == 150 { duplicate = department }
        }
        #expect { try file.context.save() } throws: { error in
            (error as? MergeError)?.constraintConflicts.map(\.objectID) == [duplicate!.objectID]
        }
        #expect(try file.dump() == before)

        // The store enforces the constraint itself too (rows that bypass contexts), naming the row.
        let store = file.graph.store, entity = file.model.entity(named: "Department")!
        let template = ManagedObjectID(
            entityName: "Department", storeIdentifier: store.identifier, reference: .integer(0))
        var request = SaveChangesRequest()
        let names = (0..<300).map { $0 == 150 ? "D7" : "E\($0)" }
        // The plain layout keeps departments under their name: their references are the names.
        let references: [ManagedObjectID.Reference] =
            store.referenceAttribute(for: entity) != nil
            ? names.map { .string($0) } : try store.newReferences(for: entity, count: names.count)
        for (name, reference) in zip(names, references) {
            request.insertedRows.append(
                StoreRow(
                    objectID: template.withReference(reference), entity: entity, version: 1,
                    attributeValues: [.string(name), .null],
                    toOneDestinations: Array(repeating: nil, count: entity.relationships.count)))
        }
        #expect { try store.save(request) } throws: { error in
            (error as? StoreError)?.code == .constraintViolation
                && (error as? StoreError)?.objectID == request.insertedRows[150].objectID
        }
        #expect(try file.dump() == before)
    }

    @Test func concurrentUpdatesConflictAndLeaveTheFileUnchanged() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        file.graph.insert("Department", ["name": "Sales"])
        try file.context.save()
        let first = file.graph.makeContext(), second = file.graph.makeContext()
        let a = try first.fetch(FetchRequest(entityName: "Department"))[0]
        let b = try second.fetch(FetchRequest(entityName: "Department"))[0]
        a["budget"] = .decimal(10)
        try first.save()
        let before = try file.dump()
        b["budget"] = .decimal(20)
        file.graph.insert("Department", ["name": "Ops"], into: second)
        #expect { try second.save() } throws: { ($0 as? MergeError)?.conflicts.count == 1 }
        #expect(try file.dump() == before)
    }

    @Test func reopeningWithAnotherModelIsRefusedNamingTheDifference() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        file.graph.insert("Department", ["name": "Sales"])
        try file.context.save()
        file.graph.coordinator.removePersistentStore(file.graph.store)
        let other = try ManagedObjectModel(entities: [
            EntityDescription(name: "Department", attributes: [AttributeDescription(name: "name", type: .integer64)])
        ])
        #expect { try TestGraph(model: other, storeType: SQLiteStore.storeType, url: file.url) } throws: { error in
            (error as? StoreError)?.code == .incompatibleModel && "\(error)".contains("Department")
        }
        #expect(try file.query("SELECT name FROM Department") == [[.text("Sales")]], "a refused store is not touched")
    }

    @Test func aPlainSQLiteFileIsNotTakenForAStore() throws {
        SQLiteStore.register()
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("other.sqlite")
        try SQLiteConnection(path: url.path).execute("CREATE TABLE t(a)")
        #expect { try TestGraph(model: try CompanyModel.make(), storeType: SQLiteStore.storeType, url: url) } throws: {
            error in
            "\(error)".contains("not a Sluice store")
        }
    }

    @Test func unknownOrInvalidOptionsAreErrors() throws {
        SQLiteStore.register()
        let directory = try TemporaryDirectory()
        for options in [["journal": "WAL"], ["journal_mode": "FAST"], ["cache_size": "big"], ["index_build": "never"]] {
            #expect(throws: StoreError.self, "\(options)") {
                try TestGraph(
                    model: try CompanyModel.make(), storeType: SQLiteStore.storeType,
                    url: directory.url.appendingPathComponent("s.sqlite"), options: options)
            }
        }
        let graph = try TestGraph(
            model: try CompanyModel.make(), storeType: SQLiteStore.storeType,
            url: directory.url.appendingPathComponent("ok.sqlite"),
            options: [
                "journal_mode": "delete", "synchronous": "full", "cache_size": "-2000", "index_build": "during_load",
            ])
        graph.insert("Badge", ["code": "x"])
        try graph.context.save()
        #expect(try graph.storedCount("Badge") == 1)
    }

    @Test func faultsFireOneRowFetchAndBatchesLoadTogether() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        for n in 0..<25 { file.graph.insert("Badge", ["code": .string(String(format: "B%02d", n))]) }
        try file.context.save()
        let context = file.graph.makeContext()
        var request = FetchRequest(entityName: "Badge", sortDescriptors: [FetchSortDescriptor("code")])
        request.returnsObjectsAsFaults = true
        let faults = try context.fetch(request)
        #expect(faults.count == 25 && faults.allSatisfy { $0.isFault })
        #expect(faults[3].label == "B03")
        #expect(!faults[3].isFault && faults[4].isFault)

        let batched = file.graph.makeContext()
        request.returnsObjectsAsFaults = false
        request.fetchBatchSize = 10
        let objects = try batched.fetch(request)
        #expect(objects.allSatisfy { $0.isFault })
        #expect(objects[12].label == "B12")
        #expect(objects[10..<20].allSatisfy { !$0.isFault }, "the whole batch loaded")
        #expect(
            objects[0..<10].allSatisfy { $0.isFault } && objects[20...].allSatisfy { $0.isFault },
            "other batches did not")
        #expect(objects.map(\.label) == (0..<25).map { String(format: "B%02d", $0) })
    }

    @Test func bulkLoadDefersIndexesUntilTheFirstRead() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        let sales = file.graph.insert("Department", ["name": "Sales"])
        for n in 0..<10 {
            file.graph.insert("Employee", ["name": .string("E\(n)")]).setRelatedObject(sales, forKey: "department")
        }
        try file.context.save()
        let indexes = {
            try Set(
                file.query("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'").map {
                    "\($0[0])"
                })
        }
        #expect(
            try file.query("SELECT pk FROM pragma_table_info('Department') WHERE name = 'name'") == [[.integer(1)]],
            "the unique key is the table's primary key from the start")
        #expect(try !indexes().contains { $0.contains("Person_department") })
        #expect(
            try file.graph.makeContext().count(
                for: FetchRequest(
                    entityName: "Employee", predicate: try FetchPredicate(format: "department.name == 'Sales'"))) == 10)
        #expect(try indexes().contains { $0.contains("Person_department") })
    }

    @Test func theFileIsPlainSQLForAnyClient() throws {
        let file = try SQLiteFile(model: try CompanyModel.make())
        let sales = file.graph.insert("Department", ["name": "Sales", "budget": .decimal(Decimal(string: "1000.25")!)])
        file.graph.insert("Employee", ["name": "Ada", "age": 36]).setRelatedObject(sales, forKey: "department")
        try file.context.save()
        let rows = try file.query(
            "SELECT p.name, p.age, d.name, d.budget FROM Person p JOIN Department d ON d.name = p.department_id")
        #expect(rows == [[.text("Ada"), .integer(36), .text("Sales"), .real(1000.25)]])
        let columns = try file.query("SELECT name FROM pragma_table_info('Person') ORDER BY cid").map { $0[0] }
        #expect(
            !columns.contains { if case .text(let name) = $0 { name.hasPrefix("_") && name != "_ent" } else { true } })
        #expect(
            try file.query("SELECT \"table\", \"from\", \"to\" FROM pragma_foreign_key_list('Person')").contains([
                .text("Department"), .text("department_id"), .text("name"),
            ]))
        let metadata = try file.query("SELECT value FROM _sluice_metadata WHERE key = 'modelVersionHash'")
        #expect(metadata == [[.text(file.model.versionHash)]])
    }
}

@Suite struct SQLiteChangedColumnsTests {
    @Test func anUpdateWritesOnlyTheColumnsThatChanged() throws {
        let file = try SQLiteFile(model: try CompanyModel.make(), options: ["layout": "graph"])
        let ann = file.graph.insert("Employee", ["name": "Ann", "age": .integer(30)])
        try file.context.save()
        // Another program changes the age behind the store's back (same version): an update of the
        // name alone must not write the age it read.
        try SQLiteConnection(path: file.url.path).execute("UPDATE Person SET age = 99")
        ann["name"] = "Anne"
        try file.context.save()
        #expect(try file.query("SELECT name, age, _opt FROM Person") == [[.text("Anne"), .integer(99), .integer(2)]])

        let store = file.graph.store, entity = file.model.entity(named: "Employee")!
        var row = StoreRow(
            objectID: ann.objectID, entity: entity, version: 2,
            attributeValues: ann.entity.attributes.map { _ in .null },
            toOneDestinations: Array(repeating: nil, count: entity.relationships.count))
        row.attributeValues[entity.attributeIndex(named: "name")!] = "Annie"
        var changes = ChangedProperties()
        changes.attributes = 1 << UInt64(entity.attributeIndex(named: "name")!)
        row.changes = changes
        var request = SaveChangesRequest()
        request.updatedRows = [row]
        try store.save(request)
        #expect(
            try file.query("SELECT name, age, _opt FROM Person") == [[.text("Annie"), .integer(99), .integer(3)]],
            "only the column in the row's changes is written; the version still moves")
    }
}
