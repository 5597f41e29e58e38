import Foundation
import ObjectGraph
import Stores

// `make bench`: one BENCH line per case, each case in its own process so peak RSS is its own.
// Release build only; never part of `swift test`.
//
//   sluice-bench                     run every case
//   sluice-bench CASE OBJECTS        run one object-graph case (what the driver does for each)
//   sluice-bench CASE                run one reader case (ReaderCases.swift)
//
// Cases:
//   insert_inmemory    objects with 6 attributes and a to-one relationship, inserted through a
//                      context that saves and resets every 5,000 objects, into the in-memory store
//   insert_sqlite      the same into a new SQLite file (indexes built after the load, included in
//                      the time), then the file is checked: row count and a join query
//   fetch_sqlite       a predicate with a key path, compiled to SQL, counted over the SQLite file
//   filter_inmemory    the same predicate evaluated in memory over the in-memory store

func peakRSSMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024   // Linux reports kilobytes
}

func report(_ name: String, records: Int, seconds: Double, bytes: Double = 0) {
    print(String(format: "BENCH case=%@ records=%d seconds=%.3f records_per_s=%.0f mb_per_s=%.1f peak_rss_mb=%.1f",
                 name, records, seconds, Double(records) / seconds, bytes / 1_048_576 / seconds, peakRSSMegabytes()))
}

func time(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

let batchSize = 5_000
let parentCount = 1_000

let model = try ManagedObjectModel(entities: [
    EntityDescription(name: "Customer", attributes: [AttributeDescription(name: "code", type: .integer64, isOptional: false)],
                      relationships: [RelationshipDescription(name: "orders", destination: "Order", inverse: "customer", isToMany: true)]),
    EntityDescription(name: "Order", attributes: [
        AttributeDescription(name: "number", type: .integer64, isOptional: false),
        AttributeDescription(name: "placedAt", type: .date),
        AttributeDescription(name: "quantity", type: .integer32, minValue: .integer(0)),
        AttributeDescription(name: "price", type: .decimal),
        AttributeDescription(name: "note", type: .string, maxLength: 200),
        AttributeDescription(name: "weight", type: .double),
    ], relationships: [RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders", isOptional: false)]),
])

/// Inserts `count` orders (and 1,000 customers first) through a context that saves and resets every
/// `batchSize` objects.
func insertOrders(_ count: Int, into coordinator: PersistentStoreCoordinator) throws {
    let context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
    for code in 0..<parentCount { context.insertNewObject(forEntityName: "Customer")["code"] = .integer(Int64(code)) }
    try context.save()
    let customerIDs = try context.fetchObjectIDs(FetchRequest(entityName: "Customer", sortDescriptors: [FetchSortDescriptor("code")]))
    context.reset()
    let order = model["Order"]!
    let number = order.attributeIndex(named: "number")!, placedAt = order.attributeIndex(named: "placedAt")!
    let quantity = order.attributeIndex(named: "quantity")!, price = order.attributeIndex(named: "price")!
    let note = order.attributeIndex(named: "note")!, weight = order.attributeIndex(named: "weight")!
    let customer = order.relationshipIndex(named: "customer")!
    for n in 0..<count {
        let object = ManagedObject(entity: order, insertInto: context)   // no entity lookup by name per record
        object[attributeAt: number] = .integer(Int64(n))
        object[attributeAt: placedAt] = .date(Date(timeIntervalSinceReferenceDate: Double(n)))
        object[attributeAt: quantity] = .integer(Int64(n % 7))
        object[attributeAt: price] = .decimal(Decimal(sign: .plus, exponent: -2, significand: Decimal(n % 10_000)))
        object[attributeAt: note] = n % 3 == 0 ? .string("note \(n)") : .null
        object[attributeAt: weight] = .double(Double(n) * 0.5)
        object.setRelatedObject(context.object(with: customerIDs[(n * 7919) % parentCount]), at: customer)
        if (n + 1) % batchSize == 0 {
            try context.save()
            context.reset()
        }
    }
    try context.save()
    context.reset()
}

let predicate = try FetchPredicate(format: "quantity BETWEEN {2, 4} AND customer.code < 500 AND note BEGINSWITH[c] 'NOTE 1'")

func runCase(_ name: String, _ count: Int) throws {
    SQLiteStore.register()
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    switch name {
    case "insert_inmemory", "filter_inmemory":
        try coordinator.addPersistentStore(type: InMemoryStore.storeType)
        let seconds = try time { try insertOrders(count, into: coordinator) }
        if name == "insert_inmemory" { return report(name, records: count, seconds: seconds) }
        let context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
        var matched = 0
        let filterSeconds = try time { matched = try context.count(for: FetchRequest(entityName: "Order", predicate: predicate)) }
        precondition(matched > 0, "the predicate matched nothing")
        report(name, records: count, seconds: filterSeconds)
    case "insert_sqlite", "fetch_sqlite":
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("bench.sqlite")
        let store = try coordinator.addPersistentStore(type: SQLiteStore.storeType, at: url) as! SQLiteStore
        var indexSeconds = 0.0
        let seconds = try time {
            try insertOrders(count, into: coordinator)
            if ProcessInfo.processInfo.environment["BENCH_PHASES"] != nil { print("before index build rss \(peakRSSMegabytes())") }
            indexSeconds = try time { try store.buildPendingIndexes() }
        }
        if ProcessInfo.processInfo.environment["BENCH_PHASES"] != nil { print("index build \(indexSeconds)s, rss \(peakRSSMegabytes())") }
        let context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
        let stored = try context.count(for: FetchRequest(entityName: "Order"))
        precondition(stored == count, "the store holds \(stored) orders, not \(count)")
        let bytes = Double((try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0)
        if name == "insert_sqlite" { return report(name, records: count, seconds: seconds, bytes: bytes) }
        var matched = 0
        let fetchSeconds = try time { matched = try context.count(for: FetchRequest(entityName: "Order", predicate: predicate)) }
        precondition(matched > 0, "the predicate matched nothing")
        report(name, records: count, seconds: fetchSeconds)
    default:
        FileHandle.standardError.write(Data("unknown case \(name)\n".utf8))
        exit(2)
    }
}

let arguments = CommandLine.arguments
if arguments.count == 3, let count = Int(arguments[2]) {
    try runCase(arguments[1], count)
} else if arguments.count == 2 {
    try runReaderCase(arguments[1])
} else {
    // Each case in a fresh process: its peak RSS is its own.
    let plan: [(String, Int)] = [
        ("insert_inmemory", 200_000), ("filter_inmemory", 200_000),
        ("insert_sqlite", 100_000), ("insert_sqlite", 1_000_000), ("fetch_sqlite", 1_000_000),
        ("read_csv", 0), ("read_csv_gz", 0), ("zcat_csv_gz", 0), ("read_xml", 0), ("read_xml_gz", 0), ("zcat_xml_gz", 0), ("parse_xml_only", 0),
        ("read_sqldump", 0), ("read_sqldump_gz", 0), ("zcat_sqldump_gz", 0),
    ]
    for (name, count) in plan {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0]).standardizedFileURL
        process.arguments = name.hasPrefix("insert") || name.hasPrefix("fetch") || name.hasPrefix("filter") ? [name, String(count)] : [name]
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 { exit(process.terminationStatus) }
    }
}
