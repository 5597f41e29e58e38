import Drivers
import Foundation
import ObjectGraph

/// The compact store: the whole graph in one zlib-compressed file with a checksum, read when added
/// and written whole (through a temporary file renamed over the old one) at every save. Built on the
/// public `AtomicStore` API only, as a third party would build a store.
///
/// Format, version 1 (integers little-endian; `varint` is LEB128; strings are a varint byte count
/// and UTF-8):
///
/// ```
/// header   "SLUICEBS" · version UInt16 = 1 · flags UInt16 = 0 · payload size UInt64 ·
///          CRC-32 of the payload UInt32 · compressed size UInt64 · zlib(payload)
/// payload  identifier · store type · model version hash (empty: none) ·
///          entity hashes (varint n, n × name, hash) · user info (varint n, n × key, value) ·
///          entity names (varint n, n × name) · objects (varint n, n × object)
/// object   entity (varint, index into the names) · reference · version (varint) ·
///          each stored attribute in model order: value ·
///          each to-one relationship: 0, or 1 · entity · reference ·
///          each to-many relationship: varint n, n × (entity · reference)
/// value    tag UInt8, then: 0 null · 1 integer Int64 · 2 decimal as text · 3 double bits UInt64 ·
///          4 float bits UInt32 · 5 string · 6 boolean UInt8 · 7 date (seconds since 2001) bits UInt64 ·
///          8 binary (varint n, n bytes) · 9 UUID 16 bytes · 10 URI as text
/// ```
///
/// A file that is truncated, corrupt, of another version or fails its checksum is refused with an
/// error naming the store; nothing is half loaded.
public final class BinaryStore: AtomicStore {
    public static let storeType = "Binary"
    static let magic = Array("SLUICEBS".utf8)
    static let version: UInt16 = 1

    /// Makes the type available to every coordinator as `BinaryStore.storeType`.
    public static func register() {
        PersistentStoreCoordinator.registerStoreType(BinaryStore.self, named: storeType)
    }

    public override func load() throws {
        guard !isNew, let url else { return }
        let payload = try Self.payload(at: url)
        do {
            try read(payload)
        } catch let failure as BinaryReader.Failure {
            throw StoreError(.corrupt, "The binary store cannot be read: \(failure.message)", url: url)
        }
    }

    /// The metadata of the binary store at `url`, read without a model: how `sluice inspect`,
    /// `validate` and `convert` find the model a store was written with.
    /// - Throws: `StoreError` for a missing, damaged or foreign file.
    public static func metadata(at url: URL) throws -> StoreMetadata {
        var reader = BinaryReader(try payload(at: url))
        do { return try readMetadata(&reader) } catch let failure as BinaryReader.Failure {
            throw StoreError(.corrupt, "The binary store cannot be read: \(failure.message)", url: url)
        }
    }

    /// The file's payload, its header, size and checksum checked.
    private static func payload(at url: URL) throws -> Data {
        let file: Data
        do { file = try Data(contentsOf: url) } catch {
            throw StoreError(
                .io, "Could not read the binary store: \(error.localizedDescription)", url: url, underlying: error)
        }
        var header = BinaryReader(file)
        do {
            guard try header.bytes(8) == Self.magic else {
                throw BinaryReader.Failure("it is not a Sluice binary store (no SLUICEBS header)")
            }
            let version = try header.uint16()
            guard version == Self.version else {
                throw BinaryReader.Failure(
                    "format version \(version) is not known (this Sluice reads version \(Self.version))")
            }
            _ = try header.uint16()
            let size = try header.uint64(), checksum = try header.uint32(), compressedSize = try header.uint64()
            guard compressedSize == UInt64(file.count - header.offset) else {
                throw BinaryReader.Failure(
                    "the file holds \(file.count - header.offset) compressed bytes, the header says "
                        + "\(compressedSize): truncated or extended"
                )
            }
            guard size < 1 << 40 else {
                throw BinaryReader.Failure("the header's payload size \(size) is not credible")
            }
            let payload: Data
            do { payload = try Zlib.decompress(file.subdata(in: header.offset..<file.count), size: Int(size)) } catch {
                throw BinaryReader.Failure("the compressed payload is damaged: \(error)")
            }
            guard Zlib.crc32(payload) == checksum else { throw BinaryReader.Failure("the payload fails its checksum") }
            return payload
        } catch let failure as BinaryReader.Failure {
            throw StoreError(.corrupt, "The binary store cannot be read: \(failure.message)", url: url)
        }
    }

    private static func readMetadata(_ reader: inout BinaryReader) throws -> StoreMetadata {
        let identifier = try reader.string(), storeType = try reader.string(), hash = try reader.string()
        var hashes: [String: String] = [:], userInfo: [String: String] = [:]
        for _ in 0..<(try reader.count()) { hashes[try reader.string()] = try reader.string() }
        for _ in 0..<(try reader.count()) { userInfo[try reader.string()] = try reader.string() }
        return StoreMetadata(
            storeType: storeType, identifier: identifier, modelVersionHash: hash.isEmpty ? nil : hash,
            entityVersionHashes: hashes, userInfo: userInfo)
    }

