import Foundation
import ObjectGraph
import Stores
import Synchronization

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
//   insert_sqlite_2ctx the insert_sqlite load split between 2 private-queue contexts on one
//                      coordinator, importing at the same time (one thread each)
//   insert_sqlite_keyed insert_sqlite with a uniqueness constraint on Order.number (every save looks
//                      its keys up in the unique index, finding none)
//   upsert_sqlite      after insert_sqlite_keyed (not timed), the same keys imported again under
//                      object-trumps, every attribute but the key changed, each order with its
//                      customer: every object becomes an update of its stored row
//   upsert_sqlite_moved the same, and every order also moves to another customer (the foreign-key
//                      index changes for every row)
//   filter_inmemory    the same predicate evaluated in memory over the in-memory store
//   save_sqlite_once, save_xml, save_binary   100,000 orders and 1,000 customers inserted in one
//                      context and saved once into a new store of that type (the file is kept)
//   load_sqlite, load_xml, load_binary        that file added to a new coordinator (XML and binary
//                      read the whole file) and its orders counted
//   hostile_*, waiting_children_1m, xml_depth_1m_infer, contexts_*, xml_target_200k: the built
//                      `sluice` on hostile and unlucky inputs (HostileCases.swift)
//   memory_*           the built `sluice` on huge records, huge batches, a resume of a million
//                      waiting records (MemoryCases.swift)
//   read_jsonl, split_jsonl_c  the kit's tables as JSON Lines read with every member a field, and
//                      the C floor (a newline-splitting pass over the same files)
//   rerun_*            the built `sluice` loading 1,000,000 keyed rows, then again: unchanged, or
//                      10% updated (RerunCases.swift)
//   c_parse_csv, c_load_csv, sqlite3_import_csv, import_csv_oneoff: the references each case's
//                      `ratio=` is to, and the one-off import beside `sqlite3 .import` (References.swift)

func peakRSSMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024  // Linux reports kilobytes
}

func report(_ name: String, records: Int, seconds: Double, bytes: Double = 0) {
    print(
        String(
            format: "BENCH case=%@ records=%d seconds=%.3f records_per_s=%.0f mb_per_s=%.1f peak_rss_mb=%.1f",
            name, records, seconds, Double(records) / seconds, bytes / 1_048_576 / seconds, peakRSSMegabytes()))
}

func time(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

let batchSize = 5_000
let parentCount = 1_000

func makeModel(keyed: Bool) throws -> ManagedObjectModel {
    try ManagedObjectModel(entities: [
        EntityDescription(
            name: "Customer", attributes: [AttributeDescription(name: "code", type: .integer64, isOptional: false)],
            relationships: [
                RelationshipDescription(name: "orders", destination: "Order", inverse: "customer", isToMany: true)
            ]),
        EntityDescription(
            name: "Order",
            attributes: [
                AttributeDescription(name: "number", type: .integer64, isOptional: false),
                AttributeDescription(name: "placedAt", type: .date),
                AttributeDescription(name: "quantity", type: .integer32, minValue: .integer(0)),
                AttributeDescription(name: "price", type: .decimal),
                AttributeDescription(name: "note", type: .string, maxLength: 200),
                AttributeDescription(name: "weight", type: .double),
            ],
            relationships: [
                RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders", isOptional: false)
            ],
            uniquenessConstraints: keyed ? [["number"]] : []),
    ])
}

/// Inserts 1,000 customers and returns their IDs in code order.
func insertCustomers(into coordinator: PersistentStoreCoordinator) throws -> [ManagedObjectID] {
    let context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
    for code in 0..<parentCount { context.insertNewObject(forEntityName: "Customer")["code"] = .integer(Int64(code)) }
    try context.save()
    return try context.fetchObjectIDs(
        FetchRequest(entityName: "Customer", sortDescriptors: [FetchSortDescriptor("code")]))
}

/// Inserts orders numbered `numbers` through `context`, saving and resetting every `batchSize`
/// objects; `revision` changes every attribute but the number (a re-import of changed data), and
/// with `movesCustomers` the customer too.
func insertOrders(
    _ numbers: Range<Int>, customers customerIDs: [ManagedObjectID], revision: Int = 0, movesCustomers: Bool = false,
    through context: ManagedObjectContext
) throws {
    let order = context.managedObjectModel["Order"]!
    let number = order.attributeIndex(named: "number")!, placedAt = order.attributeIndex(named: "placedAt")!
    let quantity = order.attributeIndex(named: "quantity")!, price = order.attributeIndex(named: "price")!
    let note = order.attributeIndex(named: "note")!, weight = order.attributeIndex(named: "weight")!
    let customer = order.relationshipIndex(named: "customer")!
    var pending = 0
    for n in numbers {
        let object = ManagedObject(entity: order, insertInto: context)  // no entity lookup by name per record
        let v = n + revision
        object[attributeAt: number] = .integer(Int64(n))
        object[attributeAt: placedAt] = .date(Date(timeIntervalSinceReferenceDate: Double(v)))
        object[attributeAt: quantity] = .integer(Int64(v % 7))
        object[attributeAt: price] = .decimal(Decimal(sign: .plus, exponent: -2, significand: Decimal(v % 10_000)))
        object[attributeAt: note] = v % 3 == 0 ? .string("note \(v)") : .null
        object[attributeAt: weight] = .double(Double(v) * 0.5)
        object.setRelatedObject(
            context.object(with: customerIDs[((movesCustomers ? v : n) * 7919) % parentCount]), at: customer)
        pending += 1
        if pending == batchSize {
            try context.save()
            context.reset()
            pending = 0
        }
    }
    try context.save()
    context.reset()
}

/// Inserts `count` orders (and 1,000 customers first) through one context.
func insertOrders(_ count: Int, into coordinator: PersistentStoreCoordinator) throws {
    let customers = try insertCustomers(into: coordinator)
    try insertOrders(
        0..<count, customers: customers,
        through: ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator))
}

