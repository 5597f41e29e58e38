import ObjectGraph

/// Prints what a context sees in its stores: per entity, the count and each object's values, with
/// to-one relationships shown by the destination's first attribute and to-many ones by count.
public enum GraphReport {
    public static func text(for context: ManagedObjectContext) throws -> String {
        var lines: [String] = []
        for entity in context.managedObjectModel.entities {
            var request = FetchRequest(entityName: entity.name)
            request.includesSubentities = false
            if let first = entity.attributes.first { request.sortDescriptors = [FetchSortDescriptor(first.name)] }
            let objects = try context.fetch(request)
            lines.append("\(entity.name) (\(objects.count))")
            for object in objects {
                var fields = entity.attributes.filter { !$0.isTransient }.map {
                    "\($0.name)=\(object[attributeAt: $0.index])"
                }
                for relationship in entity.relationships {
                    if relationship.isToMany {
                        fields.append(
                            "\(relationship.name)=[\(object.relatedObjects(forKey: relationship.name).count)]")
                    } else if let destination = object.relatedObject(forKey: relationship.name) {
                        let label =
                            destination.entity.attributes.first.map { "\(destination[attributeAt: $0.index])" }
                            ?? destination.objectID.description
                        fields.append("\(relationship.name)->\(destination.entity.name)(\(label))")
                    }
                }
                lines.append("  " + fields.joined(separator: " "))
            }
        }
        return lines.joined(separator: "\n")
    }
}
