import Foundation
import ObjectGraph

/// A company model exercising every relationship kind and delete rule:
///
/// - `Person` (parent) ← `Employee`; `Employee.department` ↔ `Department.employees` (one-to-many, Nullify)
/// - `Employee.projects` ↔ `Project.members` (many-to-many)
/// - `Employee.manager` ↔ `Employee.reports` (reflexive one-to-many)
/// - `Employee.cousins` (self-inverse many-to-many), `Employee.spouse` (self-inverse one-to-one)
/// - `Employee.badge` → `Badge` (unidirectional, No Action)
/// - `Department.rooms` ↔ `Room.department` (Cascade), `Room.desks` ↔ `Desk.room` (Cascade)
/// - `Department.contracts` ↔ `Contract.department` (Deny)
/// - `Department.boxes` ↔ `ArchiveBox.department` (No Action)
/// - `Playlist.tracks` (ordered to-many) ↔ `Track.playlist`
public enum CompanyModel {
    public static func make(employeeClass: ManagedObject.Type? = nil) throws -> ManagedObjectModel {
        func string(_ name: String, optional: Bool = true) -> AttributeDescription {
            AttributeDescription(name: name, type: .string, isOptional: optional)
        }
        func rel(
            _ name: String, _ destination: String, inverse: String?, toMany: Bool = false,
            rule: DeleteRule = .nullify, ordered: Bool = false, optional: Bool = true
        ) -> RelationshipDescription {
            RelationshipDescription(
                name: name, destination: destination, inverse: inverse, isToMany: toMany,
                isOrdered: ordered, isOptional: optional, deleteRule: rule)
        }
        return try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Person",
                attributes: [
                    string("name", optional: false),
                    AttributeDescription(name: "age", type: .integer16),
                ]),
            EntityDescription(
                name: "Employee", parent: "Person",
                attributes: [
                    AttributeDescription(name: "salary", type: .decimal),
                    AttributeDescription(name: "hiredAt", type: .date),
                    AttributeDescription(name: "scratch", type: .string, isTransient: true),
                ],
                relationships: [
                    rel("department", "Department", inverse: "employees"),
                    rel("projects", "Project", inverse: "members", toMany: true),
                    rel("manager", "Employee", inverse: "reports"),
                    rel("reports", "Employee", inverse: "manager", toMany: true),
                    rel("cousins", "Employee", inverse: "cousins", toMany: true),
                    rel("spouse", "Employee", inverse: "spouse"),
                    rel("badge", "Badge", inverse: nil, rule: .noAction),
                ], managedObjectClass: employeeClass),
            EntityDescription(
                name: "Department",
                attributes: [
                    string("name", optional: false),
                    AttributeDescription(name: "budget", type: .decimal),
                ],
                relationships: [
                    rel("employees", "Employee", inverse: "department", toMany: true, rule: .nullify),
                    rel("rooms", "Room", inverse: "department", toMany: true, rule: .cascade),
                    rel("contracts", "Contract", inverse: "department", toMany: true, rule: .deny),
                    rel("boxes", "ArchiveBox", inverse: "department", toMany: true, rule: .noAction),
                ], uniquenessConstraints: [["name"]]),
            EntityDescription(
                name: "Room", attributes: [string("number")],
                relationships: [
                    rel("department", "Department", inverse: "rooms"),
                    rel("desks", "Desk", inverse: "room", toMany: true, rule: .cascade),
                ]),
            EntityDescription(
                name: "Desk", attributes: [string("label")], relationships: [rel("room", "Room", inverse: "desks")]),
            EntityDescription(
                name: "Contract", attributes: [string("code")],
                relationships: [rel("department", "Department", inverse: "contracts")]),
            EntityDescription(
                name: "ArchiveBox", attributes: [string("label")],
                relationships: [rel("department", "Department", inverse: "boxes")]),
            EntityDescription(
                name: "Project", attributes: [string("title")],
                relationships: [
                    rel("members", "Employee", inverse: "projects", toMany: true)
                ]),
            EntityDescription(name: "Badge", attributes: [string("code")]),
            EntityDescription(
                name: "Playlist", attributes: [string("title")],
                relationships: [
                    rel("tracks", "Track", inverse: "playlist", toMany: true, ordered: true)
                ]),
            EntityDescription(
                name: "Track", attributes: [string("title")],
                relationships: [rel("playlist", "Playlist", inverse: "tracks")]),
        ])
    }
}

/// A coordinator with one store (in-memory unless told otherwise) and a confinement context on it
/// (tests run on one thread).
public struct TestGraph {
    public let model: ManagedObjectModel
    public let coordinator: PersistentStoreCoordinator
    public let store: any PersistentStore
    public let context: ManagedObjectContext

    public init(
        model: ManagedObjectModel, storeType: String = InMemoryStore.storeType, url: URL? = nil,
        options: [String: String] = [:]
    ) throws {
        self.model = model
        coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        store = try coordinator.addPersistentStore(type: storeType, at: url, options: options)
        context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
    }

    private init(model: ManagedObjectModel, coordinator: PersistentStoreCoordinator, store: any PersistentStore) {
        self.model = model
        self.coordinator = coordinator
        self.store = store
        context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
    }

    /// The same coordinator and store with a new context in place of `context`: how a test sees an
    /// in-memory store afresh, which a new coordinator would find empty.
    public func withNewContext() -> TestGraph {
        TestGraph(model: model, coordinator: coordinator, store: store)
    }

    /// A second context on the same coordinator (what another import worker would use).
    public func makeContext() -> ManagedObjectContext {
        ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
    }

    /// Inserts an object with the given attribute values.
    @discardableResult
    public func insert(
        _ entity: String, _ values: [String: AttributeValue] = [:], into context: ManagedObjectContext? = nil
    ) -> ManagedObject {
        let object = (context ?? self.context).insertNewObject(forEntityName: entity)
        for (key, value) in values { object[key] = value }
        return object
    }

    /// The number of rows of an entity in the store (what a fresh context would see).
    public func storedCount(_ entity: String) throws -> Int {
        var request = FetchRequest(entityName: entity)
        request.includesPendingChanges = false
        return try makeContext().count(for: request)
    }
}

/// A temporary directory removed when the value goes away.
public final class TemporaryDirectory {
    public let url: URL
    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    public func file(_ name: String, contents: String? = nil) throws -> URL {
        let file = url.appendingPathComponent(name)
        if let contents { try contents.write(to: file, atomically: true, encoding: .utf8) }
        return file
    }
}

extension ManagedObject {
    /// The `name`/`title`/`code`/`label` of an object, for compact assertions.
    public var label: String {
        for key in ["name", "title", "code", "label", "number"] where entity.attribute(named: key) != nil {
            return string(forKey: key) ?? "nil"
        }
        return objectID.description
    }
}

/// The files of a run's making left in the folder of `path` (a work copy `<target>.sluice-tmp-<pid>`
/// and its WAL, a rejects or report file in the making): none once every run has ended.
public func leftovers(beside path: String) -> [String] {
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
    return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.contains(".sluice-tmp") }
        .sorted()
}
