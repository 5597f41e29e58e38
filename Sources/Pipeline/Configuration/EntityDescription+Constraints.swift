import ObjectGraph

extension EntityDescription {
    /// The uniqueness constraints of the entity's objects: its own first, then those it inherits,
    /// each with the entity that declares it.
    var constraintsWithInherited: [(entity: EntityDescription, names: [String])] {
        var all: [(entity: EntityDescription, names: [String])] = [], cursor: EntityDescription? = self
        while let current = cursor {
            all += current.uniquenessConstraints.map { (current, $0) }
            cursor = current.superentity
        }
        return all
    }
}
