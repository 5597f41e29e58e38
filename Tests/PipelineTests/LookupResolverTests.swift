import Foundation
import ObjectGraph
import Pipeline
import Stores
import TestSupport
import Testing

/// Lookups by key against a real SQLite store (departments by their unique name).
@Suite struct LookupResolverTests {
    struct Store {
        let directory: TemporaryDirectory
        let graph: TestGraph
        init() throws {
            SQLiteStore.register()
            directory = try TemporaryDirectory()
            graph = try TestGraph(
                model: try CompanyModel.make(), storeType: SQLiteStore.storeType,
                url: directory.url.appendingPathComponent("s.sqlite"))
            for name in ["Sales", "Research"] { graph.insert("Department", ["name": .string(name)]) }
            try graph.context.save()
            graph.context.reset()
        }
    }

    static func departments(createsMissing: Bool) -> PipelineConfig.Lookup {
        PipelineConfig.Lookup(
            relationship: "department", entity: "Department", key: [(attribute: "name", from: "dept")],
            createsMissing: createsMissing)
    }

    @Test func oneFetchPerBatchAndACacheAfterIt() throws {
        let store = try Store()
        let context = store.graph.makeContext()
        let resolver = try LookupResolver(lookup: Self.departments(createsMissing: false), model: store.graph.model)
        let found = try resolver.resolve([["Sales"], ["Research"], ["Legal"], ["Sales"], nil], in: context)
        #expect(found.map { $0?.string(forKey: "name") } == ["Sales", "Research", nil, "Sales", nil])
        #expect(found[0] === found[3], "one object per key")
        #expect(resolver.fetchCount == 1)
        _ = try resolver.resolve([["Research"], ["Sales"]], in: context)
        #expect(resolver.fetchCount == 1, "known keys come from the cache")
        #expect(!context.hasChanges, "must-exist creates nothing")
    }

    @Test func findOrCreateInsertsEachMissingKeyOnce() throws {
        let store = try Store()
        let context = store.graph.makeContext()
        let resolver = try LookupResolver(lookup: Self.departments(createsMissing: true), model: store.graph.model)
        let found = try resolver.resolve([["Legal"], ["Sales"], ["Legal"]], in: context)
        #expect(found[0] === found[2] && found[0]?.isInserted == true && found[1]?.isInserted == false)
        try context.save()
        context.reset()
        resolver.reset()
        #expect(try store.graph.storedCount("Department") == 3)
        let again = try resolver.resolve([["Legal"]], in: context)
        #expect(
            again[0]?.isInserted == false && resolver.fetchCount == 2,
            "after a reset the saved object is fetched, not created again")
    }

    @Test func unsavedObjectsOfTheContextAreFound() throws {
        let store = try Store()
        let context = store.graph.makeContext()
        let pending = store.graph.insert("Department", ["name": "Ops"], into: context)
        let resolver = try LookupResolver(lookup: Self.departments(createsMissing: true), model: store.graph.model)
        #expect(try resolver.resolve([["Ops"]], in: context)[0] === pending)
    }

    @Test func aThousandAndOneKeysTakeThreeFetches() throws {
        let store = try Store()
        let context = store.graph.makeContext()
        let resolver = try LookupResolver(lookup: Self.departments(createsMissing: false), model: store.graph.model)
        let keys: [[AttributeValue]?] = (0..<1_000).map { [.string("D\($0)")] } + [["Sales"]]
        let found = try resolver.resolve(keys, in: context)
        #expect(
            found.compactMap { $0 }.count == 1 && resolver.fetchCount == 3,
            "1,001 new keys: three fetches of at most 500")
    }

    @Test func storedObjectsComeAsFaultsAndTheRunRemembersTheirKeys() throws {
        let store = try Store()
        let context = store.graph.makeContext()
        let known = KnownKeys()
        let first = try LookupResolver(
            lookup: Self.departments(createsMissing: false), model: store.graph.model, known: known)
        let found = try first.resolve([["Sales"]], in: context)
        #expect(found[0]?.isFault == true, "a lookup reads no row")
        #expect(known.count == 1)
        context.reset()
        // Another worker's resolver (same run) finds the key without asking the store.
        let second = try LookupResolver(
            lookup: Self.departments(createsMissing: false), model: store.graph.model, known: known)
        let again = try second.resolve([["Sales"]], in: context)
        #expect(second.fetchCount == 0 && again[0]?.objectID == found[0]?.objectID)
        #expect(again[0]?.string(forKey: "name") == "Sales")
    }

    @Test func knownKeysStayBounded() throws {
        let store = try Store()
        store.graph.insert("Department", ["name": "Legal"])
        try store.graph.context.save()
        let known = KnownKeys(capacity: 2)
        let resolver = try LookupResolver(
            lookup: Self.departments(createsMissing: false), model: store.graph.model, known: known)
        _ = try resolver.resolve([["Sales"], ["Research"]], in: store.graph.makeContext())
        #expect(known.count == 2)
        resolver.reset()
        _ = try resolver.resolve([["Legal"]], in: store.graph.makeContext())
        #expect(known.count == 1, "full: it started over")
    }
}
