import Foundation
import ObjectGraph
import Testing

@testable import Pipeline

/// The run's cache of stored keys: compact integer keys (single entries and runs), other keys of
/// one attribute, keys of several attributes, and its bound.
@Suite struct KnownKeysTests {
    static let template = ManagedObjectID(entityName: "Order", storeIdentifier: "S", reference: .integer(1))
    static func id(_ reference: Int64, entity: String = "Order") -> ManagedObjectID {
        ManagedObjectID(entityName: entity, storeIdentifier: "S", reference: .integer(reference))
    }

    @Test func consecutiveKeysBecomeRunsThatAnswerEveryKeyInside() {
        let known = KnownKeys()
        // Keys 100..<1100 written as references 5000..<6000, in two batches that continue each other.
        known.remember(values: (100..<600).map { .integer($0) }, objectIDs: (5000..<5500).map { Self.id($0) })
        known.remember(values: (600..<1100).map { .integer($0) }, objectIDs: (5500..<6000).map { Self.id($0) })
        #expect(known.count == 1, "one run holds a thousand keys")
        let asked: [AttributeValue?] = [
            .integer(100), .integer(1099), .integer(737), .integer(99), .integer(1100), nil,
        ]
        #expect(known.objectIDs(forValues: asked) == [Self.id(5000), Self.id(5999), Self.id(5637), nil, nil, nil])
    }

    @Test func scatteredKeysAreSingleEntriesAndRunsMerge() {
        let known = KnownKeys()
        let keys: [Int64] = [7, 3, 42, 11]  // not in order, not consecutive
        known.remember(values: keys.map { .integer($0) }, objectIDs: keys.map { Self.id($0 * 10) })
        #expect(known.count == 4)
        known.remember(values: (20..<40).map { .integer($0) }, objectIDs: (200..<220).map { Self.id($0) })
        // Joins the run before it.
        known.remember(values: (0..<20).map { .integer($0) }, objectIDs: (180..<200).map { Self.id($0) })
        #expect(known.count == 4 + 1, "the two runs became one")
        #expect(
            known.objectIDs(forValues: [.integer(42), .integer(0), .integer(39), .integer(7)])
                == [Self.id(420), Self.id(180), Self.id(219), Self.id(180 + 7)],
            "a run answers before a single entry it covers")
    }

    @Test func skippedAndNullKeysAreNotRemembered() {
        let known = KnownKeys()
        known.remember(values: [.integer(1), .null, .integer(3)], objectIDs: [nil, Self.id(2), Self.id(3)])
        #expect(known.count == 1)
        #expect(known.objectIDs(forValues: [.integer(1), .integer(3)]) == [nil, Self.id(3)])
    }

    @Test func otherKeysOfOneAttributeAndCompoundKeys() {
        let known = KnownKeys()
        // Text keys, and integer keys of another entity than the first integer key's: not compact, still found.
        known.remember(
            values: [.integer(5), .string("SKU-1")], objectIDs: [Self.id(50), Self.id(1, entity: "Product")])
        known.remember(values: [.integer(6)], objectIDs: [Self.id(60, entity: "Product")])
        #expect(
            known.objectIDs(forValues: [.string("SKU-1"), .string("SKU-2"), .integer(5), .integer(6)])
                == [Self.id(1, entity: "Product"), nil, Self.id(50), Self.id(60, entity: "Product")])
        known.remember([
            KeyedObjectID(key: [.integer(1), .integer(2)], objectID: Self.id(12)),
            KeyedObjectID(key: [.string("SKU-9")], objectID: Self.id(99)),
        ])
        let found = Dictionary(
            uniqueKeysWithValues: known.objectIDs(for: [
                [.integer(1), .integer(2)], [.integer(2), .integer(1)], [.string("SKU-9")],
            ]).map { ($0.0, $0.1) })
        #expect(found == [[.integer(1), .integer(2)]: Self.id(12), [.string("SKU-9")]: Self.id(99)])
    }

    @Test func itStartsOverWhenFull() {
        let known = KnownKeys(capacity: 3)
        known.remember(
            values: [.integer(1), .integer(5), .integer(9)], objectIDs: [Self.id(1), Self.id(5), Self.id(9)])
        #expect(known.count == 3)
        known.remember(values: [.string("x")], objectIDs: [Self.id(7)])
        #expect(known.count == 1 && known.objectIDs(forValues: [.integer(1), .string("x")]) == [nil, Self.id(7)])
    }
}
