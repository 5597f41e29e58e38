import Foundation
import ModelFiles
import ObjectGraph
import TestSupport
import Testing

@Suite struct ModelFileTests {
    private func issues(_ text: String, json: Bool = false) -> [ModelFileIssue] {
        do {
            _ = try ModelFile.load(text: text, file: json ? "m.json" : "m.yaml", isJSON: json)
            return []
        } catch let error as ModelFileError {
            return error.issues
        } catch {
            return [ModelFileIssue(file: "?", line: 0, column: 0, message: "unexpected \(error)")]
        }
    }

    @Test func theSampleModelLoadsWithEveryFeature() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../SampleData/shop.model.yaml"
        ).standardized
        let model = try ModelFile.load(contentsOf: url)
        #expect(model.entities.map(\.name) == ["Customer", "Order", "OrderLine", "Product", "Tag"])
        let email = try #require(model["Customer"]?.attribute(named: "email"))
        #expect(!email.isOptional && email.maxLength == 200 && email.regularExpression != nil)
        #expect(model["Customer"]?.attribute(named: "balance")?.defaultValue == .decimal(0))
        let lines = try #require(model["Order"]?.relationship(named: "lines"))
        #expect(lines.isToMany && lines.deleteRule == .cascade && lines.minCount == 1 && lines.inverse?.name == "order")
        #expect(model["Product"]?.relationship(named: "tags")?.isManyToMany == true)
        #expect(model["Customer"]?.uniquenessConstraints == [["id"], ["email"]])
        #expect(model["Order"]?.indexes.map(\.propertyNames) == [["placedAt"]])
        #expect(model["OrderLine"]?.attribute(named: "lineNo")?.type == .integer16)
    }

    @Test func yamlAndJsonDescribeTheSameModel() throws {
        let yaml = """
            entities:
              Person:
                attributes:
                  name: string!
                  born: { type: date, min: 1900-01-01 }
                relationships:
                  pets: { destination: Pet, toMany: true, inverse: owner, deleteRule: cascade }
              Pet:
                attributes: { name: string }
                relationships:
                  owner: { destination: Person, inverse: pets }
            """
        let json = """
            {
            \t"entities": {
            \t\t"Person": {
            \t\t\t"attributes": { "name": "string!", "born": { "type": "date", "min": "1900-01-01" } },
            \t\t\t"relationships": { "pets": { "destination": "Pet", "toMany": true, "inverse": "owner", \
            "deleteRule": "cascade" } }
            \t\t},
            \t\t"Pet": { "attributes": { "name": "string" }, "relationships": { "owner": { "destination": "Person", \
            "inverse": "pets" } } }
            \t}
            }
            """
        let a = try ModelFile.load(text: yaml, file: "m.yaml")
        let b = try ModelFile.load(text: json, file: "m.json", isJSON: true)
        #expect(a.versionHash == b.versionHash)
        #expect(b["Person"]?.attribute(named: "born")?.minValue == .date(Date(timeIntervalSince1970: -2_208_988_800)))
    }

    @Test func yamlSyntaxErrorsNameLineAndColumn() {
        let found = issues("entities:\n  A:\n    attributes: { x: string\n")
        #expect(found.count == 1)
        #expect(found[0].line == 4 && found[0].message.hasPrefix("YAML syntax error"))
    }

    @Test func unknownKeysAndTypesAreErrorsAtTheirPosition() {
        let found = issues(
            """
            entities:
              A:
                atributes: { x: string }
              B:
                attributes:
                  y: strng
                  z: { type: integer64, maxLenght: 3 }
            """)
        #expect(
            found.map(\.description) == [
                "m.yaml:3:5: A: unknown key \"atributes\" in entity A (expected one of: abstract, attributes, "
                    + "columnOrder, fetchedProperties, indexes, parent, relationships, table, unique)",
                "m.yaml:6:10: B.y: unknown attribute type \"strng\" (use one of: integer16, integer32, integer64, "
                    + "decimal, double, float, string, boolean, date, calendarDate, binary, uuid, uri)",
                "m.yaml:7:29: B.z: unknown key \"maxLenght\" in attribute B.z (expected one of: column, default, "
                    + "derived, max, maxLength, min, minLength, optional, regex, scale, transient, type)",
            ])
    }

    @Test func modelMistakesPointAtTheDeclaringLine() {
        let found = issues(
            """
            entities:
              Order:
                relationships:
                  customer: { destination: Client, inverse: orders }
                  lines: { destination: Line, toMany: true, inverse: wrong }
              Line:
                relationships:
                  order: { destination: Order, inverse: lines }
                  wrong: { destination: Order }
            """)
        #expect(
            found.map(\.description) == [
                "m.yaml:4:7: Order.customer: destination entity \"Client\" is not in the model",
                "m.yaml:5:7: Order.lines: inverse Line.wrong does not point back (its inverse is not set and its "
                    + "destination is Order)",
                "m.yaml:8:7: Line.order: inverse Order.lines does not point back (its inverse is \"wrong\" and its "
                    + "destination is Line)",
            ])
    }

    @Test func duplicateNamesAreErrors() {
        let found = issues(
            """
            entities:
              A:
                attributes:
                  x: string
                relationships:
                  x: { destination: A }
              B:
                parent: A
                attributes:
                  x: integer64
            """)
        #expect(
            found.map(\.description) == [
                "m.yaml:6:7: A.x: the name is used by another property of the entity or of its parents",
                "m.yaml:10:7: B.x: the name is used by another property of the entity or of its parents",
            ])
        let twice = issues("entities:\n  A:\n    attributes:\n      x: string\n      x: integer64\n")
        #expect(twice.count == 1)
        #expect(twice.first?.line == 5 || twice.first?.message.contains("duplicate") == true)
    }

    @Test func badValuesAndRulesAreReported() {
        let found = issues(
            """
            entities:
              A:
                attributes:
                  n: { type: integer16, default: 99999 }
                  d: { type: decimal, min: "1,5" }
                  t: { type: date, default: yesterday }
                  r: { type: string, regex: "(" }
                  o: { type: string, optional: maybe }
                relationships:
                  s: { destination: A, deleteRule: explode, toMany: true, minCount: -1 }
            """)
        let text = found.map(\.description)
        #expect(
            text.contains(
                "m.yaml:4:38: A.n: default \"99999\" is not a valid integer16 (a whole number that fits integer16)"))
        #expect(text.contains("m.yaml:5:32: A.d: min \"1,5\" is not a valid decimal (a decimal number such as 19.99)"))
        #expect(text.contains { $0.hasPrefix("m.yaml:6:33: A.t: default \"yesterday\" is not a valid date") })
        #expect(text.contains("m.yaml:8:36: A.o: optional must be true or false"))
        #expect(
            text.contains("m.yaml:10:40: A.s: unknown delete rule \"explode\" (use deny, nullify, cascade or noAction)")
        )
        #expect(text.contains("m.yaml:10:73: A.s: minCount must be a whole number ≥ 0"))
        // The regex is checked by the model once the file is read; it is reported at the attribute.
        let regex = issues("entities:\n  A:\n    attributes:\n      r: { type: string, regex: \"(\" }\n")
        #expect(regex.map(\.description) == ["m.yaml:4:7: A.r: invalid regular expression \"(\""])
    }

    @Test func emptyOrMissingEntitiesIsAnError() {
        #expect(issues("").first?.message.contains("empty") == true)
        #expect(issues("name: x\n").first?.message == "the model file needs an `entities` mapping")
    }
}

