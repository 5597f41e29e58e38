import Foundation
import ObjectGraph
import TestSupport
import Testing

final class Booking: ManagedObject {
    override func validateAttribute(_ value: AttributeValue, forKey key: String) throws {
        if key == "room", case .string(let room) = value, room.hasPrefix("X") {
            throw validationFailure(
                key: key, value: value, rule: .custom("roomClosed"), message: "rooms in wing X are closed")
        }
    }

    override class var propertyValidators: [String: PropertyValidator] {
        ["guests": PropertyValidator(Booking.validateGuests), "hotel": PropertyValidator(Booking.validateHotel)]
    }

    /// `validateGuests`: a party of seven has no room.
    func validateGuests(_ value: Any?) throws {
        if value as? Int64 == 7 {
            throw validationFailure(
                key: "guests", value: .integer(7), rule: .custom("noRoomForSeven"), message: "no room sleeps seven")
        }
    }

    /// `validateHotel`: a hotel being closed takes no booking.
    func validateHotel(_ value: Any?) throws {
        if let hotel = value as? ManagedObject, hotel.string(forKey: "name") == "Closed" {
            throw validationFailure(key: "hotel", rule: .custom("hotelClosed"), message: "the hotel is closed")
        }
    }

    override func validateForInsert() throws {
        try ValidationError.collect(
            { try super.validateForInsert() },
            { try self.checkDates() })
    }

    override func validateForUpdate() throws {
        try ValidationError.collect({ try super.validateForUpdate() }, { try self.checkDates() })
    }

    private func checkDates() throws {
        if let start = date(forKey: "start"), let end = date(forKey: "end"), end < start {
            throw validationFailure(
                key: nil, rule: .custom("endAfterStart"), message: "a booking cannot end before it starts")
        }
    }
}