let predicate = try FetchPredicate(
    format: "quantity BETWEEN {2, 4} AND customer.code < 500 AND note BEGINSWITH[c] 'NOTE 1'")

/// A new SQLite store in a temporary directory, removed by `cleanUp`.
func newSQLiteStore(
    _ coordinator: PersistentStoreCoordinator
) throws -> (store: SQLiteStore, url: URL, cleanUp: () -> Void) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let url = directory.appendingPathComponent("bench.sqlite")
    let store =
        try coordinator.addPersistentStore(
            type: SQLiteStore.storeType, at: url,
            options: ProcessInfo.processInfo.environment["BENCH_CACHE"].map { ["cache_size": $0] } ?? [:])
        as! SQLiteStore
    return (store, url, { try? FileManager.default.removeItem(at: directory) })
}

func checkStoredOrders(_ coordinator: PersistentStoreCoordinator, _ count: Int) throws {
    let context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
    let stored = try context.count(for: FetchRequest(entityName: "Order"))
    precondition(stored == count, "the store holds \(stored) orders, not \(count)")
}

func fileSize(_ url: URL) -> Double {
    Double((try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0)
}

func runCase(_ name: String, _ count: Int) throws {
    SQLiteStore.register()
    let keyed = name == "insert_sqlite_keyed" || name.hasPrefix("upsert_sqlite")
    let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeModel(keyed: keyed))
    switch name {
    case "insert_inmemory", "filter_inmemory": try inMemoryCase(name, count, coordinator)
    case "insert_sqlite", "fetch_sqlite", "insert_sqlite_keyed": try sqliteInsertCase(name, count, coordinator)
    case "insert_sqlite_2ctx": try twoContextsCase(name, count, coordinator)
    case "upsert_sqlite", "upsert_sqlite_moved": try upsertCase(name, count, coordinator)
    case "save_xml", "save_binary", "save_sqlite_once", "load_xml", "load_binary", "load_sqlite":
        try atomicStoreCase(name, count)
    case "batches_xml": try batchesXMLCase(name, count)
    default:
        FileHandle.standardError.write(Data("unknown case \(name)\n".utf8))
        exit(2)
    }
}

/// `insert_inmemory`: `count` orders into the in-memory store; `filter_inmemory`: then the predicate
/// counted over them.
func inMemoryCase(_ name: String, _ count: Int, _ coordinator: PersistentStoreCoordinator) throws {
    try coordinator.addPersistentStore(type: InMemoryStore.storeType)
    let seconds = try time { try insertOrders(count, into: coordinator) }
    if name == "insert_inmemory" { return report(name, records: count, seconds: seconds) }
    report(name, records: count, seconds: try countMatching(coordinator))
}

/// Seconds to count the orders `predicate` matches (it must match some).
func countMatching(_ coordinator: PersistentStoreCoordinator) throws -> Double {
    let context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
    var matched = 0
    let seconds = try time { matched = try context.count(for: FetchRequest(entityName: "Order", predicate: predicate)) }
    precondition(matched > 0, "the predicate matched nothing")
    return seconds
}