@Suite struct SeedFileTests {
    @Test func seedsLinkByKeyAndReportEveryBadRecord() throws {
        let dir = try TemporaryDirectory()
        let model = try ModelFile.load(
            text: """
                entities:
                  Team: { attributes: { name: string! }, relationships: { players: { destination: Player, toMany: \
                true, inverse: team } } }
                  Player: { attributes: { name: string!, number: integer16 }, relationships: { team: { destination: \
                Team, inverse: players } } }
                """, file: "m.yaml")
        let graph = try TestGraph(model: model)
        let good = try dir.file(
            "good.yaml",
            contents: """
                Player:
                  - { name: Ann, number: 7, team: { name: Reds } }
                Team:
                  - { name: Reds }
                """)
        #expect(try SeedFile.load(contentsOf: good, into: graph.context) == ["Player": 1, "Team": 1])
        try graph.context.save()
        let team = try graph.context.fetch(FetchRequest(entityName: "Team"))
        #expect(team.first?.relatedObjects(forKey: "players").map(\.label) == ["Ann"])

        let bad = try dir.file(
            "bad.yaml",
            contents: """
                Player:
                  - { name: Bo, number: 70000, team: { name: Blues } }
                  - { name: Cy, shirt: 3 }
                Coach:
                  - { name: Dee }
                """)
        let error = try #require(throws: SeedFileError.self) { try SeedFile.load(contentsOf: bad, into: graph.context) }
        #expect(
            error.issues.map { "\($0.line):\($0.column): \($0.message)" } == [
                "2:25: Player.number: \"70000\" is not a valid integer16 (a whole number that fits integer16)",
                "3:17: Player has no property named \"shirt\"",
                "4:1: the model has no entity named \"Coach\"",
                "2:38: no Team has name = Blues",
            ])
        #expect(!graph.context.hasChanges, "a failed seed leaves nothing behind")

