import Foundation
import ObjectGraph
import Readers

/// One source of a run: records read, mapped, and inserted a batch at a time on the context's queue.
struct SourceImport {
    let source: PipelineConfig.Source
    let config: PipelineConfig
    let context: ManagedObjectContext

    /// A mapped record waiting for its batch to be inserted.
    private struct Item {
        var record: Record
        var mapped: MappedRecord
        var mapper: RecordMapper
        /// For children: the item of the parent record and the relationship to it.
        var parent: Int?
        var parentRelationship: String?
        var object: ManagedObject?
        var reject: RecordReject?
    }

    /// The mapper of each kind of record (the source's own, and one per nested child record).
    private final class Mappers {
        var byKind: [String: (mapper: RecordMapper, parentRelationship: String?)] = [:]
        var resolvers: [ObjectIdentifier: [LookupResolver]] = [:]
    }

    func run(report: inout RunReport, rejects: inout RejectsFile) throws {
        var reader = try openReader()
        let mappers = Mappers()
        var batch: [Item] = [], topLevel = 0
        var byNumber: [Int: Int] = [:]       // record number → item index (for children)
        while true {
            let record: Record?
            do { record = try reader.next() } catch {
                throw RunError.input(source: source.name, "\(error)")
            }
            guard let record else { break }
            let (mapper, parentRelationship) = try self.mapper(for: record, in: mappers)
            let isChild = parentRelationship != nil
            if !isChild, topLevel >= config.batchSize {
                try flush(&batch, mappers: mappers, report: &report, rejects: &rejects)
                topLevel = 0
                byNumber.removeAll(keepingCapacity: true)
            }
            report.entities[mapper.entity.name, default: .init()].read += 1
            var item = Item(record: record, mapped: MappedRecord(), mapper: mapper, parentRelationship: parentRelationship)
            if isChild {
                guard let parentNumber = record.parentRecord, let parent = byNumber[parentNumber] else { continue }
                item.parent = parent
            } else {
                topLevel += 1
            }
            do {
                guard let mapped = try mapper.map(record) else { continue }    // skipped by `where`
                item.mapped = mapped
            } catch {
                item.reject = error
            }
            if let number = record.number { byNumber[number] = batch.count }
            batch.append(item)
        }
        try flush(&batch, mappers: mappers, report: &report, rejects: &rejects)
    }

    private func openReader() throws -> any RecordReader {
        do {
            switch source.format {
            case .csv: return try CSVReader(path: source.path, dialect: source.csv)
            case .xml: return try XMLReader(path: source.path, spec: source.mapping.xmlSpec(path: source.record ?? "/"))
            case .sqldump: return try SQLDumpReader(path: source.path, tables: source.table.map { [$0] })
            case .sqlite: return try SQLiteFileReader(path: source.path, tables: source.table.map { [$0] })
            }
        } catch {
            throw RunError.input(source: source.name, "\(error)")
        }
    }

    /// The mapper for a record's kind, compiled on first sight against the record's field names.
    private func mapper(for record: Record, in mappers: Mappers) throws -> (RecordMapper, String?) {
        let kind = source.format == .xml ? (record.kind ?? source.record ?? "") : ""
        if let known = mappers.byKind[kind] { return known }
        var mapping = source.mapping, parentRelationship: String?
        var spec = source.mapping.xmlSpec(path: source.record ?? "/")
        if source.format == .xml, kind != source.record {
            // A nested record: find its child mapping by walking the spec tree.
            func find(_ children: [PipelineConfig.Child], _ specs: [XMLRecordSpec]) -> (PipelineConfig.Child, XMLRecordSpec)? {
                for (child, childSpec) in zip(children, specs) {
                    if childSpec.kind == kind { return (child, childSpec) }
                    if let found = find(child.mapping.children, childSpec.children) { return found }
                }
                return nil
            }
            guard let (child, childSpec) = find(source.mapping.children, spec.children) else {
                throw RunError.input(source: source.name, "a record of kind \(kind) has no mapping")
            }
            mapping = child.mapping
            parentRelationship = child.parent
            spec = childSpec
        }
        let names = record.schema?.names ?? (source.format == .xml ? spec.fields.map(\.name) : (1...max(record.count, 1)).map(String.init))
        let mapper = try RecordMapper(mapping: mapping, model: config.model, fieldNames: names, source: source.name,
                                      sourceNulls: source.format == .csv ? source.csv.nullMarkers : [], file: config.file, line: source.line)
        mappers.byKind[kind] = (mapper, parentRelationship)
        mappers.resolvers[ObjectIdentifier(mapper)] = try mapping.relationships.map { try LookupResolver(lookup: $0, model: config.model) }
        return (mapper, parentRelationship)
    }

    // MARK: Batches

