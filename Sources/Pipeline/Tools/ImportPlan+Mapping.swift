import ModelFiles
import ObjectGraph
import Readers

extension ImportPlan {
    /// A source's mapping: entity, key, fields, lookups, nested children.
    /// - Parameter numberedColumns: CSV without a header: columns are `1`, `2`, … (inference calls
    ///   them `field1`, `field2`, …).
    /// - Throws: `ReaderError` when a given or stored model has no attribute or relationship for a
    ///   column (importing it would drop the column's values).
    static func mapping(
        _ plans: [ModelInference.EntityPlan], _ index: Int, spec: RecordSpec?, numberedColumns: Bool,
        key: inout KeyRequest?, model: ManagedObjectModel?
    ) throws -> [(String, YAMLValue)] {
        var plan = plans[index]
        var parts: [(String, YAMLValue)] = [("entity", .text(plan.name))]
        var keyNames = plan.key
        if let entity = model?.entity(named: plan.name) {
            try mapColumns(of: &plan, onto: entity)
            // The model's key, when the input maps all of it (upserts go through a uniqueness constraint).
            keyNames = entity.constraintsWithInherited.map(\.names).first { $0.allSatisfy(plan.maps) } ?? []
        }
        // `--key` where the records map every name it gives (else this source keeps its own key).
        if let names = key?.names {
            let found = names.compactMap(plan.property(standingFor:))
            if found.count == names.count {
                keyNames = found.map(\.name)
                key?.used = true
                key?.notes += found.compactMap(\.note)
            }
        }
        // A key names attributes the fields fill, or to-one relationships a lookup finds.
        keyNames = keyNames.filter(plan.maps)
        if !keyNames.isEmpty, plan.parent == nil { parts.append(("key", .texts(keyNames))) }
        let paths = Dictionary(spec?.fields.map { ($0.name, $0.path) } ?? [], uniquingKeysWith: { first, _ in first })
        func from(_ column: String) -> YAMLValue {
            if spec != nil { return .text(paths[column] ?? column) }
            if numberedColumns, column.hasPrefix("field"), let number = Int(column.dropFirst(5)) {
                return .text(String(number))
            }
            return .text(column)
        }
        // None for a link table of foreign keys only.
        // Dates in other spellings than ISO 8601 name their patterns (`date: [dd.MM.yyyy, iso8601]`).
        let fields = plan.fields.map { field -> (String, YAMLValue) in
            guard let patterns = plan.datePatterns[field.column] else { return (field.attribute, from(field.column)) }
            return (field.attribute, .map([("column", from(field.column)), ("date", .texts(patterns))], flow: true))
        }
        if !fields.isEmpty { parts.append(("fields", .map(fields))) }
        if !plan.lookups.isEmpty {
            let lookups = plan.lookups.map { lookup -> (String, YAMLValue) in
                let rules: [(String, YAMLValue)] = [
                    ("entity", .text(lookup.destination)),
                    ("key", .map([(lookup.destinationAttribute, from(lookup.column))], flow: true)),
                    ("missing", .text("reject")),
                ]
                return (lookup.relationship, .map(rules, flow: true))
            }
            parts.append(("relationships", .map(lookups)))
        }
        let children = try plans.indices.filter { plans[$0].parent?.entity == index }.compactMap { child in
            try spec.flatMap { spec in try childMapping(plans, child, in: spec, model: model) }
        }
        if !children.isEmpty { parts.append(("children", .list(children, flow: false))) }
        return parts
    }

    /// The mapping of nested records (an XML parent's children).
    private static func childMapping(
        _ plans: [ModelInference.EntityPlan], _ child: Int, in spec: RecordSpec, model: ManagedObjectModel?
    ) throws -> YAMLValue? {
        guard let parent = plans[child].parent,
            let childSpec = spec.children.first(where: {
                ModelInference.entityName($0.kind ?? $0.path) == plans[child].name
            })
        else { return nil }
        if let model, model.entity(named: plans[child].name) == nil {
            throw ReaderError(
                .invalidOption,
                "the target's model has no entity for the nested records at \(childSpec.path.debugDescription) "
                    + "(\(plans[child].name), new since the store was made): a store does not grow nested entities; "
                    + "import into a new store, or give --model with the entity and its relationship to "
                    + "\(plans[child].parent.map { plans[$0.entity].name } ?? "its parent")")
        }
        var noKey: KeyRequest?
        let mapping = try mapping(plans, child, spec: childSpec, numberedColumns: false, key: &noKey, model: model)
        return .map([("record", .text(childSpec.path)), ("parent", .text(parent.relationship))] + mapping)
    }