/// `insert_sqlite`, `insert_sqlite_keyed`: `count` orders into a new SQLite file, indexes included;
/// `fetch_sqlite`: then the predicate counted over them.
func sqliteInsertCase(_ name: String, _ count: Int, _ coordinator: PersistentStoreCoordinator) throws {
    let (store, url, cleanUp) = try newSQLiteStore(coordinator)
    defer { cleanUp() }
    var indexSeconds = 0.0
    let seconds = try time {
        try insertOrders(count, into: coordinator)
        if ProcessInfo.processInfo.environment["BENCH_PHASES"] != nil {
            print("before index build rss \(peakRSSMegabytes())")
        }
        indexSeconds = try time { try store.buildPendingIndexes() }
    }
    if ProcessInfo.processInfo.environment["BENCH_PHASES"] != nil {
        print("index build \(indexSeconds)s, rss \(peakRSSMegabytes())")
    }
    try checkStoredOrders(coordinator, count)
    if name != "fetch_sqlite" { return report(name, records: count, seconds: seconds, bytes: fileSize(url)) }
    report(name, records: count, seconds: try countMatching(coordinator))
}

/// `insert_sqlite_2ctx`: the `insert_sqlite` load split between 2 private-queue contexts importing at
/// the same time.
func twoContextsCase(_ name: String, _ count: Int, _ coordinator: PersistentStoreCoordinator) throws {
    let (store, url, cleanUp) = try newSQLiteStore(coordinator)
    defer { cleanUp() }
    let seconds = try time {
        let customers = try insertCustomers(into: coordinator)
        let halves = [0..<count / 2, count / 2..<count]
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            do {
                try context.performAndWait {
                    try insertOrders(halves[worker], customers: customers, through: context)
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        precondition(failures.withLock { $0.isEmpty }, "an importing context failed: \(failures.withLock { $0 })")
        try store.buildPendingIndexes()
    }
    try checkStoredOrders(coordinator, count)
    report(name, records: count, seconds: seconds, bytes: fileSize(url))
}

/// `upsert_sqlite`, `upsert_sqlite_moved`: the keyed orders stored (not timed), then imported again
/// under object-trumps with every attribute but the key changed (and the customer, when moved).
func upsertCase(_ name: String, _ count: Int, _ coordinator: PersistentStoreCoordinator) throws {
    let (store, url, cleanUp) = try newSQLiteStore(coordinator)
    defer { cleanUp() }
    let customers = try insertCustomers(into: coordinator)
    try insertOrders(
        0..<count, customers: customers,
        through: ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator))
    try store.buildPendingIndexes()
    let context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
    context.mergePolicy = .objectTrumps
    let seconds = try time {
        try insertOrders(
            0..<count, customers: customers, revision: 1, movesCustomers: name == "upsert_sqlite_moved",
            through: context)
        try store.buildPendingIndexes()
    }
    try checkStoredOrders(coordinator, count)
    let check = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
    let last = try check.fetch(
        FetchRequest(entityName: "Order", predicate: try FetchPredicate(format: "number == %@", Int64(count - 1))))
    precondition(
        last.count == 1 && last[0].double(forKey: "weight") == Double(count) * 0.5,
        "the re-import did not update the rows")
    report(name, records: count, seconds: seconds, bytes: fileSize(url))
}

/// `batches_xml`: an import into an XML target: keyed orders saved a batch at a time (each save looks
/// its keys up), the file written once at the end (`deferred_writes`, as a pipeline's work copy).
func batchesXMLCase(_ name: String, _ count: Int) throws {
    XMLStore.register()
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-bench-batches-\(count).xml")
    try? FileManager.default.removeItem(at: url)
    defer { try? FileManager.default.removeItem(at: url) }
    let keyedCoordinator = PersistentStoreCoordinator(managedObjectModel: try makeModel(keyed: true))
    let store = try keyedCoordinator.addPersistentStore(
        type: XMLStore.storeType, at: url, options: ["deferred_writes": "true"])
    var bytes = 0.0
    let seconds = try time {
        try insertOrders(count, into: keyedCoordinator)
        try (store as? AtomicStore)?.flush()
        bytes = fileSize(url)
        keyedCoordinator.removePersistentStore(store)
    }
    report(name, records: count, seconds: seconds, bytes: bytes)
}

/// The whole-file stores next to SQLite: `save_*` inserts `count` orders (and 1,000 customers) in
/// one context and saves once into a new store file (kept for `load_*`); `load_*` adds that store to
/// a new coordinator (reading the whole file for XML and binary) and counts the orders, making the
/// file first (untimed, in a child process) when `save_*` did not.
func atomicStoreCase(_ name: String, _ count: Int) throws {
    XMLStore.register()
    BinaryStore.register()
    let kind = name.split(separator: "_", maxSplits: 1)[1]
    let type = kind == "xml" ? XMLStore.storeType : kind == "binary" ? BinaryStore.storeType : SQLiteStore.storeType
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
        "sluice-bench-\(type.lowercased())-\(count).store")
    let model = try makeModel(keyed: false)
    if name.hasPrefix("save") {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: type, at: url)
        let context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
        var customers: [ManagedObject] = []
        let seconds = try time {
            for code in 0..<parentCount {
                customers.append(context.insertNewObject(forEntityName: "Customer"))
                customers[code]["code"] = .integer(Int64(code))
            }
            for n in 0..<count {
                let order = context.insertNewObject(forEntityName: "Order")
                order["number"] = .integer(Int64(n))
                order["placedAt"] = .date(Date(timeIntervalSinceReferenceDate: Double(n)))
                order["quantity"] = .integer(Int64(n % 7))
                order["price"] = .decimal(Decimal(sign: .plus, exponent: -2, significand: Decimal(n % 10_000)))
                order["note"] = n % 3 == 0 ? .string("note \(n)") : .null
                order["weight"] = .double(Double(n) * 0.5)
                order.setRelatedObject(customers[(n * 7919) % parentCount], forKey: "customer")
            }
            try context.save()
            coordinator.removePersistentStore(store)
        }
        report(name, records: count, seconds: seconds, bytes: fileSize(url))
        return
    }
    if !FileManager.default.fileExists(atPath: url.path) {
        let maker = Process()
        maker.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        maker.arguments = ["save_" + kind.replacingOccurrences(of: "sqlite", with: "sqlite_once"), String(count)]
        maker.standardOutput = FileHandle.nullDevice
        try maker.run()
        maker.waitUntilExit()
    }
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    var stored = 0
    let seconds = try time {
        try coordinator.addPersistentStore(type: type, at: url)
        stored = try ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator).count(
            for: FetchRequest(entityName: "Order"))
    }
    precondition(stored == count, "the store holds \(stored) orders, not \(count)")
    report(name, records: count, seconds: seconds, bytes: fileSize(url))
}

