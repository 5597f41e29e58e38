import Foundation
import ObjectGraph
import TestSupport
import Testing

@Suite struct ModelTests {
    @Test func subEntityInheritsParentPropertiesAtTheSameIndexes() throws {
        let model = try CompanyModel.make()
        let person = try #require(model["Person"]), employee = try #require(model["Employee"])
        #expect(employee.superentity === person)
        #expect(person.subentities.map(\.name) == ["Employee"])
        #expect(employee.attributes.prefix(2).map(\.name) == ["name", "age"])
        #expect(employee.attributeIndex(named: "name") == person.attributeIndex(named: "name"))
        #expect(employee.isKind(of: person) && !person.isKind(of: employee))
        #expect(employee.rootEntity === person)
    }

    @Test func relationshipsResolveDestinationsAndInverses() throws {
        let model = try CompanyModel.make()
        let employees = try #require(model["Department"]?.relationship(named: "employees"))
        #expect(employees.destinationEntity === model["Employee"])
        #expect(employees.inverse === model["Employee"]?.relationship(named: "department"))
        let cousins = try #require(model["Employee"]?.relationship(named: "cousins"))
        #expect(cousins.inverse === cousins && cousins.isManyToMany)
        #expect(model["Employee"]?.relationship(named: "badge")?.inverse == nil)
    }

    @Test func versionHashIsStableAndTracksStoredShapeOnly() throws {
        let a = try CompanyModel.make(), b = try CompanyModel.make()
        #expect(a.versionHash == b.versionHash)
        #expect(a.versionHash.count == 64)

        func single(_ attribute: AttributeDescription) throws -> ManagedObjectModel {
            try ManagedObjectModel(entities: [EntityDescription(name: "E", attributes: [attribute])])
        }
        let base = try single(AttributeDescription(name: "x", type: .string))
        let ruled = try single(
            AttributeDescription(name: "x", type: .string, maxLength: 3, regularExpression: "[a-z]+"))
        let retyped = try single(AttributeDescription(name: "x", type: .integer64))
        let required = try single(AttributeDescription(name: "x", type: .string, isOptional: false))
        #expect(base.versionHash == ruled.versionHash, "validation rules do not change how values are stored")
        #expect(base.versionHash != retyped.versionHash)
        #expect(base.versionHash != required.versionHash)
    }

    @Test func storeMetadataWithAnotherModelIsIncompatibleAndNamesTheEntity() throws {
        let model = try CompanyModel.make()
        let other = try ManagedObjectModel(entities: [
            EntityDescription(name: "Person", attributes: [AttributeDescription(name: "name", type: .integer64)])
        ])
        let metadata = StoreMetadata(
            storeType: "X", modelVersionHash: other.versionHash, entityVersionHashes: other.entityVersionHashes)
        #expect(!model.isCompatible(withStoreMetadata: metadata))
        let text = model.differences(fromStoreMetadata: metadata)
        #expect(text.contains("entities only in the model: ArchiveBox"))
        #expect(text.contains("differ: Person"))
        #expect(model.isCompatible(withStoreMetadata: StoreMetadata(storeType: "X")))
    }

    private func issues(_ entities: [EntityDescription]) -> [ModelIssue] {
        do {
            _ = try ManagedObjectModel(entities: entities)
            return []
        } catch let error as ModelValidationError {
            return error.issues
        } catch {
            return [ModelIssue(entity: nil, message: "unexpected \(error)")]
        }
    }

    @Test func unknownDestinationIsReportedWithEntityAndProperty() {
        let found = issues([
            EntityDescription(name: "A", relationships: [RelationshipDescription(name: "b", destination: "Missing")])
        ])
        #expect(
            found == [
                ModelIssue(entity: "A", property: "b", message: "destination entity \"Missing\" is not in the model")
            ])
    }

    @Test func inverseThatDoesNotPointBackIsAnError() {
        let found = issues([
            EntityDescription(
                name: "A",
                relationships: [RelationshipDescription(name: "bs", destination: "B", inverse: "a", isToMany: true)]),
            EntityDescription(
                name: "B",
                relationships: [
                    RelationshipDescription(name: "a", destination: "A", inverse: "other"),
                    RelationshipDescription(name: "other", destination: "A"),
                ]),
        ])
        #expect(found.count == 2)
        #expect(
            found.contains { $0.entity == "A" && $0.property == "bs" && $0.message.contains("does not point back") })
        #expect(
            found.contains {
                $0.entity == "B" && $0.property == "a" && $0.message.contains("\"other\" is not a relationship of A")
            })
    }

    @Test func duplicateNamesAreErrors() {
        let found = issues([
            EntityDescription(
                name: "A", attributes: [AttributeDescription(name: "x", type: .string)],
                relationships: [RelationshipDescription(name: "x", destination: "A")]),
            EntityDescription(name: "A"),
            EntityDescription(name: "C", parent: "A", attributes: [AttributeDescription(name: "x", type: .integer16)]),
        ])
        #expect(found.contains { $0.entity == "A" && $0.message == "the entity is declared twice" })
        #expect(
            found.contains { $0.entity == "A" && $0.property == "x" && $0.message.contains("used by another property") }
        )
        #expect(found.contains { $0.entity == "C" && $0.property == "x" && $0.message.contains("or of its parents") })
    }

    @Test func everyRuleMistakeIsCollected() {
        let found = issues([
            EntityDescription(
                name: "A", parent: "Nope",
                attributes: [
                    AttributeDescription(name: "a", type: .string, regularExpression: "(unclosed"),
                    AttributeDescription(name: "b", type: .string, minValue: .integer(1)),
                    AttributeDescription(name: "c", type: .integer16, defaultValue: .integer(70000)),
                    AttributeDescription(name: "d", type: .integer32, minLength: 2),
                    AttributeDescription(name: "e", type: .integer64, minValue: .integer(5), maxValue: .integer(1)),
                    AttributeDescription(name: "_f", type: .string),
                ],
                relationships: [
                    RelationshipDescription(name: "g", destination: "A", isToMany: false, minCount: 1)
                ], uniquenessConstraints: [["zzz"]])
        ])
        let messages = found.map(\.description)
        #expect(messages.contains { $0.hasPrefix("A: parent entity \"Nope\"") })
        #expect(messages.contains { $0.hasPrefix("A.a: invalid regular expression") })
        #expect(messages.contains { $0.hasPrefix("A.b: a minimum value applies only to numbers and dates") })
        #expect(messages.contains { $0.hasPrefix("A.c: default value 70000 is not a valid integer16") })
        #expect(messages.contains { $0.hasPrefix("A.d: length rules apply only") })
        #expect(messages.contains { $0.hasPrefix("A.e: minimum value 5 is greater than maximum value 1") })
        #expect(messages.contains { $0.hasPrefix("A._f: a property name must start with a letter") })
        #expect(messages.contains { $0.hasPrefix("A.g: min/max count applies only to to-many") })
        #expect(messages.contains { $0.hasPrefix("A.zzz: uniqueness constraint names an attribute") })
        #expect(found.count == 9)
    }

    @Test func parentCycleIsReportedNotLooped() {
        let found = issues([EntityDescription(name: "A", parent: "B"), EntityDescription(name: "B", parent: "A")])
        #expect(found.contains { $0.entity == "A" && $0.message.contains("loops back") })
    }
}
