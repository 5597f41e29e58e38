import ObjectGraph

extension ModelInference {
    /// The first lines of every model file inference writes.
    static let modelFileComment = """
        Proposed by `sluice infer` from every value of the inputs; review before use.
        A SQL table without a key is keyed by its rows' rowids (an integer64 attribute kept in SQLite's
        rowid: no column of its own); a CSV or XML input without one has none (`sluice import --key`
        names one); nested records have a required relationship to the record that encloses them.
        """

    /// The proposal as a model file (YAML).
    public func modelFile() -> String {
        let (links, manyToMany) = relationships()
        let linkTables = Set(manyToMany.map(\.table))
        let described = entities.indices.filter { !linkTables.contains($0) }.map { index in
            (entities[index].name, entityValue(index, links: links, manyToMany: manyToMany))
        }
        // Dates in other spellings: a model holds no formats, the pipeline that reads them does.
        let spellings = entities.flatMap { entity in
            entity.columns.compactMap { column -> String? in
                guard column.type.isDate, let patterns = column.datePatterns, !patterns.isEmpty else { return nil }
                return "\(entity.name).\(Self.attributeName(column.source)) holds dates written "
                    + patterns.joined(separator: " and ") + ":\n  a pipeline field reads them with "
                    + "`date: [\(patterns.joined(separator: ", "))]` (sluice import does)."
            }
        }
        return YAMLValue.map([("version", .number(1)), ("entities", .map(described))])
            .document(comment: ([Self.modelFileComment] + spellings).joined(separator: "\n"))
    }

    /// One entity of the model file: its table, attributes, relationships, keys and indexes.
    private func entityValue(_ index: Int, links: [Link], manyToMany: [ManyToMany]) -> YAMLValue {
        let entity = entities[index]
        var parts: [(String, YAMLValue)] = []
        if !entity.table.isEmpty, entity.table != entity.name { parts.append(("table", .text(entity.table))) }
        let linked = Set(links.filter { $0.from == index }.map(\.column))
        let rowKey = self.rowKey(of: entity)
        var attributes: [(String, YAMLValue)] = []
        if let rowKey {
            // Kept in SQLite's own rowid: the table gains no column.
            let rules: [(String, YAMLValue)] = [
                ("type", .text("integer64")), ("optional", .flag(false)), ("column", .text("rowid")),
            ]
            attributes.append((rowKey, .map(rules, flow: true)))
        }
        for column in entity.columns where !linked.contains(column.source) {
            var rules: [(String, YAMLValue)] = [("type", .text("\(column.type)"))]
            if let scale = column.scale { rules.append(("scale", .number(scale))) }
            if column.isRequired { rules.append(("optional", .flag(false))) }
            let attribute = Self.attributeName(column.source)
            if attribute != column.source { rules.append(("column", .text(column.source))) }
            attributes.append((attribute, .map(rules, flow: true)))
        }
        // A link table of foreign keys only (book_author) has no attributes of its own.
        if !attributes.isEmpty { parts.append(("attributes", .map(attributes))) }
        let relationships = relationshipValues(of: index, links: links, manyToMany: manyToMany)
        if !relationships.isEmpty { parts.append(("relationships", .map(relationships))) }
        // A key column that became a relationship stays in the key as that relationship (an
        // order line is known by its order and number).
        func name(_ column: String) -> String {
            linked.contains(column) ? Self.relationshipName(forColumn: column) : Self.attributeName(column)
        }
        // A declared key of one foreign key (`person_detail(person_id PRIMARY KEY)`) is the
        // relationship: at most one detail per person.
        var kept = entity.uniqueKeys.map { $0.map(name) }
        if !entity.primaryKey.isEmpty { kept.insert(entity.primaryKey.map(name), at: 0) }
        if kept.isEmpty {
            // A key found in the values alone is kept only when it is not one relationship (values of
            // a `customer_id` all different so far do not make each customer's orders one).
            let key = self.key(of: entity).map(name)
            if !key.isEmpty, !(key.count == 1 && linked.contains { name($0) == key[0] }) { kept = [key] }
        }
        if let rowKey { kept = [[rowKey]] }
        if !kept.isEmpty { parts.append(("unique", .list(kept.map(YAMLValue.texts), flow: true))) }
        // The source's indexes for fetches (those on foreign keys the store makes anyway).
        let indexes = entity.indexes.filter { $0.allSatisfy { !linked.contains($0) } }.map { $0.map(name) }
        if !indexes.isEmpty { parts.append(("indexes", .list(indexes.map(YAMLValue.texts), flow: true))) }
        // The source's column order, where the store's own (its key, attributes, then foreign keys)
        // would differ.
        let order = entity.columns.map { name($0.source) }
        let keyFirst = kept.first.flatMap { $0.count == 1 && !linked.contains($0[0]) ? $0[0] : nil }
        var usual = entity.columns.filter { !linked.contains($0.source) }.map { name($0.source) }
        if let keyFirst, let at = usual.firstIndex(of: keyFirst) { usual.insert(usual.remove(at: at), at: 0) }
        usual += entity.columns.filter { linked.contains($0.source) }.map { name($0.source) }
        if order != usual { parts.append(("columnOrder", YAMLValue.texts(order))) }
        return .map(parts)
    }

