import Foundation
import ModelFiles
import ObjectGraph
import TestSupport
import Testing

/// Xcode models (`SampleData/xcode/`): three real-world-shaped models load into the expected model,
/// and what Sluice does not use is named in warnings.
@Suite struct XcodeModelTests {
    static let root = repositoryRoot.appendingPathComponent("SampleData/xcode")

    static func load(_ name: String) throws -> (ManagedObjectModel, [String]) {
        var warnings: [String] = []
        let model = try ModelFile.load(contentsOf: root.appendingPathComponent(name)) { warnings.append($0) }
        return (model, warnings)
    }

    @Test func aVersionedBundleLoadsItsCurrentVersion() throws {
        let (model, warnings) = try Self.load("Notes.xcdatamodeld")
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(
            model.entities.map(\.name).sorted() == ["Folder", "Note", "Tag"],
            "version 2 (the current one), not version 1")
        let note = try #require(model.entity(named: "Note"))
        #expect(note.attribute(named: "title")?.defaultValue == .string("Untitled"))
        #expect(note.attribute(named: "pinned")?.defaultValue == .boolean(false))
        #expect(note.attribute(named: "pinned")?.isOptional == false)
        #expect(note.attribute(named: "body")?.isOptional == true)
        #expect(note.attribute(named: "uuid")?.type == .uuid)
        #expect(
            note.attribute(named: "createdAt")?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 720_000_000))
        )
        #expect(note.uniquenessConstraints == [["uuid"]])
        #expect(note.indexes == [IndexDescription(name: "byCreatedAt", propertyNames: ["createdAt"])])
        let folder = try #require(note.relationship(named: "folder"))
        #expect(!folder.isToMany && !folder.isOptional && folder.inverse?.name == "notes" && folder.maxCount == nil)
        let tags = try #require(note.relationship(named: "tags"))
        #expect(tags.isManyToMany)
        let folderName = try #require(model.entity(named: "Folder")?.attribute(named: "name"))
        #expect(folderName.minLength == 1 && folderName.maxLength == 80)
        #expect(model.entity(named: "Folder")?.relationship(named: "notes")?.deleteRule == .cascade)
    }

    @Test func unusedPartsAreNamedInWarnings() throws {
        let (model, warnings) = try Self.load("Fitness.xcdatamodel")
        #expect(warnings.count == 1, "one warning names everything: \(warnings)")
        let warning = try #require(warnings.first)
        #expect(warning.contains("Fitness.xcdatamodel/contents: not used by Sluice: "))
        #expect(warning.contains("Athlete.preferences is Transformable"))
        #expect(warning.contains("user info of entity Athlete ignored (line 14)"))
        #expect(warning.contains("stored fetch request LongWorkouts ignored"))
        #expect(!warning.contains("fetched") && !warning.contains("derived") && !warning.contains("transient"))
        let workout = try #require(model.entity(named: "Workout"))
        let calories = try #require(workout.attribute(named: "calories"))
        #expect(
            calories.type == .integer32 && calories.minValue == .integer(0) && calories.maxValue == .integer(10_000)
                && calories.defaultValue == .integer(0))
        #expect(workout.attribute(named: "startDate")?.minValue == .date(Date(timeIntervalSinceReferenceDate: 0)))
        #expect(workout.attribute(named: "isDraft")?.isTransient == true)
        let sets = try #require(workout.relationship(named: "sets"))
        #expect(
            sets.isToMany && sets.isOrdered && sets.minCount == 1 && sets.maxCount == 50 && sets.deleteRule == .cascade)
        #expect(model.entity(named: "Athlete")?.relationship(named: "workouts")?.deleteRule == .deny)
        #expect(model.entity(named: "Athlete")?.attribute(named: "name")?.regularExpression == "[A-Za-z][A-Za-z .'-]*")
        #expect(model.entity(named: "WorkoutSet")?.attribute(named: "load")?.type == .float)
        #expect(model.configurations["Cloud"]?.sorted() == ["Athlete", "Workout", "WorkoutSet"])
    }

    @Test func fetchedPropertiesDerivedAttributesAndTransientRelationshipsAreLoaded() throws {
        let (model, _) = try Self.load("Fitness.xcdatamodel")
        let athlete = try #require(model.entity(named: "Athlete"))
        let recent = try #require(athlete.fetchedProperty(named: "recentWorkouts"))
        #expect(recent.destinationEntity === model.entity(named: "Workout"))
        #expect(recent.predicateFormat == "startDate > $FETCH_SOURCE.lastSync" && recent.predicate != nil)
        #expect(athlete.attribute(named: "searchName")?.derivationExpression == "canonical:(name)")
        #expect(model.entity(named: "Workout")?.attribute(named: "setCount")?.derivation?.expression == "sets.@count")
        let current = try #require(athlete.relationship(named: "currentWorkout"))
        #expect(current.isTransient && current.inverse?.isTransient == true && !current.isToMany)
    }

    @Test func inheritanceAndEveryKindOfRule() throws {
        let (model, warnings) = try Self.load("Inventory.xcdatamodel")
        #expect(warnings.isEmpty, "\(warnings)")
        let item = try #require(model.entity(named: "Item"))
        #expect(item.isAbstract)
        let book = try #require(model.entity(named: "Book"))
        #expect(book.superentity === item)
        #expect(book.attribute(named: "sku") != nil, "inherited")
        let sku = try #require(item.attribute(named: "sku"))
        #expect(sku.minLength == 3 && sku.maxLength == 12 && sku.regularExpression == "[A-Z]{2}-[0-9]+")
        #expect(
            item.attribute(named: "price")?.type == .decimal && item.attribute(named: "price")?.minValue == .decimal(0))
        #expect(
            item.attribute(named: "thumbnail")?.type == .binary
                && item.attribute(named: "thumbnail")?.maxLength == 65_536)
        #expect(item.attribute(named: "homepage")?.type == .uri)
        #expect(model.entity(named: "Movie")?.attribute(named: "rating")?.maxValue == .float(10))
        let shelf = try #require(model.entity(named: "Shelf"))
        #expect(
            shelf.relationship(named: "items")?.maxCount == 200
                && shelf.relationship(named: "items")?.deleteRule == .deny)
        #expect(
            shelf.relationship(named: "neighbours")?.inverse === shelf.relationship(named: "neighbours"), "self-inverse"
        )
        // A store made from it takes objects of the sub-entities under the abstract parent.
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: InMemoryStore.storeType)
        let context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
        let novel = context.insertNewObject(forEntityName: "Book")
        novel["sku"] = .string("bk1")
        #expect(throws: ValidationError.self) { try context.save() }  // the inherited pattern and length
        novel["sku"] = .string("BK-1")
        try context.save()
        #expect(try context.fetch(FetchRequest(entityName: "Item")).map { $0.entity.name } == ["Book"])
    }

    @Test func mistakesNameFileAndLine() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-xc-\(UUID().uuidString).xcdatamodel")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <model>
            <entity name="A">
                <attribute name="x" attributeType="Quaternion"/>
                <relationship name="b" destinationEntity="Missing"/>
            </entity>
        </model>
        """.write(to: directory.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        #expect {
            try ModelFile.load(contentsOf: directory) { _ in }
        } throws: { error in
            "\(error)".contains("contents:4") && "\(error)".contains("Quaternion")
        }
    }
}