    private func flush(_ batch: inout [Item], mappers: Mappers, report: inout RunReport, rejects: inout RejectsFile) throws {
        defer { batch.removeAll(keepingCapacity: true) }
        guard !batch.isEmpty else { return }
        // A record whose parent record was rejected goes with it.
        for index in batch.indices {
            if let parent = batch[index].parent, batch[parent].reject != nil, batch[index].reject == nil {
                rejectItem(&batch, index, property: batch[index].parentRelationship ?? "", rule: "parent", message: "its parent record was rejected")
            }
        }
        // Objects first, with their values and parents.
        for index in batch.indices where batch[index].reject == nil {
            let object = context.insertNewObject(forEntityName: batch[index].mapper.entity.name)
            for (attribute, value) in batch[index].mapped.values { object[attributeAt: attribute] = value }
            if let parent = batch[index].parent, let relationship = batch[index].parentRelationship, let parentObject = batch[parent].object {
                object.setRelatedObject(parentObject, forKey: relationship)
            }
            batch[index].object = object
        }
        // Lookups: the batch's keys of each lookup resolved together.
        for (_, entry) in mappers.byKind {
            let resolvers = mappers.resolvers[ObjectIdentifier(entry.mapper)] ?? []
            let members = batch.indices.filter { batch[$0].mapper === entry.mapper && batch[$0].object != nil }
            for (lookupIndex, resolver) in resolvers.enumerated() where !members.isEmpty {
                let keys = members.map { batch[$0].mapped.lookupKeys[lookupIndex] }
                let found = try resolver.resolve(keys, in: context)
                for (position, index) in members.enumerated() {
                    guard let key = keys[position] else { continue }
                    if let destination = found[position] {
                        batch[index].object?.setRelatedObject(destination, forKey: resolver.lookup.relationship)
                    } else {
                        let described = zip(resolver.lookup.key, key).map { "\($0.attribute) = \($1)" }.joined(separator: ", ")
                        rejectItem(&batch, index, property: resolver.lookup.relationship, rule: "lookup",
                                   message: "no \(resolver.entity.name) with \(described)")
                    }
                }
            }
        }
        try save(&batch)
        for item in batch {
            if let reject = item.reject {
                report.entities[reject.entity, default: .init()].rejected += 1
                report.rejected += 1
                try rejects.write(reject)
            } else if item.object != nil {
                report.entities[item.mapper.entity.name, default: .init()].saved += 1
            }
        }
        context.reset()
        for resolvers in mappers.resolvers.values { for resolver in resolvers { resolver.reset() } }
    }

    /// Saves the batch; records whose objects fail validation or break a key under `merge: error`
    /// are rejected with those failures and the save is tried again without them.
    private func save(_ batch: inout [Item]) throws {
        while true {
            do {
                try context.save()
                return
            } catch let error as ValidationError {
                var progressed = false
                for failure in error.failures {
                    guard let index = owner(of: failure.objectID, in: batch) else { continue }
                    let field = failure.key.flatMap { batch[index].mapper.field(of: $0, in: batch[index].record) }
                    rejectItem(&batch, index, property: failure.key ?? failure.entityName, rule: "\(failure.rule)", message: failure.message,
                               raw: field?.raw ?? failure.value, position: field?.position)
                    progressed = true
                }
                if !progressed { throw RunError.store("a batch of \(source.name) cannot be saved: \(error)") }
            } catch let error as MergeError {
                var progressed = false
                for conflict in error.constraintConflicts {
                    for id in [conflict.objectID] + conflict.otherObjectIDs {
                        guard let index = owner(of: id, in: batch) else { continue }
                        rejectItem(&batch, index, property: conflict.keyNames.joined(separator: ", "), rule: "unique", message: "\(conflict)")
                        progressed = true
                    }
                }
                if !progressed { throw RunError.store("a batch of \(source.name) cannot be saved: \(error)") }
            }
        }
    }

    /// The item whose object has `objectID`, or whose lookup created that object.
    private func owner(of objectID: ManagedObjectID, in batch: [Item]) -> Int? {
        if let index = batch.indices.first(where: { batch[$0].reject == nil && batch[$0].object?.objectID == objectID }) { return index }
        return batch.indices.first { index in
            guard batch[index].reject == nil, let object = batch[index].object else { return false }
            return object.entity.relationships.contains { !$0.isToMany && object.relatedObject(forKey: $0.name)?.objectID == objectID }
        }
    }

    /// Rejects an item: its object (and its nested children's) leave the context.
    private func rejectItem(_ batch: inout [Item], _ index: Int, property: String, rule: String, message: String, raw: String? = nil,
                            position: SourcePosition? = nil) {
        let failure = RejectFailure(property: property, raw: raw, rule: rule, message: message, position: position ?? batch[index].record.position)
        if batch[index].reject == nil {
            batch[index].reject = RecordReject(source: source.name, entity: batch[index].mapper.entity.name, position: batch[index].record.position,
                                               failures: [failure])
        } else {
            batch[index].reject!.failures.append(failure)
        }
        if let object = batch[index].object, !object.isDeleted { context.delete(object) }
        for child in batch.indices where batch[child].parent == index && batch[child].reject == nil {
            rejectItem(&batch, child, property: batch[child].parentRelationship ?? "", rule: "parent", message: "its parent record was rejected")
        }
    }
}
