import Foundation
import ObjectGraph

extension PersistentStore {
    /// The row keys of a batch insert's objects: their key attribute's values where the store keeps
    /// the entity under one (`referenceAttribute(for:)`), else new references.
    /// - Throws: `StoreError.Code.constraintViolation` for an object without its key.
    func references(for request: BatchInsertRequest) throws -> [ManagedObjectID.Reference] {
        let entity = request.entity, width = entity.attributes.count
        guard let attribute = referenceAttribute(for: entity) else {
            return try newReferences(for: entity, count: request.count)
        }
        return try (0..<request.count).map { object in
            guard let key = ManagedObjectID.Reference(key: request.attributeValues[object * width + attribute.index])
            else {
                throw StoreError(
                    .constraintViolation, "A \(entity.name) to insert has no \(attribute.name), its key", url: url)
            }
            return key
        }
    }
}