@Suite struct ValidationTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Booking",
                attributes: [
                    AttributeDescription(
                        name: "code", type: .string, isOptional: false, minLength: 3, maxLength: 6,
                        regularExpression: "[A-Z]+-[0-9]+"),
                    AttributeDescription(
                        name: "guests", type: .integer16, isOptional: false, minValue: .integer(1),
                        maxValue: .integer(8)),
                    AttributeDescription(name: "price", type: .decimal, minValue: .decimal(0)),
                    AttributeDescription(name: "room", type: .string),
                    AttributeDescription(name: "start", type: .date),
                    AttributeDescription(name: "end", type: .date),
                    AttributeDescription(name: "photo", type: .binary, maxLength: 4),
                    AttributeDescription(name: "guide", type: .uuid),
                ],
                relationships: [
                    RelationshipDescription(name: "hotel", destination: "Hotel", inverse: "bookings", isOptional: false)
                ], managedObjectClass: Booking.self),
            EntityDescription(
                name: "Hotel", attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(
                        name: "bookings", destination: "Booking", inverse: "hotel", isToMany: true,
                        deleteRule: .cascade, maxCount: 2),
                    RelationshipDescription(
                        name: "staff", destination: "Clerk", inverse: "hotel", isToMany: true, isOptional: false),
                ]),
            EntityDescription(
                name: "Clerk",
                relationships: [RelationshipDescription(name: "hotel", destination: "Hotel", inverse: "staff")]),
        ])
    }

    @Test func everyFailureOfAMultiErrorObjectIsReported() throws {
        let graph = try TestGraph(model: try Self.model())
        let booking = graph.insert(
            "Booking",
            [
                "code": "lower-case-and-long",
                "guests": .integer(40_000),
                "price": .decimal(-1),
                "room": "X12",
                "start": .date(Date(timeIntervalSinceReferenceDate: 100)),
                "end": .date(Date(timeIntervalSinceReferenceDate: 50)),
                "photo": .binary(Data([1, 2, 3, 4, 5])),
                "guide": .string("not a uuid"),
            ])
        let error = try #require(throws: ValidationError.self) { try graph.context.save() }
        let found = Set(error.failures.map { "\($0.key ?? "-"):\($0.rule)" })
        #expect(
            found == [
                "code:maxLength", "code:pattern", "guests:range", "price:minValue", "room:roomClosed",
                "photo:maxLength", "guide:type", "hotel:required", "-:endAfterStart",
            ])
        #expect(error.failures.allSatisfy { $0.objectID == booking.objectID && $0.entityName == "Booking" })
        let price = try #require(error.failures.first { $0.key == "price" })
        #expect(price.value == "-1" && price.message == "price must be at least 0")
        #expect(error.description.hasPrefix("Validation failed with 9 errors: "))
    }

    @Test func perKeyValidatorsRunAtSaveAfterTheModelsRulesPass() throws {
        let graph = try TestGraph(model: try Self.model())
        let closed = graph.insert("Hotel", ["name": "Closed"])
        let booking = graph.insert("Booking", ["code": "AB-1", "guests": 7])
        booking.setRelatedObject(closed, forKey: "hotel")
        let error = try #require(throws: ValidationError.self) { try graph.context.save() }
        let found = Set(error.failures.map { "\($0.entityName).\($0.key ?? "-"):\($0.rule)" })
        #expect(found.isSuperset(of: ["Booking.guests:noRoomForSeven", "Booking.hotel:hotelClosed"]), "\(found)")
    }

    @Test func validateValueChecksOneValueByTheModelsRulesAndTheValidatorsWithoutSettingIt() throws {
        let graph = try TestGraph(model: try Self.model())
        let booking = graph.insert("Booking", ["code": "AB-1", "guests": 2])
        func rules(_ value: Any?, _ key: String) -> [String] {
            do {
                try booking.validateValue(value, forKey: key)
                return []
            } catch let error as ValidationError {
                return error.failures.map { "\($0.rule)" }
            } catch { return ["\(error)"] }
        }
        #expect(rules(Int64(3), "guests").isEmpty)
        #expect(rules(Int64(9), "guests") == ["maxValue"])
        #expect(rules(Int64(7), "guests") == ["noRoomForSeven"])
        #expect(rules(nil, "guests") == ["required"])
        #expect(rules("X1", "room") == ["roomClosed"], "validateAttribute runs too")
        #expect(rules("A", "code") == ["minLength", "pattern"])
        #expect(rules(nil, "hotel") == ["required"])
        #expect(rules(graph.insert("Hotel", ["name": "Closed"]), "hotel") == ["hotelClosed"])
        #expect(rules(graph.insert("Clerk"), "hotel") == ["type"])
        let hotel = graph.insert("Hotel", ["name": "Ritz"])
        let three = (0..<3).map { _ in graph.insert("Booking") }
        #expect(throws: ValidationError.self) { try hotel.validateValue(three, forKey: "bookings") }
        try hotel.validateValue(Array(three.prefix(2)), forKey: "bookings")
        #expect(booking.integer(forKey: "guests") == 2, "nothing was set")
    }

    @Test func failuresOfSeveralObjectsAreCollectedInOneError() throws {
        let graph = try TestGraph(model: try Self.model())
        graph.insert("Booking", ["guests": 2])  // code and hotel missing
        let hotel = graph.insert("Hotel", ["name": "Ritz"])  // staff is required (non-optional to-many)
        for _ in 0..<3 {
            graph.insert("Booking", ["code": "AB-1", "guests": 2]).setRelatedObject(hotel, forKey: "hotel")
        }
        let error = try #require(throws: ValidationError.self) { try graph.context.save() }
        let found = error.failures.map { "\($0.entityName).\($0.key ?? "-"):\($0.rule)" }.sorted()
        #expect(
            found == [
                "Booking.code:required", "Booking.hotel:required", "Hotel.bookings:maxCount", "Hotel.staff:minCount",
            ])
    }

    @Test func aFailedSaveLeavesTheStoreUnchanged() throws {
        let graph = try TestGraph(model: try Self.model())
        let hotel = graph.insert("Hotel", ["name": "Ritz"])
        graph.insert("Clerk").setRelatedObject(hotel, forKey: "hotel")
        graph.insert("Booking", ["code": "AB-1", "guests": 2]).setRelatedObject(hotel, forKey: "hotel")
        try graph.context.save()
        let rowsBefore = (graph.store as! InMemoryStore).rowCount

        hotel["name"] = "Savoy"
        graph.insert("Booking", ["code": "AB-2", "guests": 99]).setRelatedObject(hotel, forKey: "hotel")
        #expect(throws: ValidationError.self) { try graph.context.save() }
        #expect((graph.store as! InMemoryStore).rowCount == rowsBefore)
        let stored = try graph.makeContext().existingObject(with: hotel.objectID)
        #expect(stored.string(forKey: "name") == "Ritz")
        #expect(graph.context.hasChanges)

        graph.context.rollback()
        #expect(hotel.string(forKey: "name") == "Ritz")
        #expect(!graph.context.hasChanges)
    }

    @Test func updatesAreValidatedWithTheUpdateCheck() throws {
        let graph = try TestGraph(model: try Self.model())
        let hotel = graph.insert("Hotel", ["name": "Ritz"])
        graph.insert("Clerk").setRelatedObject(hotel, forKey: "hotel")
        let booking = graph.insert("Booking", ["code": "AB-1", "guests": 2])
        booking.setRelatedObject(hotel, forKey: "hotel")
        try graph.context.save()
        booking["start"] = .date(Date(timeIntervalSinceReferenceDate: 10))
        booking["end"] = .date(Date(timeIntervalSinceReferenceDate: 5))
        let error = try #require(throws: ValidationError.self) { try graph.context.save() }
        #expect(error.failures.map(\.rule) == [.custom("endAfterStart")])
    }
}
