import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

/// A store that cannot give a row while a fault fires (an I/O error, a damaged file): the context
/// records the failure instead of trapping, and the next save, fetch or count throws it — so a long
/// import reports it and nothing made up is written.
@Suite struct StoreFailureTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Customer",
                attributes: [
                    AttributeDescription(name: "number", type: .integer64, isOptional: false),
                    AttributeDescription(name: "name", type: .string),
                ])
        ])
    }

    /// A store of `count` customers whose file is then cut to its first page under a fresh
    /// coordinator, with one customer registered as a fault (no row read yet).
    static func damagedStore(count: Int) throws -> (file: SQLiteFile, fault: ManagedObject) {
        let file = try SQLiteFile(model: model())
        for number in 0..<count {
            file.graph.insert("Customer", ["number": .integer(Int64(number)), "name": .string("customer \(number)")])
        }
        try file.context.save()
        let ids = try file.context.fetchObjectIDs(FetchRequest(entityName: "Customer"))
        let graph = try file.reopen(options: ["cache_size": "0"])
        let fault = graph.context.object(with: ids[ids.count / 2])
        #expect(fault.isFault)
        // The file (and its WAL, where the saved pages may still be) cut under the open store.
        for (suffix, size) in [("", UInt64(4096)), ("-wal", 0)]
        where FileManager.default.fileExists(atPath: file.url.path + suffix) {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file.url.path + suffix))
            try handle.truncate(atOffset: size)
            try handle.close()
        }
        return (file, fault)
    }

    @Test func aFaultWhoseRowCannotBeReadDoesNotTrapAndTheSaveThrows() throws {
        let (file, fault) = try Self.damagedStore(count: 5_000)
        let context = file.context
        #expect(context.storeFailure == nil)
        // Firing the fault reads the row from the damaged file: no trap, default values.
        #expect(fault["name"] == .null)
        let failure = try #require(context.storeFailure)
        #expect(failure.code == .io || failure.code == .corrupt, "\(failure)")
        #expect(failure.objectID == fault.objectID || failure.underlying != nil, "\(failure)")
        // Nothing made up is written: the save throws the failure, and so do fetches and counts.
        fault["name"] = .string("changed")
        file.graph.insert("Customer", ["number": .integer(-1)])
        #expect(throws: StoreError.self) { try context.save() }
        #expect(throws: StoreError.self) { try context.fetch(FetchRequest(entityName: "Customer")) }
        #expect(throws: StoreError.self) { try context.count(for: FetchRequest(entityName: "Customer")) }
        // A reset forgets the made-up objects and the failure.
        context.reset()
        #expect(context.storeFailure == nil)
    }
}
