import Foundation
import ObjectGraph
import TestSupport
import Testing

/// A store a user could write without touching Sluice's code: JSON lines (metadata first, then one
/// object per line), built only on the public `AtomicStore` API.
class JSONLinesStore: AtomicStore {
    static let typeName = "JSONLines"

    override func load() throws {
        guard !isNew, let url else { return }
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        guard let first = lines.first,
            let head = try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any],
            let identifier = head["identifier"] as? String
        else {
            throw StoreError(.corrupt, "no metadata line", url: url)
        }
        metadata = StoreMetadata(
            storeType: metadata.storeType, identifier: identifier,
            modelVersionHash: head["modelVersionHash"] as? String,
            entityVersionHashes: head["entityVersionHashes"] as? [String: String] ?? [:],
            userInfo: head["userInfo"] as? [String: String] ?? [:])
        var loaded: [AtomicStoreCacheNode] = []
        for line in lines.dropFirst() {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let entityName = object["entity"] as? String, let entity = model.entity(named: entityName),
                let reference = object["ref"] as? String
            else {
                throw StoreError(.corrupt, "a line is not an object", url: url)
            }
            let node = AtomicStoreCacheNode(objectID: objectID(for: entity, referenceObject: reference), entity: entity)
            node.version = (object["version"] as? NSNumber)?.int64Value ?? 1
            let attributes = object["attributes"] as? [String: Any] ?? [:]
            for attribute in entity.attributes where !attribute.isTransient {
                node.attributeValues[attribute.index] = Self.value(attributes[attribute.name], attribute.type)
            }
            let toOne = object["toOne"] as? [String: String] ?? [:],
                toMany = object["toMany"] as? [String: [String]] ?? [:]
            for relationship in entity.relationships {
                if relationship.isToMany {
                    node.toManyDestinations[relationship.index] = toMany[relationship.name]?.compactMap(id)
                } else {
                    node.toOneDestinations[relationship.index] = toOne[relationship.name].flatMap(id)
                }
            }
            loaded.append(node)
        }
        addCacheNodes(loaded)
    }

    override func save() throws {
        var lines: [Data] = []
        lines.append(
            try JSONSerialization.data(
                withJSONObject: [
                    "identifier": metadata.identifier, "modelVersionHash": metadata.modelVersionHash ?? "",
                    "entityVersionHashes": metadata.entityVersionHashes, "userInfo": metadata.userInfo,
                ] as [String: Any], options: [.sortedKeys]))
        for node in cacheNodes {
            var attributes: [String: Any] = [:]
            for attribute in node.entity.attributes where !attribute.isTransient {
                if let json = Self.json(node.attributeValues[attribute.index]) { attributes[attribute.name] = json }
            }
            var toOne: [String: String] = [:], toMany: [String: [String]] = [:]
            for relationship in node.entity.relationships {
                if relationship.isToMany {
                    if let members = node.toManyDestinations[relationship.index] {
                        toMany[relationship.name] = members.compactMap(text)
                    }
                } else if let destination = node.toOneDestinations[relationship.index] {
                    toOne[relationship.name] = text(destination)
                }
            }
            lines.append(
                try JSONSerialization.data(
                    withJSONObject: [
                        "entity": node.entity.name, "ref": referenceObject(for: node.objectID) ?? "",
                        "version": node.version,
                        "attributes": attributes, "toOne": toOne, "toMany": toMany,
                    ] as [String: Any], options: [.sortedKeys]))
        }
        try writeAtomically(Data(lines.joined(separator: Data("\n".utf8))) + Data("\n".utf8))
    }

    private func text(_ id: ManagedObjectID) -> String? { referenceObject(for: id).map { "\(id.entityName)/\($0)" } }

    private func id(_ text: String) -> ManagedObjectID? {
        let parts = text.split(separator: "/", maxSplits: 1)
        guard parts.count == 2, let entity = model.entity(named: String(parts[0])) else { return nil }
        return objectID(for: entity, referenceObject: String(parts[1]))
    }

    static func json(_ value: AttributeValue) -> Any? {
        switch value {
        case .string(let s): return s
        case .integer(let i): return i
        case .double(let d): return d
        case .boolean(let b): return b
        case .date(let d): return d.timeIntervalSinceReferenceDate
        default: return nil
        }
    }

    static func value(_ json: Any?, _ type: AttributeType) -> AttributeValue {
        switch (type, json) {
        case (.string, let s as String): return .string(s)
        case (.integer16, let n as NSNumber), (.integer32, let n as NSNumber), (.integer64, let n as NSNumber):
            return .integer(n.int64Value)
        case (.double, let n as NSNumber): return .double(n.doubleValue)
        case (.boolean, let n as NSNumber): return .boolean(n.boolValue)
        case (.date, let n as NSNumber): return .date(Date(timeIntervalSinceReferenceDate: n.doubleValue))
        default: return .null
        }
    }
}

