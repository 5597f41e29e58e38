import Drivers
import Foundation
import ObjectGraph

/// The readable store: the whole graph as one XML document, written with libxml2's writer and read
/// with its streaming parser, saved whole (through a temporary file renamed over the old one). Built
/// on the public `AtomicStore` API only.
///
/// Format, version 1:
///
/// ```xml
/// <sluice-store version="1" type="XML" identifier="…" model-version-hash="…">
///   <entity-hash entity="Book" hash="…"/>
///   <user key="…">value</user>
///   <object entity="Book" id="…" version="2">
///     <attribute name="title" type="string">Dune</attribute>          <!-- null: left out -->
///     <attribute name="cover" type="binary">iVBORw0…</attribute>       <!-- base64 -->
///     <attribute name="note" type="string" encoding="base64">…</attribute>  <!-- text XML cannot hold -->
///     <to-one name="author" entity="Author" ref="…"/>
///     <to-many name="tags"><ref entity="Tag" id="…"/></to-many>       <!-- in stored order -->
///   </object>
/// </sluice-store>
/// ```
///
/// Values: integers and decimals in plain decimal notation; doubles and floats in Swift's shortest
/// round-trip form (`nan`, `inf`, `-inf` included); booleans `true`/`false`; dates as seconds since
/// 2001-01-01 GMT; UUIDs in canonical form; URIs as written. A string holding characters XML 1.0
/// cannot carry (most control characters, a carriage return) is written as base64 of its UTF-8.
open class XMLStore: AtomicStore {
    public static let storeType = "XML"

    /// Makes the type available to every coordinator as `XMLStore.storeType`.
    public static func register() {
        PersistentStoreCoordinator.registerStoreType(XMLStore.self, named: storeType)
    }

    open override func save() throws {
        do {
            let writer = try XMLWriter()
            try writer.startDocument()
            try writer.startElement("sluice-store")
            try writer.attribute("version", "1")
            try writer.attribute("type", metadata.storeType)
            try writer.attribute("identifier", metadata.identifier)
            if let hash = metadata.modelVersionHash { try writer.attribute("model-version-hash", hash) }
            for (entity, hash) in metadata.entityVersionHashes.sorted(by: { $0.key < $1.key }) {
                try writer.startElement("entity-hash")
                try writer.attribute("entity", entity)
                try writer.attribute("hash", hash)
                try writer.endElement()
            }
            for (key, value) in metadata.userInfo.sorted(by: { $0.key < $1.key }) {
                try writer.startElement("user")
                try writer.attribute("key", key)
                if Self.isXMLText(value) {
                    try writer.text(value)
                } else {
                    try writer.attribute("encoding", "base64")
                    try writer.text(Data(value.utf8).base64EncodedString())
                }
                try writer.endElement()
            }
            for node in cacheNodes {
                try writer.startElement("object")
                try writer.attribute("entity", node.entity.name)
                try writer.attribute("id", referenceObject(for: node.objectID) ?? "")
                try writer.attribute("version", String(node.version))
                for attribute in node.entity.attributes where !attribute.isTransient {
                    let value = node.attributeValues[attribute.index]
                    guard !value.isNull else { continue }
                    try writer.startElement("attribute")
                    try writer.attribute("name", attribute.name)
                    try writer.attribute("type", "\(attribute.type)")
                    let (text, base64) = Self.text(of: value)
                    if base64 { try writer.attribute("encoding", "base64") }
                    try writer.text(text)
                    try writer.endElement()
                }
                for relationship in node.entity.relationships where !relationship.isTransient {
                    if relationship.isToMany {
                        guard let members = node.toManyDestinations[relationship.index], !members.isEmpty else {
                            continue
                        }
                        try writer.startElement("to-many")
                        try writer.attribute("name", relationship.name)
                        for member in members {
                            try writer.startElement("ref")
                            try writer.attribute("entity", member.entityName)
                            try writer.attribute("id", referenceObject(for: member) ?? "")
                            try writer.endElement()
                        }
                        try writer.endElement()
                    } else if let destination = node.toOneDestinations[relationship.index] {
                        try writer.startElement("to-one")
                        try writer.attribute("name", relationship.name)
                        try writer.attribute("entity", destination.entityName)
                        try writer.attribute("ref", referenceObject(for: destination) ?? "")
                        try writer.endElement()
                    }
                }
                try writer.endElement()
            }
            try writer.endElement()
            try writeAtomically(try writer.finish())
        } catch let error as XMLParseError {
            throw StoreError(.io, "Could not write the XML store: \(error.message)", url: url, underlying: error)
        }
    }

