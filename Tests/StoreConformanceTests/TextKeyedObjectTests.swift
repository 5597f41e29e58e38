import Drivers
import Foundation
import ObjectGraph
import TestSupport
import Testing

/// Objects known by one required text key (`Country.code`, `Language.tag`): the plain SQLite layout
/// keeps them under it (`TEXT PRIMARY KEY`, the foreign keys and join table holding the text, as a
/// legacy database does), and every store behaves alike — references followed both ways, keys as
/// written (`007` and `7` are two countries), conflicts on the key settled, deletes propagated.
@Suite struct TextKeyedObjectTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Country",
                attributes: [
                    AttributeDescription(name: "code", type: .string, isOptional: false),
                    AttributeDescription(name: "name", type: .string),
                ],
                relationships: [
                    RelationshipDescription(name: "people", destination: "Person", inverse: "country", isToMany: true)
                ],
                uniquenessConstraints: [["code"]], tableName: "country"),
            EntityDescription(
                name: "Person",
                attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(name: "country", destination: "Country", inverse: "people"),
                    RelationshipDescription(
                        name: "languages", destination: "Language", inverse: "speakers", isToMany: true),
                ], tableName: "person"),
            EntityDescription(
                name: "Language",
                attributes: [AttributeDescription(name: "tag", type: .string, isOptional: false)],
                relationships: [
                    RelationshipDescription(
                        name: "speakers", destination: "Person", inverse: "languages", isToMany: true)
                ],
                uniquenessConstraints: [["tag"]], tableName: "language"),
        ])
    }

    /// Countries `NZ`, `007` and `7`; Ann (NZ, en + mi), Bo (007, en), Cy (no country).
    static func fill(_ file: StoreFile) throws {
        let graph = file.graph
        func country(_ code: String) -> ManagedObject {
            graph.insert("Country", ["code": .string(code), "name": .string("country \(code)")])
        }
        let (nz, bond) = (country("NZ"), country("007"))
        _ = country("7")
        let en = graph.insert("Language", ["tag": "en"]), mi = graph.insert("Language", ["tag": "mi"])
        for (name, home, languages) in [("Ann", nz, [en, mi]), ("Bo", bond, [en]), ("Cy", nil, [])] {
            let person = graph.insert("Person", ["name": .string(name)])
            if let home { person.setRelatedObject(home, forKey: "country") }
            for language in languages { person.addRelatedObject(language, forKey: "languages") }
        }
        try file.context.save()
    }

    @Test(arguments: StoreKind.allCases)
    func referencesToTextKeysAreFollowedBothWays(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try Self.model())
        try Self.fill(file)
        #expect(
            try file.stored("Person", ["name", "country.code"]) == [["Ann", "NZ"], ["Bo", "007"], ["Cy", "nil"]])
        #expect(try file.storedCount("Person", where: "country.code == '7'") == 0, "007 and 7 are two keys")
        #expect(try file.storedCount("Person", where: "ANY languages.tag == 'en'") == 2)
        let context = try file.reopen().context
        let countries = try context.fetch(FetchRequest(entityName: "Country"))
        let nz = try #require(countries.first { $0["code"] == "NZ" })
        if kind.keepsObjectsUnderKeys { #expect(nz.objectID.reference == .string("NZ"), "kept under its code") }
        #expect(nz.relatedObjects(forKey: "people").map { $0["name"] } == ["Ann"])
        var request = FetchRequest(entityName: "Person")
        request.predicate = try FetchPredicate(format: "country == %@", nz.objectID)
        #expect(try context.fetch(request).map { $0["name"] } == ["Ann"])
        let en = try #require(try context.fetch(FetchRequest(entityName: "Language")).first { $0["tag"] == "en" })
        #expect(Set(en.relatedObjects(forKey: "speakers").compactMap { $0.string(forKey: "name") }) == ["Ann", "Bo"])

        // Deleting a country nullifies its people's reference; deleting a language drops its links.
        context.delete(nz)
        context.delete(en)
        try context.save()
        #expect(
            try file.stored("Person", ["name", "country.code"]) == [["Ann", "nil"], ["Bo", "007"], ["Cy", "nil"]])
        #expect(try file.storedCount("Person", where: "ANY languages.tag == 'en'") == 0)
        #expect(try file.storedCount("Person", where: "ANY languages.tag == 'mi'") == 1)
    }

    /// A second `NZ` saved over a stored one (object-trumps) becomes the stored object: one row,
    /// the new name, the people of both.
    @Test(arguments: StoreKind.allCases)
    func insertingATextKeyTheStoreHas(_ kind: StoreKind) throws {
        let file = try StoreFile(kind, model: try Self.model())
        try Self.fill(file)
        let context = file.graph.makeContext()
        context.mergePolicy = .objectTrumps
        let again = file.graph.insert("Country", ["code": "NZ", "name": "Aotearoa"], into: context)
        file.graph.insert("Person", ["name": "Di"], into: context).setRelatedObject(again, forKey: "country")
        try context.save()
        #expect(try file.stored("Country", ["code", "name"]).filter { $0[0] == "NZ" } == [["NZ", "Aotearoa"]])
        #expect(try file.storedCount("Person", where: "country.code == 'NZ'") == 2)
    }

    /// The plain layout as other tools see it, and a key that cannot change under the row.
    @Test func thePlainTableIsKeptUnderTheTextAndRefusesAnotherKey() throws {
        let file = try StoreFile(.sqlite, model: try Self.model())
        try Self.fill(file)
        let path = try #require(file.url).path
        func query(_ sql: String) throws -> [[SQLiteValue]] {
            let connection = try SQLiteConnection(path: path, mode: .readOnly)
            let statement = try connection.makeStatement(sql)
            var rows: [[SQLiteValue]] = []
            while try statement.step() { rows.append((0..<Int32(statement.columnCount)).map { statement.value($0) }) }
            return rows
        }
        #expect(
            try query("SELECT name, type, pk FROM pragma_table_info('country') ORDER BY cid") == [
                [.text("code"), .text("TEXT"), .integer(1)], [.text("name"), .text("TEXT"), .integer(0)],
            ])
        #expect(
            try query("SELECT p.name, c.code FROM person p JOIN country c ON c.code = p.country_id ORDER BY 1") == [
                [.text("Ann"), .text("NZ")], [.text("Bo"), .text("007")],
            ])
        #expect(
            try query("SELECT person_id, tag FROM language_speakers ORDER BY 1, 2") == [
                [.integer(1), .text("en")], [.integer(1), .text("mi")], [.integer(2), .text("en")],
            ])
        let context = try file.reopen().context
        let bond = try #require(try context.fetch(FetchRequest(entityName: "Country")).first { $0["code"] == "007" })
        bond["code"] = "008"
        #expect { try context.save() } throws: { error in
            (error as? StoreError)?.code == .constraintViolation && "\(error)".contains("cannot change its code")
        }
    }
}