    /// The many-to-many links a plan's rows fill, when the model has the relationship: a pure link
    /// table, or a file of pairs named as a join table of the model (a CSV export's `book_author.csv`).
    static func links(of plan: ModelInference.EntityPlan, in model: ManagedObjectModel?) -> ModelInference.LinksPlan? {
        guard let model else { return plan.links }
        if let links = plan.links {
            let relationship = model.entity(named: links.owner)?.relationship(named: links.relationship)
            return relationship?.isManyToMany == true && relationship?.destinationEntityName == links.destination
                ? links : nil
        }
        guard model.entity(named: plan.name) == nil else { return nil }
        return links(ofTable: plan.table, columns: plan.fields.map(\.column) + plan.lookups.map(\.column), in: model)
    }

    /// The mapping of a source of links: the owner found by its key, the destination added to its
    /// many-to-many relationship.
    static func linksMapping(_ links: ModelInference.LinksPlan) -> [(String, YAMLValue)] {
        let destination: [(String, YAMLValue)] = [
            ("entity", .text(links.destination)),
            ("key", .map([(links.destinationKey.attribute, .text(links.destinationKey.column))], flow: true)),
            ("missing", .text("reject")),
        ]
        return [
            ("entity", .text(links.owner)),
            ("find", .map([(links.ownerKey.attribute, .text(links.ownerKey.column))], flow: true)),
            ("relationships", .map([(links.relationship, .map(destination, flow: true))])),
        ]
    }

    /// Maps the input's columns onto a given model's entity: each onto the attribute or to-one
    /// relationship stored in a column of that name (as `sluice export` writes them: `lead_id` for
    /// `lead`), else onto the one inference names after it; a to-one is found by its destination's
    /// key attribute.
    /// - Throws: `ReaderError` when the entity has nothing for a column (importing would drop its values).
    private static func mapColumns(of plan: inout ModelInference.EntityPlan, onto entity: EntityDescription) throws {
        var fields: [(attribute: String, column: String)] = []
        var lookups: [(relationship: String, destination: String, destinationAttribute: String, column: String)] = []
        var missing: [String] = []
        let columns = plan.fields.map { ($0.column, $0.attribute) } + plan.lookups.map { ($0.column, $0.relationship) }
        // The column of the store's own reference an export writes for objects without a key of one
        // attribute: the store gives its own.
        var reference: String?
        if case .reference = ExportTable.Key(of: entity) { reference = entity.storageKeyColumnName.lowercased() }
        for (column, inferred) in columns where column.lowercased() != reference {
            switch Self.property(forColumn: column, inferred: inferred, of: entity) {
            case let attribute as AttributeDescription where attribute.isDerived:
                continue  // computed by the save from the other values (an export writes it)
            case let attribute as AttributeDescription:
                fields.append((attribute.name, column))
            case let relationship as RelationshipDescription where !relationship.isToMany:
                guard case .attribute(let key) = ExportTable.Key(of: relationship.destinationEntity) else {
                    missing.append("\(column) (relationship \(relationship.name), whose destination has no key)")
                    continue
                }
                lookups.append((relationship.name, relationship.destinationEntityName, key.name, column))
            default:
                missing.append("\(column) (\(inferred))")
            }
        }
        guard missing.isEmpty else {
            throw ReaderError(
                .invalidOption,
                "the model's entity \(plan.name) has nothing for the column\(missing.count == 1 ? "" : "s") "
                    + "\(missing.joined(separator: ", ")) of \(plan.origin); importing would drop them")
        }
        // A key kept in SQLite's rowid (a keyless table's row places) is no column of the input:
        // the records' places fill it, as they did when the source table was read.
        for attribute in entity.attributes
        where attribute.isStoredInRowID && !fields.contains(where: { $0.attribute == attribute.name }) {
            fields.append((attribute.name, Record.ordinalFieldName))
        }
        plan.fields = fields
        plan.lookups = lookups
    }