    /// Whether XML 1.0 can carry `text` as it is (a carriage return would come back as a newline).
    static func isXMLText(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            switch scalar.value {
            case 0x9, 0xA: return true
            case 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: return true
            default: return false
            }
        }
    }

    /// A value's text, and whether it is base64.
    static func text(of value: AttributeValue) -> (String, Bool) {
        switch value {
        case .null: return ("", false)
        case .integer(let v): return (String(v), false)
        case .decimal(let v): return (DecimalText.canonical(v), false)
        case .double(let v): return ("\(v)", false)
        case .float(let v): return ("\(v)", false)
        case .string(let v): return isXMLText(v) ? (v, false) : (Data(v.utf8).base64EncodedString(), true)
        case .boolean(let v): return (v ? "true" : "false", false)
        case .date(let v): return ("\(v.timeIntervalSinceReferenceDate)", false)
        case .binary(let v): return (v.base64EncodedString(), false)
        case .uuid(let v): return (v.uuidString, false)
        case .uri(let v): return (v.absoluteString, false)
        }
    }

    /// The value of `text` for an attribute of `type`, or `nil` when it is not one.
    static func value(_ text: String, _ type: AttributeType, base64: Bool) -> AttributeValue? {
        if base64 {
            guard let data = Data(base64Encoded: text) else { return nil }
            if type == .binary { return .binary(data) }
            guard type == .string, let string = String(data: data, encoding: .utf8) else { return nil }
            return .string(string)
        }
        switch type {
        case .integer16, .integer32, .integer64: return Int64(text).map { .integer($0) }
        case .decimal: return DecimalText.parse(text).map { .decimal($0) }
        case .double: return Double(text).map { .double($0) }
        case .float: return Float(text).map { .float($0) }
        case .string: return .string(text)
        case .boolean: return text == "true" ? .boolean(true) : text == "false" ? .boolean(false) : nil
        case .date: return Double(text).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .calendarDate:
            return value(text, .date, base64: false).flatMap { $0.isStorable(as: .calendarDate) ? $0 : nil }
        case .binary: return Data(base64Encoded: text).map { .binary($0) }
        case .uuid: return UUID(uuidString: text).map { .uuid($0) }
        case .uri: return URL(string: text).map { .uri($0) }
        }
    }

    open override func load() throws {
        guard !isNew, let url else { return }
        let reader = try Self.parse(url, model: model, fallbackIdentifier: metadata.identifier)
        metadata = reader.metadata(default: metadata)
        // IDs were made with the identifier read from the root: the one set now.
        addCacheNodes(reader.nodes)
    }

    /// The metadata of the XML store at `url`, read without a model (it stops at the first object):
    /// how `sluice inspect`, `validate` and `convert` find the model a store was written with.
    /// - Throws: `StoreError` for a missing file or a document that is not an XML store.
    public static func metadata(at url: URL) throws -> StoreMetadata {
        try parse(url, model: nil, fallbackIdentifier: "").metadata(default: StoreMetadata(storeType: storeType))
    }

    private static func parse(_ url: URL, model: ManagedObjectModel?, fallbackIdentifier: String) throws -> Reader {
        let reader = Reader(model: model, fallbackIdentifier: fallbackIdentifier)
        do {
            let parser = try XMLPushParser(handler: reader, fileName: url.path)
            reader.parser = parser
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            while let chunk = try handle.read(upToCount: 1 << 16), !chunk.isEmpty {
                try chunk.withUnsafeBytes { try parser.feed($0) }
                if reader.failure != nil || reader.reachedObjects { break }
            }
            if reader.failure == nil, !reader.reachedObjects { try parser.finish() }
        } catch let error as XMLParseError {
            throw StoreError(
                .corrupt,
                "The XML store is not well-formed XML: \(error.message) (line \(error.line), column \(error.column))",
                url: url, underlying: error)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(
                .io, "Could not read the XML store: \(error.localizedDescription)", url: url, underlying: error)
        }
        if let failure = reader.failure {
            throw StoreError(.corrupt, "The XML store cannot be read: \(failure)", url: url)
        }
        guard reader.sawRoot else {
            throw StoreError(.corrupt, "The XML store cannot be read: it has no <sluice-store> element", url: url)
        }
        return reader
    }

    /// Builds cache nodes from the parser's events; the first problem stops it, with its line.
    private final class Reader: XMLEventHandler {
        /// The model objects are read with; `nil` reads the metadata only (up to the first object).
        let model: ManagedObjectModel?
        let fallbackIdentifier: String
        /// Set at the first object when reading the metadata only.
        var reachedObjects = false
        weak var parser: XMLPushParser?
        var failure: String?
        var sawRoot = false
        var identifier: String?, storeType: String?, modelVersionHash: String?
        var hashes: [String: String] = [:], userInfo: [String: String] = [:]
        var nodes: [AtomicStoreCacheNode] = []
        private var node: AtomicStoreCacheNode?
        private var text = ""
        private var capturing = false
        private var pending: (kind: String, attributes: [String: String])?
        private var toMany: (index: Int, members: [ManagedObjectID])?
        /// Names of the open elements.
        private var open: [String] = []

        func metadata(default current: StoreMetadata) -> StoreMetadata {
            StoreMetadata(
                storeType: storeType ?? current.storeType, identifier: identifier ?? current.identifier,
                modelVersionHash: modelVersionHash, entityVersionHashes: hashes, userInfo: userInfo)
        }

        init(model: ManagedObjectModel?, fallbackIdentifier: String) {
            self.model = model
            self.fallbackIdentifier = fallbackIdentifier
        }

        private func fail(_ message: String) {
            if failure == nil { failure = "line \(parser?.line ?? 0): \(message)" }
        }

        private func entity(_ name: String?) -> EntityDescription? {
            guard let name, let entity = model?.entity(named: name) else {
                fail("entity \((name ?? "").debugDescription) is not in the model")
                return nil
            }
            return entity
        }

        private func id(entity name: String?, reference: String?) -> ManagedObjectID? {
            guard let entity = entity(name), let reference else {
                fail("a reference without entity or id")
                return nil
            }
            return ManagedObjectID(
                entityName: entity.name, storeIdentifier: identifier ?? fallbackIdentifier,
                reference: .string(reference))
        }

        override func startElement(
            localName: UnsafePointer<UInt8>, namespaceURI: UnsafePointer<UInt8>?,
            attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int
        ) {
            guard failure == nil, !reachedObjects else { return }
            var values: [String: String] = [:]
            for index in 0..<attributeCount {
                guard let base = attributes?.advanced(by: index * 5), let name = base[0], let start = base[3],
                    let end = base[4]
                else { continue }
                let raw = UnsafeBufferPointer(start: start, count: end - start)
                values[String(cString: name)] = String(
                    decoding: XMLEventHandler.decodedAttributeValue(raw) ?? Array(raw), as: UTF8.self)
            }
            let name = String(cString: localName)
            open.append(name)
            switch name {
            case "sluice-store":
                guard values["version"] == "1" else {
                    return fail(
                        "format version \((values["version"] ?? "").debugDescription) is not known (this Sluice reads "
                            + "version 1)"
                    )
                }
                sawRoot = true
                identifier = values["identifier"]
                storeType = values["type"]
                modelVersionHash = values["model-version-hash"]
            case "entity-hash":
                if let entity = values["entity"], let hash = values["hash"] { hashes[entity] = hash }
            case "user", "attribute":
                pending = (name, values)
                text = ""
                capturing = true
            case "object":
                guard model != nil else {
                    reachedObjects = true
                    return
                }
                guard let entity = entity(values["entity"]), let reference = values["id"] else {
                    return fail("an object without entity or id")
                }
                let made = AtomicStoreCacheNode(
                    objectID: ManagedObjectID(
                        entityName: entity.name, storeIdentifier: identifier ?? fallbackIdentifier,
                        reference: .string(reference)), entity: entity)
                made.attributeValues = Array(repeating: .null, count: entity.attributes.count)
                made.version = values["version"].flatMap { Int64($0) } ?? 1
                node = made
            case "to-one":
                guard let node, let index = node.entity.relationshipIndex(named: values["name"] ?? ""),
                    !node.entity.relationships[index].isToMany
                else {
                    return fail(
                        "to-one \((values["name"] ?? "").debugDescription) is not a to-one relationship of its "
                            + "object's entity"
                    )
                }
                node.toOneDestinations[index] = id(entity: values["entity"], reference: values["ref"])
            case "to-many":
                guard let node, let index = node.entity.relationshipIndex(named: values["name"] ?? ""),
                    node.entity.relationships[index].isToMany
                else {
                    return fail(
                        "to-many \((values["name"] ?? "").debugDescription) is not a to-many relationship of its "
                            + "object's entity"
                    )
                }
                toMany = (index, [])
            case "ref":
                guard toMany != nil, let member = id(entity: values["entity"], reference: values["id"]) else {
                    return fail("a <ref> outside <to-many>")
                }
                toMany!.members.append(member)
            default:
                fail("element <\(name)> is not part of the format")
            }
        }

        override func characters(_ bytes: UnsafeBufferPointer<UInt8>) {
            if capturing { text += String(decoding: bytes, as: UTF8.self) }
        }

        override func endElement() {
            let name = open.popLast() ?? ""
            guard failure == nil, !reachedObjects else { return }
            switch name {
            case "user", "attribute":
                guard let (kind, values) = pending else { return }
                pending = nil
                capturing = false
                let base64 = values["encoding"] == "base64"
                if kind == "user" {
                    guard let key = values["key"] else { return fail("a <user> entry without a key") }
                    guard
                        let value = base64
                            ? Data(base64Encoded: text).flatMap({ String(data: $0, encoding: .utf8) }) : text
                    else {
                        return fail("user entry \(key) is not valid base64 text")
                    }
                    userInfo[key] = value
                    return
                }
                guard let node, let attribute = values["name"], let index = node.entity.attributeIndex(named: attribute)
                else {
                    return fail(
                        "attribute \((values["name"] ?? "").debugDescription) is not an attribute of its object's "
                            + "entity"
                    )
                }
                let type = node.entity.attributes[index].type
                guard values["type"] == nil || values["type"] == "\(type)" else {
                    return fail(
                        "\(node.entity.name).\(attribute) is written as \(values["type"]!), the model says \(type)")
                }
                guard let value = XMLStore.value(text, type, base64: base64) else {
                    return fail(
                        "\(node.entity.name).\(attribute): \(text.prefix(40).debugDescription) is not a \(type)")
                }
                node.attributeValues[index] = value
            case "to-many":
                if let (index, members) = toMany { node?.toManyDestinations[index] = members }
                toMany = nil
            case "object":
                if let node { nodes.append(node) }
                node = nil
            default:
                break
            }
        }
    }
}
