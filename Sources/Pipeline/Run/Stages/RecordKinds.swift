import ObjectGraph
import Readers

/// The kinds of record one source yields — its own, and one per nested child record — each
/// compiled on first sight against the record's field names: its mapper, the relationship to its
/// parent record, its lookups, and whether batch inserts may write it. Used on one context's queue.
final class RecordKinds {
    struct Kind {
        var mapper: RecordMapper
        var parentRelationship: String?
        var resolvers: [LookupResolver]
        /// Its records may be written by batch inserts (`WriteStage.insertInBulk`).
        var bulk: Bool
        /// The run's known keys of its entity (attribute index, keys) that batch inserts feed.
        var insertedKeys: [(attribute: Int, known: KnownKeys)]
        /// Its records are nested in a parent record (XML children): objects linked to the parent's
        /// through `parentRelationship`, or links adding to the parent's (`links` `.parent`).
        var isNested: Bool
        /// For records of links: the object they add to (the first resolver finds it for `.found`);
        /// their destinations come from the other resolvers.
        var links: PipelineConfig.LinkOwner?
        /// For the top-level records of a keyed source: where a mapped record holds its key's
        /// attribute values.
        var keyPlaces: [Int]?
        /// A record without any key value is rejected (CSV and XML: it could never be found again,
        /// and every run would store it anew; a SQL row's NULL key is SQLite's to give).
        var requiresKey: Bool
        /// For nested records: how a re-run finds their stored objects again when they have no key.
        var identity = PipelineConfig.KeylessIdentity.place

        /// For lookup `lookup` of the batch's `items` (of this kind): the stored object each one's key
        /// finds (`nil`: none, or no key) and whether it has a key — without a context.
        func storedDestinations(
            of lookup: Int, for items: [Int], in batch: ImportBatch, _ coordinator: PersistentStoreCoordinator
        ) throws -> (found: [ManagedObjectID?], hasKey: [Bool]) {
            if mapper.hasSingleKey(lookup) {
                let values = items.map { mapper.singleKey(lookup, of: batch.items[$0].mapped) }
                return (try resolvers[lookup].resolveIDs(values: values, in: coordinator), values.map { $0 != nil })
            }
            let keys = items.map { mapper.key(lookup, of: batch.items[$0].mapped) }
            return (try resolvers[lookup].resolveIDs(keys, in: coordinator), keys.map { $0 != nil })
        }

        /// The resolvers of a link kind's destinations (all of them for other kinds).
        var destinationResolvers: ArraySlice<LookupResolver> {
            guard case .found? = links else { return resolvers[...] }
            return resolvers.dropFirst()
        }
    }

    private(set) var all: [Kind] = []
    private var byName: [String: Int] = [:]
    /// Records of one kind share their reader context: the last one's kind answers most records.
    private var last: (context: Record.Context, kind: Int)?

    let source: PipelineConfig.Source
    let model: ManagedObjectModel
    let file: String
    private let keys: KnownKeysRegistry
    /// Whether records of an entity setting these relationships can go by batch insert.
    private let canInsertInBulk: (EntityDescription, [String]) -> Bool

    init(
        source: PipelineConfig.Source, config: PipelineConfig, keys: KnownKeysRegistry,
        canInsertInBulk: @escaping (EntityDescription, [String]) -> Bool
    ) {
        self.source = source
        model = config.model
        file = config.file
        self.keys = keys
        self.canInsertInBulk = canInsertInBulk
    }

    subscript(kind: Int) -> Kind {
        _read { yield all[kind] }
    }

    /// Whether some kind's records may go by batch insert.
    var anyBulk: Bool { all.contains(where: \.bulk) }

    /// The kind of a record, its mapper compiled on first sight.
    /// - Throws: `PipelineFileError` when the mapping names a field the record does not have;
    ///   `RunError.unmappedRecord` for a record kind the mapping does not know.
    func kind(of record: Record) throws -> Int {
        if let last, last.context === record.context { return last.kind }
        let kind = try kind(named: source.format.isNested ? (record.kind ?? source.record ?? "/") : "", of: record)
        last = (record.context, kind)
        return kind
    }

    private func kind(named name: String, of record: Record) throws -> Int {
        if let known = byName[name] { return known }
        var mapping = source.mapping, parentRelationship: String?, nested = false
        var identity = PipelineConfig.KeylessIdentity.place
        var spec = source.mapping.recordSpec(path: source.record ?? "/")
        if source.format.isNested, name != source.record ?? "/" {
            // A nested record: find its child mapping by walking the spec tree.
            func find(
                _ children: [PipelineConfig.Child], _ specs: [RecordSpec]
            ) -> (
                PipelineConfig.Child, RecordSpec
            )? {
                for (child, childSpec) in zip(children, specs) {
                    if childSpec.kind == name { return (child, childSpec) }
                    if let found = find(child.mapping.children, childSpec.children) { return found }
                }
                return nil
            }
            guard let (child, childSpec) = find(source.mapping.children, spec.children) else {
                throw RunError.unmappedRecord(source: source.name, kind: name)
            }
            mapping = child.mapping
            identity = child.identity
            parentRelationship = child.parent.isEmpty ? nil : child.parent
            nested = true
            spec = childSpec
        }
        let names =
            record.schema?.names
            ?? (source.format.isNested ? spec.fields.map(\.name) : (1...max(record.count, 1)).map(String.init))
        // No source null markers here: the CSV reader made unquoted markers null already, and a
        // quoted `""` is an empty text (an empty string, an empty blob), not null.
        let mapper = try RecordMapper(
            mapping: mapping, model: model, fieldNames: names, source: source.name, file: file, line: source.line)
        let resolvers = try mapping.lookups.map {
            try LookupResolver(lookup: $0, model: model, known: keys.knownKeys(for: $0))
        }
        let relationships = mapping.relationships.map(\.relationship) + [parentRelationship].compactMap { $0 }
        let insertedKeys = keys.singleKeys(of: mapper.entity.name).compactMap { name, known in
            mapper.entity.attributeIndex(named: name).map { ($0, known) }
        }
        let keyPlaces = nested || mapping.key.isEmpty ? nil : mapper.places(of: mapping.key)
        all.append(
            Kind(
                mapper: mapper, parentRelationship: parentRelationship, resolvers: resolvers,
                bulk: mapping.links == nil && canInsertInBulk(mapper.entity, relationships),
                insertedKeys: mapping.links == nil ? insertedKeys : [], isNested: parentRelationship != nil || nested,
                links: mapping.links, keyPlaces: keyPlaces,
                requiresKey: keyPlaces != nil && (source.format == .csv || source.format.isNested), identity: identity))
        byName[name] = all.count - 1
        return all.count - 1
    }
}