/// The life cycle's calls, in order (semantics §7).
final class CallLog: @unchecked Sendable {
    // @unchecked: `calls` is only touched with `lock` held.
    private let lock = NSLock()
    private var calls: [String] = []
    func add(_ call: String) { lock.withLock { calls.append(call) } }
    func take() -> [String] {
        lock.withLock {
            defer { calls = [] }
            return calls
        }
    }
}

let callLog = CallLog()

final class RecordingStore: JSONLinesStore {
    required init(
        coordinator: PersistentStoreCoordinator, configurationName: String?, url: URL?, options: [String: String]
    ) throws {
        try super.init(coordinator: coordinator, configurationName: configurationName, url: url, options: options)
        callLog.add("init(new: \(isNew))")
    }
    override func load() throws {
        callLog.add("load")
        try super.load()
    }
    override func newReferenceObject(for entity: EntityDescription) -> String {
        callLog.add("newReferenceObject(\(entity.name))")
        return super.newReferenceObject(for: entity)
    }
    override func newCacheNode(for row: StoreRow) -> AtomicStoreCacheNode {
        callLog.add("newCacheNode(\(row.entity.name))")
        return super.newCacheNode(for: row)
    }
    override func updateCacheNode(_ node: AtomicStoreCacheNode, from row: StoreRow) {
        callLog.add("updateCacheNode(\(row.entity.name))")
        super.updateCacheNode(node, from: row)
    }
    override func willRemoveCacheNodes(_ nodes: [AtomicStoreCacheNode]) {
        callLog.add("willRemoveCacheNodes(\(nodes.count))")
    }
    override func save() throws {
        callLog.add("save(\(cacheNodes.count))")
        try super.save()
    }
    override func willRemove(from coordinator: PersistentStoreCoordinator) {
        callLog.add("willRemove")
        super.willRemove(from: coordinator)
    }
}

