import ModelFiles
import ObjectGraph
import Yams

extension PipelineReader {
    // MARK: Checks after reading: settings that do not fit together, keys the model cannot keep

    /// The whole file's settings, once every section is read.
    mutating func checkFile(_ config: PipelineConfig, root: Node, entries: [(key: String, keyNode: Node, value: Node)])
    {
        if !entries.contains(where: { $0.key == "sources" }) {
            fail(root, "the pipeline file needs `sources:` (a list)")
        }
        // Only a policy under which the record's values win lets the last record of a key win.
        for source in config.sources where source.duplicates == .lastWins {
            if config.merge != .objectTrumps && config.merge != .overwrite {
                fail(
                    root,
                    "duplicates: last-wins needs merge: object-trumps or overwrite (under the merge policy "
                        + "given, a later record of a key would be rejected or lose to the first)",
                    entity: "source \(source.name)")
            }
        }
        let sourceNodes = entries.first { $0.key == "sources" }?.value.sequence.map(Array.init) ?? []
        for source in config.sources where source.mode != .merge {
            checkMode(of: source, config: config, at: sourceNodes.first { $0.mark?.line == source.line } ?? root)
        }
        let target = entries.first { $0.key == "target" }?.value
        if config.store == .postgres, target?.mapping?.contains(where: { $0.key.scalar?.string == "url" }) != true {
            fail(target ?? root, "a postgres target needs `url` (postgresql://user@host/database)")
        }
        if config.store != .postgres,
            target?.mapping?.contains(where: { ["url", "schema"].contains($0.key.scalar?.string) })
                == true
        {
            fail(target ?? root, "url and schema are options of a postgres target (store: postgres)")
        }
        if config.store != .inMemory, config.store != .postgres,
            target?.mapping?.first(where: { $0.key.scalar?.string == "path" }) == nil
        {
            fail(
                target ?? root, "a \(config.store.rawValue) target needs `path` (the store file, relative to this file)"
            )
        }
        if config.store != .sqlite, !config.layoutOptions.isEmpty {
            fail(target ?? root, "layout, dates and version_column are options of a sqlite target")
        }
        if config.layoutOptions["layout"] == "graph",
            config.layoutOptions["dates"] != nil || config.layoutOptions["version_column"] != nil
        {
            fail(target ?? root, "dates and version_column belong to the plain layout (layout: plain)")
        }
        if config.store == .xml || config.store == .binary, config.commit == .batches {
            fail(
                target ?? root,
                "commit: batches needs a sqlite target (an \(config.store.rawValue) store rewrites its whole file at "
                    + "every save); use commit: atomic"
            )
        }
    }

    /// A mode that deletes needs one commit (a run stopped between batches would leave the
    /// deletions without the records); `sync` needs a key of attributes to tell what vanished.
    mutating func checkMode(of source: PipelineConfig.Source, config: PipelineConfig, at node: Node) {
        let subject = "source \(source.name)"
        if source.mode == .replace || source.mode == .sync, config.commit == .batches {
            fail(
                node,
                "mode: \(source.mode.rawValue) deletes stored objects, which needs commit: atomic (with commit: "
                    + "batches a stopped run would keep the deletions without the records)", entity: subject)
        }
        guard source.mode == .sync else { return }
        let entity = config.model.entity(named: source.mapping.entity)
        if source.mapping.key.isEmpty || source.mapping.links != nil {
            fail(
                node, "mode: sync needs a key: it deletes the stored objects whose key no record holds", entity: subject
            )
        } else if let relationship = source.mapping.key.first(where: { entity?.relationship(named: $0) != nil }) {
            fail(
                node,
                "mode: sync needs a key of attributes (\(relationship) is a relationship): it deletes the stored "
                    + "objects whose key no record holds", entity: subject)
        }
    }

    /// A mapping's key against the model: attributes or to-one relationships of the entity, one of
    /// its uniqueness constraints (upserts go through one), and filled by the records. Without a
    /// `key:`, the first constraint the records fill is the key objects are found by; the others
    /// are checked for collisions (rejects, never merges).
    mutating func checkKey(
        of mapping: inout PipelineConfig.Mapping, keyNode: Node?, entity: EntityDescription, source: String
    ) {
        let constraints = entity.constraintsWithInherited.map(\.names)
        func mapped(_ name: String) -> Bool {
            mapping.fields.contains { $0.attribute == name }
                || mapping.relationships.contains { $0.relationship == name }
        }
        if let keyNode {
            // A key may name a field as the input spells it (`CustomerID`), or an attribute as its
            // column is named (`column: Invoice No`): the attribute it stands for.
            mapping.key = mapping.key.map { name in
                guard entity.attribute(named: name) == nil, entity.relationship(named: name) == nil else { return name }
                return mapping.fields.first(where: { $0.from == name })?.attribute
                    ?? entity.attribute(namedOrStoredAs: name)?.name ?? name
            }
            if let twice = mapping.key.first(where: { name in mapping.key.filter { $0 == name }.count > 1 }) {
                fail(keyNode, "key names \(twice.debugDescription) twice", entity: source)
            }
            for name in mapping.key
            where entity.attribute(named: name) == nil && entity.relationship(named: name).map({ !$0.isToMany }) != true
            {
                let names = entity.attributes.map(\.name) + entity.relationships.filter { !$0.isToMany }.map(\.name)
                let near = NearestName.nearest(to: name, among: names + mapping.fields.map(\.from))
                fail(
                    keyNode,
                    "key \(name.debugDescription) is not an attribute or to-one relationship of \(entity.name), nor a "
                        + "field it reads\(near.map { " (did you mean \($0.debugDescription)?)" } ?? "")",
                    entity: source)
            }
            // A key without a constraint would silently insert every record again on a re-run.
            if !mapping.key.isEmpty,
                mapping.key.allSatisfy({ entity.attribute(named: $0) != nil || entity.relationship(named: $0) != nil }),
                !constraints.contains(where: { Set($0) == Set(mapping.key) })
            {
                fail(
                    keyNode,
                    "key [\(mapping.key.joined(separator: ", "))] is not a uniqueness constraint of \(entity.name) in "
                        + "the model (add `unique: [[\(mapping.key.joined(separator: ", "))]]` to it)",
                    entity: source)
            }
        } else {
            mapping.key = constraints.first { $0.allSatisfy(mapped) } ?? []
            mapping.keyIsImplicit = !mapping.key.isEmpty
        }
        mapping.otherUniqueKeys = constraints.filter { Set($0) != Set(mapping.key) }
        for name in mapping.key where !mapped(name) {
            fail(
                keyNode,
                "key \(name.debugDescription) is not mapped from the records (add it to `fields`, or a relationship "
                    + "to `relationships`)",
                entity: source)
        }
    }
}