let arguments = CommandLine.arguments
if arguments.count == 3, let count = Int(arguments[2]) {
    try runCase(arguments[1], count)
} else if arguments.count == 2 {
    if try !runHostileCase(arguments[1]), try !runMemoryCase(arguments[1]), try !runRerunCase(arguments[1]),
        try !runReferenceCase(arguments[1])
    {
        try runReaderCase(arguments[1])
    }
} else {
    // Each case in a fresh process: its peak RSS is its own. The references come first, so that each
    // case's line carries its ratio to one measured minutes before (References.swift).
    let plan: [(String, Int)] = [
        ("c_parse_csv", 0), ("c_load_csv", 0), ("sqlite3_import_csv", 0), ("zcat_csv_gz", 0), ("zcat_xml_gz", 0),
        ("parse_xml_only", 0), ("zcat_sqldump_gz", 0), ("split_jsonl_c", 0),
        ("import_csv_oneoff", 0), ("insert_inmemory", 200_000), ("filter_inmemory", 200_000),
        ("insert_sqlite", 100_000), ("insert_sqlite", 1_000_000), ("fetch_sqlite", 1_000_000),
        ("insert_sqlite_2ctx", 1_000_000), ("insert_sqlite_keyed", 1_000_000), ("upsert_sqlite", 1_000_000),
        ("upsert_sqlite_moved", 1_000_000),
        ("save_sqlite_once", 100_000), ("load_sqlite", 100_000), ("save_xml", 100_000), ("load_xml", 100_000),
        ("save_binary", 100_000), ("load_binary", 100_000), ("batches_xml", 50_000), ("batches_xml", 200_000),
        ("read_csv", 0), ("read_csv_gz", 0), ("read_xml", 0), ("read_xml_gz", 0),
        ("read_sqldump", 0), ("read_sqldump_gz", 0), ("read_jsonl", 0),
        ("hostile_text_100mb", 0), ("hostile_gzip_bomb", 0), ("hostile_gzip_bomb_infer", 0),
        ("waiting_children_1m", 0), ("xml_depth_1m_infer", 0), ("contexts_max", 0), ("contexts_100000", 0),
        ("xml_target_200k", 0), ("memory_huge_records_gz", 0), ("memory_batch_size_1m", 0),
        ("memory_resume_waiting", 0), ("rerun_unchanged", 0), ("rerun_10pct_updated", 0),
    ]
    warmPageCache()
    var measured: [String: BenchFigures] = [:]
    for (name, count) in plan {
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: arguments[0]).standardizedFileURL
        process.arguments = count > 0 ? [name, String(count)] : [name]
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            guard let figures = BenchFigures(line: String(line)) else {
                print(line)
                continue
            }
            print(line + figures.ratio(among: measured))
            measured[figures.name] = figures
        }
        fflush(nil)  // every stream: each line out as its case ends
        if process.terminationStatus != 0 { exit(process.terminationStatus) }
    }
}