    /// The relationships of one entity: to-ones of its foreign keys and their inverses, the
    /// many-to-manys of link tables, and the links between nested records and their parents.
    private func relationshipValues(
        of index: Int, links: [Link], manyToMany: [ManyToMany]
    ) -> [(String, YAMLValue)] {
        let entity = entities[index]
        var relationships: [(String, YAMLValue)] = []
        func add(_ name: String, _ rules: [(String, YAMLValue)]) {
            relationships.append((name, .map(rules, flow: true)))
        }
        for link in links where link.from == index {
            let name = Self.relationshipName(forColumn: link.column)
            var rules: [(String, YAMLValue)] = [
                ("destination", .text(entities[link.to].name)),
                ("inverse", .text(Self.inverseName(of: link, among: links, entities: entities))),
            ]
            if entity.columns.first(where: { $0.source == link.column })?.isRequired ?? false {
                rules.append(("optional", .flag(false)))
            }
            if link.column != name + "_id" { rules.append(("column", .text(link.column))) }
            add(name, rules)
        }
        for link in links where link.to == index {
            add(
                Self.inverseName(of: link, among: links, entities: entities),
                [
                    ("destination", .text(entities[link.from].name)), ("toMany", .flag(true)),
                    ("inverse", .text(Self.relationshipName(forColumn: link.column))),
                ])
        }
        // Pure link tables: a many-to-many each way, through the table and its columns.
        // The side whose own keys are the link table's first column names the table (and so owns it).
        for link in manyToMany {
            let table = [("joinTable", YAMLValue.text(entities[link.table].table))]
            let columns = entities[link.table].columns.map(\.source)
            let ownerFirst =
                (columns.firstIndex(of: link.owner.column) ?? 0)
                <= (columns.firstIndex(of: link.destination.column) ?? 1)
            if link.owner.to == index {
                add(
                    link.name,
                    [
                        ("destination", .text(entities[link.destination.to].name)), ("toMany", .flag(true)),
                        ("inverse", .text(link.inverse)),
                    ] + (ownerFirst ? table : []) + [("column", .text(link.destination.column))])
            }
            if link.destination.to == index {
                add(
                    link.inverse,
                    [
                        ("destination", .text(entities[link.owner.to].name)), ("toMany", .flag(true)),
                        ("inverse", .text(link.name)),
                    ] + (ownerFirst ? [] : table) + [("column", .text(link.owner.column))])
            }
        }
        if let parent = entity.parent {
            add(
                Self.attributeName(entities[parent].name),
                [
                    ("destination", .text(entities[parent].name)),
                    ("inverse", .text(Self.inverseName(of: entity.name))),
                    ("optional", .flag(false)),
                ])
        }
        for child in entities.indices where entities[child].parent == index {
            add(
                Self.inverseName(of: entities[child].name),
                [
                    ("destination", .text(entities[child].name)), ("toMany", .flag(true)),
                    ("inverse", .text(Self.attributeName(entity.name))), ("deleteRule", .text("cascade")),
                ])
        }
        return relationships
    }
}