@Suite(.serialized) struct AtomicStoreTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Author",
                attributes: [
                    AttributeDescription(name: "name", type: .string, isOptional: false),
                    AttributeDescription(name: "born", type: .date),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "books", destination: "Book", inverse: "author", isToMany: true, deleteRule: .cascade)
                ], uniquenessConstraints: [["name"]]),
            EntityDescription(
                name: "Book",
                attributes: [
                    AttributeDescription(name: "title", type: .string, isOptional: false),
                    AttributeDescription(name: "pages", type: .integer32),
                    AttributeDescription(name: "rating", type: .double),
                    AttributeDescription(name: "inPrint", type: .boolean),
                ],
                relationships: [
                    RelationshipDescription(name: "author", destination: "Author", inverse: "books")
                ]),
        ])
    }

    @Test func aUserStoreInsertsFetchesUpdatesDeletesAndReopens() throws {
        PersistentStoreCoordinator.registerStoreType(JSONLinesStore.self, named: JSONLinesStore.typeName)
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("books.jsonl")
        let model = try Self.model()
        do {
            let graph = try TestGraph(model: model, storeType: JSONLinesStore.typeName, url: url)
            let author = graph.insert(
                "Author",
                ["name": .string("Ursula"), "born": .date(Date(timeIntervalSinceReferenceDate: -1_000_000_000))])
            for (title, pages) in [("Earthsea", 183), ("The Dispossessed", 387), ("Lathe", 184)] {
                let book = graph.insert(
                    "Book",
                    [
                        "title": .string(title), "pages": .integer(Int64(pages)), "rating": .double(4.5),
                        "inPrint": .boolean(true),
                    ])
                book.setRelatedObject(author, forKey: "author")
            }
            try graph.context.save()
            #expect(try graph.storedCount("Book") == 3)
            let long = try graph.makeContext().fetch(
                FetchRequest(
                    entityName: "Book", predicate: FetchPredicate(format: "pages > 185 AND author.name == 'Ursula'")))
            #expect(long.map { $0["title"] } == [.string("The Dispossessed")])
            // Update and delete, then save again.
            let lathe = try #require(
                try graph.context.fetch(
                    FetchRequest(entityName: "Book", predicate: FetchPredicate(format: "title == 'Lathe'"))
                ).first)
            lathe["title"] = .string("The Lathe of Heaven")
            let earthsea = try #require(
                try graph.context.fetch(
                    FetchRequest(entityName: "Book", predicate: FetchPredicate(format: "title == 'Earthsea'"))
                ).first)
            graph.context.delete(earthsea)
            try graph.context.save()
            graph.coordinator.removePersistentStore(graph.store)
        }
        // Reopened from the file: same objects, same IDs, the relationship both ways.
        let again = try TestGraph(model: model, storeType: JSONLinesStore.typeName, url: url)
        let books = try again.context.fetch(
            FetchRequest(entityName: "Book", sortDescriptors: [FetchSortDescriptor("title")]))
        #expect(books.map { $0["title"] } == [.string("The Dispossessed"), .string("The Lathe of Heaven")])
        #expect(books.allSatisfy { $0.relatedObject(forKey: "author")?["name"] == .string("Ursula") })
        let author = try #require(try again.context.fetch(FetchRequest(entityName: "Author")).first)
        #expect(author.relatedObjects(forKey: "books").count == 2)
        #expect(author["born"] == .date(Date(timeIntervalSinceReferenceDate: -1_000_000_000)))
        #expect(books.first?["inPrint"] == .boolean(true) && books.first?["rating"] == .double(4.5))
    }

    @Test func theLifeCycleCallsComeInOrder() throws {
        PersistentStoreCoordinator.registerStoreType(RecordingStore.self, named: "Recording")
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("log.jsonl")
        let model = try Self.model()
        _ = callLog.take()
        let graph = try TestGraph(model: model, storeType: "Recording", url: url)
        #expect(callLog.take() == ["init(new: true)", "load"])
        let author = graph.insert("Author", ["name": .string("Ada")])
        let book = graph.insert("Book", ["title": .string("Notes")])
        book.setRelatedObject(author, forKey: "author")
        try graph.context.save()
        let inserted = callLog.take()
        #expect(
            inserted.filter { $0.hasPrefix("newReferenceObject") }.sorted() == [
                "newReferenceObject(Author)", "newReferenceObject(Book)",
            ])
        #expect(Array(inserted.suffix(3)) == ["newCacheNode(Author)", "newCacheNode(Book)", "save(2)"])
        // References never change: the IDs saved are the IDs read back.
        let savedID = book.objectID
        book["title"] = .string("Notes on the Engine")
        try graph.context.save()
        #expect(callLog.take() == ["updateCacheNode(Book)", "save(2)"])
        graph.context.delete(book)
        try graph.context.save()
        #expect(callLog.take() == ["willRemoveCacheNodes(1)", "save(1)"])
        graph.coordinator.removePersistentStore(graph.store)
        #expect(callLog.take() == ["willRemove"])
        let reopened = try TestGraph(model: model, storeType: "Recording", url: url)
        #expect(callLog.take() == ["init(new: false)", "load"])
        #expect(throws: (any Error).self, "deleted") { try reopened.context.existingObject(with: savedID) }
        let ada = try #require(try reopened.context.fetch(FetchRequest(entityName: "Author")).first)
        #expect(ada.objectID == author.objectID)
    }

    /// With `deferred_writes`, many saves write the file once, at `flush()` — an import's work copy
    /// is not rewritten whole per batch — and what is flushed reads back like any store.
    @Test func deferredWritesWriteTheFileOnceAtFlush() throws {
        PersistentStoreCoordinator.registerStoreType(RecordingStore.self, named: "Recording")
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("deferred.jsonl")
        let model = try Self.model()
        _ = callLog.take()
        let graph = try TestGraph(model: model, storeType: "Recording", url: url, options: ["deferred_writes": "true"])
        for batch in 0..<10 {
            for number in 0..<5 { graph.insert("Author", ["name": .string("A\(batch)-\(number)")]) }
            try graph.context.save()
            graph.context.reset()
        }
        #expect(!callLog.take().contains { $0.hasPrefix("save(") })
        let written = (try? Data(contentsOf: url)) ?? Data()
        #expect(written.isEmpty)
        #expect(try graph.context.count(for: FetchRequest(entityName: "Author")) == 50)
        try #require(graph.store as? AtomicStore).flush()
        #expect(callLog.take() == ["save(50)"])
        try #require(graph.store as? AtomicStore).flush()
        #expect(callLog.take().isEmpty, "nothing left to write")
        graph.coordinator.removePersistentStore(graph.store)
        let reopened = try TestGraph(model: model, storeType: "Recording", url: url)
        #expect(try reopened.context.count(for: FetchRequest(entityName: "Author")) == 50)
    }

    @Test func aZeroLengthFileIsANewStoreAndGoesIfNeverSaved() throws {
        PersistentStoreCoordinator.registerStoreType(JSONLinesStore.self, named: JSONLinesStore.typeName)
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("empty.jsonl")
        #expect(FileManager.default.createFile(atPath: url.path, contents: Data()))
        let model = try Self.model()
        let graph = try TestGraph(model: model, storeType: JSONLinesStore.typeName, url: url)
        #expect((graph.store as? AtomicStore)?.isNew == true)
        #expect(
            graph.store.metadata.storeType == JSONLinesStore.typeName && !graph.store.identifier.isEmpty,
            "metadata valid right after init")
        graph.coordinator.removePersistentStore(graph.store)
        #expect(!FileManager.default.fileExists(atPath: url.path), "a zero-length file never saved into is removed")

        // Saved into, it stays; a missing file is new too and appears only when saved.
        #expect(FileManager.default.createFile(atPath: url.path, contents: Data()))
        let saved = try TestGraph(model: model, storeType: JSONLinesStore.typeName, url: url)
        saved.insert("Author", ["name": .string("Grace")])
        try saved.context.save()
        saved.coordinator.removePersistentStore(saved.store)
        #expect(FileManager.default.fileExists(atPath: url.path))
        let missing = directory.url.appendingPathComponent("missing.jsonl")
        let fresh = try TestGraph(model: model, storeType: JSONLinesStore.typeName, url: missing)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        fresh.coordinator.removePersistentStore(fresh.store)
    }

    /// A save whose write fails leaves the store's nodes (and the file) as they were.
    @Test func aFailedWriteChangesNothing() throws {
        PersistentStoreCoordinator.registerStoreType(FailingStore.self, named: "Failing")
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("books.jsonl")
        let graph = try TestGraph(model: try Self.model(), storeType: "Failing", url: url)
        let ada = graph.insert("Author", ["name": .string("Ada")])
        try graph.context.save()
        let before = try String(contentsOf: url, encoding: .utf8)
        graph.insert("Author", ["name": .string("Grace")])
        ada["name"] = .string("Ada Lovelace")
        failingWrites.set(true)
        defer { failingWrites.set(false) }
        #expect(throws: StoreError.self) { try graph.context.save() }
        #expect(try graph.storedCount("Author") == 1)
        let stored = try graph.makeContext().fetch(FetchRequest(entityName: "Author"))
        #expect(stored.map { $0["name"] } == [.string("Ada")], "the update is not in the store's nodes either")
        #expect(try String(contentsOf: url, encoding: .utf8) == before)
    }

    /// A crash in the middle of a save (the temporary file written in part, the rename never done)
    /// leaves the old store readable as it was.
    @Test func aCrashMidSaveLeavesTheOldStore() throws {
        PersistentStoreCoordinator.registerStoreType(CrashingStore.self, named: "Crashing")
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("books.jsonl")
        let model = try Self.model()
        let graph = try TestGraph(model: model, storeType: "Crashing", url: url)
        graph.insert("Author", ["name": .string("Ada")])
        try graph.context.save()
        graph.insert("Author", ["name": .string("Grace")])
        failingWrites.set(true)
        defer { failingWrites.set(false) }
        #expect(throws: StoreError.self) { try graph.context.save() }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).contains {
                $0.contains(".sluice-save-")
            }, "the torn temporary file is there")
        let reopened = try TestGraph(model: model, storeType: "Crashing", url: url)
        #expect(try reopened.context.fetch(FetchRequest(entityName: "Author")).map { $0["name"] } == [.string("Ada")])
    }
}

/// A save that dies half way: the new contents half written to the temporary file, never renamed.
final class CrashingStore: JSONLinesStore {
    override func save() throws {
        guard failingWrites.isSet, let url else { return try super.save() }
        let partial = Data("{\"identifier\": \"half a fi".utf8)
        _ = FileManager.default.createFile(atPath: url.path + ".sluice-save-\(getpid())", contents: partial)
        throw StoreError(.io, "killed (simulated)", url: url)
    }
}

final class Flag: @unchecked Sendable {
    // @unchecked: `value` is only touched with `lock` held.
    private let lock = NSLock()
    private var value = false
    func set(_ on: Bool) { lock.withLock { value = on } }
    var isSet: Bool { lock.withLock { value } }
}

let failingWrites = Flag()

final class FailingStore: JSONLinesStore {
    override func save() throws {
        if failingWrites.isSet { throw StoreError(.io, "disk full (simulated)", url: url) }
        try super.save()
    }
}
