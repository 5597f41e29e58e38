import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

/// The binary and XML stores: every attribute type and relationship kind round-trips exactly; a
/// damaged file is refused whole, naming the store; the XML format matches its golden file.
@Suite struct AtomicStoreFormatTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(
                name: "Sample",
                attributes: [
                    AttributeDescription(name: "i16", type: .integer16),
                    AttributeDescription(name: "i32", type: .integer32),
                    AttributeDescription(name: "i64", type: .integer64),
                    AttributeDescription(name: "dec", type: .decimal),
                    AttributeDescription(name: "dbl", type: .double), AttributeDescription(name: "flt", type: .float),
                    AttributeDescription(name: "str", type: .string),
                    AttributeDescription(name: "flag", type: .boolean),
                    AttributeDescription(name: "when", type: .date), AttributeDescription(name: "blob", type: .binary),
                    AttributeDescription(name: "uuid", type: .uuid), AttributeDescription(name: "link", type: .uri),
                    AttributeDescription(name: "scratch", type: .string, isTransient: true),
                ],
                relationships: [
                    RelationshipDescription(name: "parent", destination: "Sample", inverse: "children"),
                    RelationshipDescription(name: "children", destination: "Sample", inverse: "parent", isToMany: true),
                    RelationshipDescription(name: "friends", destination: "Sample", inverse: "friends", isToMany: true),
                    RelationshipDescription(
                        name: "playlist", destination: "Sample", inverse: nil, isToMany: true, isOrdered: true),
                    RelationshipDescription(name: "twin", destination: "Sample", inverse: "twin"),
                ])
        ])
    }

    static let values: [String: AttributeValue] = [
        "i16": .integer(-32768), "i32": .integer(2_147_483_647), "i64": .integer(Int64.min),
        "dec": .decimal(Decimal(string: "-12345678901234567890.123456789")!), "dbl": .double(-0.1),
        "flt": .float(3.4028235e38),
        "str": .string("naïve 東京 \u{0} \u{1F} \"quoted\" \n tab\t 🚀"), "flag": .boolean(true),
        "when": .date(Date(timeIntervalSinceReferenceDate: -978_307_200.123456)),
        "blob": .binary(Data((0...255).map { UInt8($0) })),
        "uuid": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        "link": .uri(URL(string: "https://example.com/a?b=c#d")!),
    ]

    /// Saves a small graph with every attribute type and relationship kind into a store at `url`.
    static func writeGraph(at url: URL, type: String = BinaryStore.storeType) throws {
        BinaryStore.register()
        XMLStore.register()
        let graph = try TestGraph(model: try model(), storeType: type, url: url)
        let a = graph.insert("Sample", values), b = graph.insert("Sample", ["str": .string("b")]),
            c = graph.insert("Sample", ["str": .string("c")])
        a["scratch"] = .string("not stored")
        b.setRelatedObject(a, forKey: "parent")
        c.setRelatedObject(a, forKey: "parent")
        a.addRelatedObject(b, forKey: "friends")
        b.addRelatedObject(c, forKey: "friends")
        a.setRelatedObjects([c, b], forKey: "playlist")
        b.setRelatedObject(c, forKey: "twin")
        try graph.context.save()
        graph.coordinator.removePersistentStore(graph.store)
    }

    @Test(arguments: [BinaryStore.storeType, XMLStore.storeType])
    func everyTypeAndRelationshipRoundTrips(type: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("graph.store")
        try Self.writeGraph(at: url, type: type)
        let graph = try TestGraph(model: try Self.model(), storeType: type, url: url)
        let all = try graph.context.fetch(FetchRequest(entityName: "Sample"))
        let a = try #require(all.first { $0["i16"] == .integer(-32768) })
        for (key, value) in Self.values { #expect(a[key] == value, "\(key)") }
        #expect(a["scratch"] == .null)
        let b = try #require(all.first { $0["str"] == .string("b") }),
            c = try #require(all.first { $0["str"] == .string("c") })
        #expect(Set(a.relatedObjects(forKey: "children").map(\.objectID)) == [b.objectID, c.objectID])
        #expect(b.relatedObject(forKey: "parent") === a)
        #expect(Set(b.relatedObjects(forKey: "friends").map(\.objectID)) == [a.objectID, c.objectID])
        #expect(a.relatedObjects(forKey: "playlist").map(\.objectID) == [c.objectID, b.objectID], "order kept")
        #expect(c.relatedObject(forKey: "twin") === b)
        // Saved again after a change and read back: still exact.
        a["str"] = .string("changed")
        graph.context.delete(c)
        try graph.context.save()
        graph.coordinator.removePersistentStore(graph.store)
        let again = try TestGraph(model: try Self.model(), storeType: type, url: url)
        #expect(try again.storedCount("Sample") == 2)
        #expect(
            try again.context.fetch(
                FetchRequest(entityName: "Sample", predicate: FetchPredicate(format: "str == 'changed'"))
            ).count == 1)
    }

    @Test func damagedFilesAreRefusedWhole() throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("graph.sluicebin")
        try Self.writeGraph(at: url)
        let good = try Data(contentsOf: url)
        func open(_ bytes: Data) -> String? {
            try? bytes.write(to: url)
            do {
                _ = try TestGraph(model: try Self.model(), storeType: BinaryStore.storeType, url: url)
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(open(good) == nil)
        for cut in [good.count - 1, good.count / 2, 30, 9] {
            let message = open(good.prefix(cut))
            #expect(
                message?.contains("cannot be read") == true && message?.contains("graph.sluicebin") == true,
                "\(cut): \(message ?? "opened")")
        }
        // A changed byte in the compressed data (where deflate or the CRC-32 notices) and in zlib's own checksum.
        for place in [32 + (good.count - 32) / 2, good.count - 1] {
            var flipped = good
            flipped[place] ^= 0x40
            #expect(open(flipped)?.contains("cannot be read") == true, "byte \(place)")
        }
        var header = good
        header[8] = 9  // version 9
        #expect(open(header)?.contains("format version 9") == true)
        #expect(open(Data("not a store at all".utf8))?.contains("no SLUICEBS header") == true)
    }

    @Test func damagedXMLIsRefusedWithItsLine() throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("graph.xml")
        try Self.writeGraph(at: url, type: XMLStore.storeType)
        let good = try String(contentsOf: url, encoding: .utf8)
        func open(_ text: String) -> String? {
            try? text.write(to: url, atomically: true, encoding: .utf8)
            do {
                _ = try TestGraph(model: try Self.model(), storeType: XMLStore.storeType, url: url)
                return nil
            } catch { return "\(error)" }
        }
        #expect(open(good) == nil)
        #expect(open(String(good.prefix(good.count / 2)))?.contains("not well-formed") == true, "truncated")
        #expect(
            open(good.replacingOccurrences(of: "type=\"integer16\">-32768", with: "type=\"integer16\">lots"))?.contains(
                "\"lots\" is not a integer16") == true)
        #expect(open(good.replacingOccurrences(of: "name=\"dbl\"", with: "name=\"nope\""))?.contains("line ") == true)
        #expect(
            open(good.replacingOccurrences(of: "version=\"1\" type", with: "version=\"7\" type"))?.contains(
                "format version \"7\"") == true)
    }

    /// The XML format, byte for byte, against the checked-in golden file (references made
    /// deterministic by a subclass; the store's random identifier normalised).
    @Test func theXMLFormatMatchesItsGoldenFile() throws {
        PersistentStoreCoordinator.registerStoreType(NumberedXMLStore.self, named: "NumberedXML")
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("golden.xml")
        try Self.writeGraph(at: url, type: "NumberedXML")
        var written = try String(contentsOf: url, encoding: .utf8)
        let identifier = try #require(written.firstRange(of: /identifier="[^"]*"/))
        written.replaceSubrange(identifier, with: "identifier=\"STORE-ID\"")
        let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../Golden/xml-store-v1.xml"
        ).standardized
        if ProcessInfo.processInfo.environment["SLUICE_WRITE_GOLDEN"] != nil {
            try written.write(to: golden, atomically: true, encoding: .utf8)
        }
        #expect(written == (try String(contentsOf: golden, encoding: .utf8)))
        // And the golden file reads back as the graph.
        try String(contentsOf: golden, encoding: .utf8).write(to: url, atomically: true, encoding: .utf8)
        let graph = try TestGraph(model: try Self.model(), storeType: "NumberedXML", url: url)
        #expect(try graph.storedCount("Sample") == 3)
    }
}

/// References `Sample-1`, `Sample-2`, … instead of UUIDs: output that can be compared byte for byte.
final class NumberedXMLStore: XMLStore {
    private var next = 0
    override func newReferenceObject(for entity: EntityDescription) -> String {
        next += 1
        return "\(entity.name)-\(next)"
    }
}