        let broken = try dir.file("broken.yaml", contents: "Player:\n  - { name: [unclosed\n")
        let syntax = try #require(throws: SeedFileError.self) {
            try SeedFile.load(contentsOf: broken, into: graph.context)
        }
        #expect(
            syntax.issues.count == 1 && syntax.issues[0].line == 3
                && syntax.issues[0].message.hasPrefix("YAML syntax error"))
    }

    /// A many-to-many's join table and columns come from the model (either side may name the table);
    /// a to-many stored by its inverse's foreign key has none, and two sides cannot disagree.
    @Test func joinTablesAndTheirColumnsAreNamedAndChecked() throws {
        func model(_ authors: String, _ books: String) -> String {
            """
            version: 1
            entities:
              Book:
                relationships:
                  authors: { destination: Author, toMany: true, \(authors) }
              Author:
                relationships:
                  books: { destination: Book, \(books) }
            """
        }
        func issues(_ text: String) -> [ModelFileIssue] {
            do {
                _ = try ModelFile.load(text: text, file: "m.yaml")
                return []
            } catch let error as ModelFileError {
                return error.issues
            } catch {
                return []
            }
        }
        let loaded = try ModelFile.load(
            text: model("inverse: books, joinTable: written_by, column: writer", "toMany: true, inverse: authors"),
            file: "m.yaml")
        let authors = try #require(loaded["Book"]?.relationship(named: "authors"))
        #expect(authors.joinTableName == "written_by" && authors.inverse?.joinTableName == "written_by")
        let columns = authors.joinColumnNames { snakeCaseName($0.name) + "_id" }
        let owner = authors.joinTableOwner
        #expect(owner.name == "authors")  // the side that names the table owns it: its keys come first
        #expect(columns.source == "book_id" && columns.destination == "writer")
        #expect(
            issues(model("inverse: books, joinTable: a", "toMany: true, inverse: authors, joinTable: b")).contains {
                $0.message.contains("is not its inverse's")
            })
        #expect(
            issues(model("inverse: books, column: x", "toMany: true, inverse: authors, column: x")).contains {
                $0.message.contains("is also its inverse's")
            })
        #expect(
            issues(model("inverse: books, joinTable: t", "inverse: authors")).contains {
                $0.message.contains("apply to many-to-many")
            })
        #expect(
            issues(model("inverse: books", "inverse: authors, joinTable: t")).contains {
                $0.message.contains("a join table applies to many-to-many")
            })
    }
}
