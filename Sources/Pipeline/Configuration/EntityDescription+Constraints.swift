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

extension EntityDescription {
    /// The attribute of that name, else the one whose stored column has that name (a model `sluice
    /// infer` wrote keeps the input's spelling there: `invoiceNo` with `column: Invoice No`).
    func attribute(namedOrStoredAs name: String) -> AttributeDescription? {
        attribute(named: name) ?? attributes.first { $0.columnName == name }
    }
}