    /// The property of `entity` a column fills: the one stored in that column (`lead_id` → `lead`),
    /// else the one named as inference named the column.
    static func property(
        forColumn column: String, inferred: String, of entity: EntityDescription
    ) -> PropertyDescription? {
        entity.attributes.first {
            !$0.isTransient && !$0.isDerived && $0.storageColumnName.lowercased() == column.lowercased()
        }
            ?? entity.relationships.first {
                !$0.isToMany && !$0.isTransient && $0.storageColumnName.lowercased() == column.lowercased()
            }
            ?? entity.attribute(named: inferred) ?? entity.relationship(named: inferred)
    }

    /// The links of a many-to-many relationship of `model` whose join table is `table` (in any
    /// case) and whose two columns (named as `sluice export` names them) are among `columns`.
    static func links(
        ofTable table: String, columns: [String], in model: ManagedObjectModel
    )
        -> ModelInference.LinksPlan?
    {
        let names = Set(columns.map { $0.lowercased() })
        for entity in model.entities {
            for relationship in entity.relationships
            where relationship.entity === entity && relationship.isManyToMany
                && relationship.joinTableOwner === relationship
                && relationship.joinTableName.lowercased() == table.lowercased()
            {
                let link = ExportTable(link: relationship)
                guard case .attribute(let ownerKey) = ExportTable.Key(of: relationship.entity),
                    case .attribute(let destinationKey) = ExportTable.Key(of: relationship.destinationEntity),
                    link.columns.count == 2, link.columns.allSatisfy({ names.contains($0.name.lowercased()) })
                else { continue }
                func column(_ name: String) -> String { columns.first { $0.lowercased() == name.lowercased() }! }
                return ModelInference.LinksPlan(
                    owner: entity.name, ownerKey: (ownerKey.name, column(link.columns[0].name)),
                    relationship: relationship.name, destination: relationship.destinationEntityName,
                    destinationKey: (destinationKey.name, column(link.columns[1].name)))
            }
        }
        return nil
    }
}

/// `--key` as the command line gives it, and what the sources made of it.
struct KeyRequest {
    let names: [String]
    /// Whether some source's records map every name.
    var used = false
    /// A name that is an attribute and another column's name: which one it is taken for.
    var notes: [String] = []

    /// The error for names no source maps: each with the columns it could be, and the nearest.
    func unmatched(in plans: [ModelInference.EntityPlan], inputs: [String]) -> ReaderError {
        let unmatched = names.filter { name in !plans.contains { $0.property(standingFor: name) != nil } }
        let columns = plans.flatMap { $0.fields.map(\.column) + $0.lookups.map(\.column) }
        let attributes = plans.flatMap { $0.fields.map(\.attribute) + $0.lookups.map(\.relationship) }
        let said = (unmatched.isEmpty ? names : unmatched).map { name in
            name.debugDescription
                + (NearestName.nearest(to: name, among: columns + attributes).map {
                    " (did you mean \($0.debugDescription)?)"
                }
                    ?? "")
        }
        let whole = unmatched.isEmpty ? " together" : ""
        return ReaderError(
            .invalidOption,
            "--key \(said.joined(separator: ", ")) names no column or attribute\(whole) of "
                + "\(inputs.joined(separator: ", ")) (its columns: \(columns.joined(separator: ", ")))")
    }
}

extension ModelInference.EntityPlan {
    /// Whether the plan fills `name`: an attribute its fields fill, or a to-one relationship a lookup finds.
    func maps(_ name: String) -> Bool {
        fields.contains { $0.attribute == name } || lookups.contains { $0.relationship == name }
    }

    /// The attribute or to-one relationship a name a user gave stands for: the one of that name, else
    /// the one read from the column the input spells so (`Invoice No`), else the one read from the
    /// column inference names so (`invoiceNo`, onto a model whose attribute is `invoice_no`).
    /// `note` says which won when the name is an attribute and another one's column.
    func property(standingFor name: String) -> (name: String, note: String?)? {
        func read(from column: (String) -> Bool) -> String? {
            fields.first { column($0.column) }?.attribute ?? lookups.first { column($0.column) }?.relationship
        }
        let byColumn = read { $0 == name }
        if maps(name) {
            guard let byColumn, byColumn != name else { return (name, nil) }
            return (
                name,
                "--key \(name) is taken for the attribute \(name), not for the column \(name) (read into \(byColumn))"
            )
        }
        return byColumn.map { ($0, nil) } ?? read { ModelInference.attributeName($0) == name }.map { ($0, nil) }
    }
}