    private func read(_ payload: Data) throws {
        var reader = BinaryReader(payload)
        let loadedMetadata = try Self.readMetadata(&reader)
        var entities: [EntityDescription] = []
        for _ in 0..<(try reader.count()) {
            let name = try reader.string()
            guard let entity = model.entity(named: name) else {
                throw BinaryReader.Failure("it holds objects of entity \(name), which the model does not have")
            }
            entities.append(entity)
        }
        metadata = loadedMetadata  // object IDs below carry the stored identifier
        var nodes: [AtomicStoreCacheNode] = []
        for _ in 0..<(try reader.count()) {
            let entity = try self.entity(&reader, entities)
            let node = AtomicStoreCacheNode(
                objectID: objectID(for: entity, referenceObject: try reader.string()), entity: entity)
            node.version = Int64(try reader.varint())
            for attribute in entity.attributes where !attribute.isTransient {
                node.attributeValues[attribute.index] = try reader.value()
            }
            for relationship in entity.relationships where !relationship.isTransient {
                if relationship.isToMany {
                    var members: [ManagedObjectID] = []
                    for _ in 0..<(try reader.count()) {
                        let destination = try self.entity(&reader, entities)
                        members.append(objectID(for: destination, referenceObject: try reader.string()))
                    }
                    node.toManyDestinations[relationship.index] = members
                } else if try reader.uint8() == 1 {
                    let destination = try self.entity(&reader, entities)
                    node.toOneDestinations[relationship.index] = objectID(
                        for: destination, referenceObject: try reader.string())
                }
            }
            nodes.append(node)
        }
        guard reader.atEnd else {
            throw BinaryReader.Failure("\(payload.count - reader.offset) bytes follow the last object")
        }
        addCacheNodes(nodes)
    }

    private func entity(_ reader: inout BinaryReader, _ entities: [EntityDescription]) throws -> EntityDescription {
        let index = try reader.count()
        guard index < entities.count else {
            throw BinaryReader.Failure("an object names entity #\(index) of \(entities.count)")
        }
        return entities[index]
    }

    public override func save() throws {
        var writer = BinaryWriter()
        writer.string(metadata.identifier)
        writer.string(metadata.storeType)
        writer.string(metadata.modelVersionHash ?? "")
        writer.varint(UInt64(metadata.entityVersionHashes.count))
        for (key, value) in metadata.entityVersionHashes.sorted(by: { $0.key < $1.key }) {
            writer.string(key)
            writer.string(value)
        }
        writer.varint(UInt64(metadata.userInfo.count))
        for (key, value) in metadata.userInfo.sorted(by: { $0.key < $1.key }) {
            writer.string(key)
            writer.string(value)
        }
        let entities = model.entities
        writer.varint(UInt64(entities.count))
        for entity in entities { writer.string(entity.name) }
        var entityIndex: [String: Int] = [:]
        for (index, entity) in entities.enumerated() { entityIndex[entity.name] = index }
        func reference(_ id: ManagedObjectID) {
            writer.varint(UInt64(entityIndex[id.entityName] ?? 0))
            writer.string(referenceObject(for: id) ?? "")
        }
        let nodes = cacheNodes
        writer.varint(UInt64(nodes.count))
        for node in nodes {
            writer.varint(UInt64(entityIndex[node.entity.name] ?? 0))
            writer.string(referenceObject(for: node.objectID) ?? "")
            writer.varint(UInt64(max(0, node.version)))
            for attribute in node.entity.attributes where !attribute.isTransient {
                writer.value(node.attributeValues[attribute.index])
            }
            for relationship in node.entity.relationships where !relationship.isTransient {
                if relationship.isToMany {
                    let members = node.toManyDestinations[relationship.index] ?? []
                    writer.varint(UInt64(members.count))
                    members.forEach(reference)
                } else if let destination = node.toOneDestinations[relationship.index] {
                    writer.uint8(1)
                    reference(destination)
                } else {
                    writer.uint8(0)
                }
            }
        }
        let payload = writer.data
        let compressed: Data
        do { compressed = try Zlib.compress(payload) } catch {
            throw StoreError(.io, "Could not compress the binary store: \(error)", url: url, underlying: error)
        }
        var header = BinaryWriter()
        header.bytes(Self.magic)
        header.uint16(Self.version)
        header.uint16(0)
        header.uint64(UInt64(payload.count))
        header.uint32(Zlib.crc32(payload))
        header.uint64(UInt64(compressed.count))
        try writeAtomically(header.data + compressed)
    }
}
