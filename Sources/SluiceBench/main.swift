import Foundation
import ObjectGraph

// `make bench`: one BENCH line per case. Release build only; never part of `swift test`.
// Usage: sluice-bench [objects] (default 200000)

func peakRSSMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024   // Linux reports kilobytes
}

func report(_ name: String, records: Int, seconds: Double, bytes: Double = 0) {
    let line = String(format: "BENCH case=%@ records=%d seconds=%.3f records_per_s=%.0f mb_per_s=%.1f peak_rss_mb=%.1f",
                      name, records, seconds, Double(records) / seconds, bytes / 1_048_576 / seconds, peakRSSMegabytes())
    print(line)
}

func time(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 200_000 : 200_000
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

// Case 1: insert `count` objects with 6 attributes and a to-one relationship (whose inverse is a
// to-many) through a context that saves and resets every 5,000 objects, into the in-memory store.
let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
try coordinator.addPersistentStore(type: InMemoryStore.storeType)
let context = ManagedObjectContext(concurrencyType: .confinement, coordinator: coordinator)
var customerIDs: [ManagedObjectID] = []
for code in 0..<parentCount { context.insertNewObject(forEntityName: "Customer")["code"] = .integer(Int64(code)) }
try context.save()
customerIDs = try context.fetchObjectIDs(FetchRequest(entityName: "Customer", sortDescriptors: [FetchSortDescriptor("code")]))
context.reset()

let order = model["Order"]!
let index = (number: order.attributeIndex(named: "number")!, placedAt: order.attributeIndex(named: "placedAt")!,
             quantity: order.attributeIndex(named: "quantity")!, price: order.attributeIndex(named: "price")!,
             note: order.attributeIndex(named: "note")!, weight: order.attributeIndex(named: "weight")!)
let insertSeconds = try time {
    for n in 0..<count {
        let object = context.insertNewObject(forEntityName: "Order")
        object[attributeAt: index.number] = .integer(Int64(n))
        object[attributeAt: index.placedAt] = .date(Date(timeIntervalSinceReferenceDate: Double(n)))
        object[attributeAt: index.quantity] = .integer(Int64(n % 7))
        object[attributeAt: index.price] = .decimal(Decimal(sign: .plus, exponent: -2, significand: Decimal(n % 10_000)))
        object[attributeAt: index.note] = n % 3 == 0 ? .string("note \(n)") : .null
        object[attributeAt: index.weight] = .double(Double(n) * 0.5)
        object.setRelatedObject(context.object(with: customerIDs[(n * 7919) % parentCount]), forKey: "customer")
        if (n + 1) % batchSize == 0 {
            try context.save()
            context.reset()
        }
    }
    try context.save()
    context.reset()
}
report("objectgraph_insert_inmemory", records: count, seconds: insertSeconds)

// Case 2: evaluate a parsed predicate with a key path through the to-one relationship over every
// stored order (the in-memory store's filter path).
var matched = 0
let predicate = try FetchPredicate(format: "quantity BETWEEN {2, 4} AND customer.code < 500 AND note BEGINSWITH[c] 'NOTE 1'")
let fetchSeconds = try time {
    matched = try context.count(for: FetchRequest(entityName: "Order", predicate: predicate))
}
precondition(matched > 0, "the predicate bench matched nothing")
report("predicate_filter_inmemory", records: count, seconds: fetchSeconds)
