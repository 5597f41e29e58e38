import Foundation
import ObjectGraph
import Readers

/// What the workers of a run share: the report and the rejects file (under a lock), and the keys
/// lookups have learned (`KnownKeys`, one per entity and key).
final class RunShared: @unchecked Sendable {
    // @unchecked: every stored property is only touched with `lock` held.
    private let lock = NSLock()
    private var report = RunReport()
    private var rejects: RejectsFile
    private var knownKeys: [String: KnownKeys] = [:]
    let progress = RunProgress()
    /// Records waiting for a parent that has not arrived yet.
    let pending: PendingRecords

    /// - Parameter lookups: every lookup of the run, so that batch inserts of their entities
    ///   can tell them the keys they write before the first record looks one up.
    init(rejectsPath: String?, batchSize: Int, lookups: [PipelineConfig.Lookup] = []) {
        rejects = RejectsFile(path: rejectsPath)
        pending = PendingRecords(retryAt: batchSize)
        for lookup in lookups { _ = knownKeys(for: lookup) }
    }

    var currentReport: RunReport { lock.withLock { report } }

    private static func name(_ entity: String, _ attributes: [String]) -> String {
        entity + "|" + attributes.joined(separator: ",")
    }

    func knownKeys(for lookup: PipelineConfig.Lookup) -> KnownKeys {
        let name = Self.name(lookup.entity, lookup.key.map(\.attribute))
        return lock.withLock {
            if let known = knownKeys[name] { return known }
            let known = KnownKeys()
            knownKeys[name] = known
            return known
        }
    }

    /// The run's keys of one attribute of `entity` that lookups use, by attribute name.
    func singleKeys(of entity: String) -> [(attribute: String, known: KnownKeys)] {
        let prefix = entity + "|"
        return lock.withLock {
            knownKeys.compactMap { name, known in
                guard name.hasPrefix(prefix) else { return nil }
                let attribute = String(name.dropFirst(prefix.count))
                return attribute.contains(",") ? nil : (attribute, known)
            }
        }
    }

    /// Adds a batch's counts and writes its rejects.
    func add(_ counts: [String: RunReport.Counts], rejected: [RecordReject]) throws {
        try lock.withLock {
            for (entity, batch) in counts {
                report.entities[entity, default: .init()].add(batch)
            }
            report.rejected += rejected.count
            for reject in rejected { try rejects.write(reject) }
        }
    }

    func closeRejects() throws { try lock.withLock { try rejects.close() } }
}

/// One source of a run — or several consecutive sources reading one file (`sharesPass`), imported
/// in one pass over it. A reading thread reads the records and hands them over in batches of
/// `batch.size` top-level records (a record's nested children stay in its batch) through a bounded
/// queue; each of the run's contexts takes batches from it and maps, inserts, links, saves and
/// resets on its own queue. Every batch of a source is done before the next source's records are
/// handed over, and every context is done before the next import starts.
struct SourceImport {
    let source: PipelineConfig.Source
    /// The source's place in the pipeline.
    let sourceIndex: Int
    let config: PipelineConfig
    /// `commit: batches`: each save commits with the checkpoint.
    var checkpoint: BatchCheckpoint?
    /// Batches of this source already in the store (`--resume`): read past, not imported — the
    /// first `skippedBatches`, and `alsoDone`.
    var skippedBatches = 0
    var alsoDone: Set<Int> = []
    /// The sources after this one read in the same pass (their places in the pipeline).
    var alongside: [Int] = []

    /// A batch of records of one source of the pass (0: `source`, then `alongside`) and its number
    /// in that source (from 0).
    typealias Batch = (part: Int, number: Int, records: [Record])

    /// The pass's sources by their place in it.
    private var parts: [(source: PipelineConfig.Source, index: Int)] {
        [(source, sourceIndex)] + alongside.map { (config.sources[$0], $0) }
    }

    /// Whether `next` can be read in the same pass as `sources` (consecutive sources of the
    /// pipeline): one XML or SQL dump file whose sources each take their own records (distinct
    /// tables; XML record paths neither equal nor one inside another). Not with `commit: batches`,
    /// whose checkpoint counts the batches of one source at a time.
    static func sharesPass(
        _ next: PipelineConfig.Source, with sources: [PipelineConfig.Source], commit: PipelineConfig.Commit
    ) -> Bool {
        guard commit != .batches, let first = sources.first, next.format == first.format, next.path == first.path else {
            return false
        }
        switch next.format {
        case .sqldump:
            guard let table = next.table else { return false }
            return sources.allSatisfy { $0.table != nil && $0.table != table }
        case .xml:
            let path = next.record ?? "/"
            return sources.allSatisfy { source in
                let other = source.record ?? "/"
                return other != path && !other.hasPrefix(path + "/") && !path.hasPrefix(other + "/")
            }
        case .csv, .sqlite:
            return false
        }
    }

    /// Imports the pass; returns the seconds spent on each of its sources.
    @discardableResult
    func run(contexts: [ManagedObjectContext], shared: RunShared) throws -> [Double] {
        let queue = BoundedQueue<Batch>(capacity: contexts.count)
        let failure = FirstFailure()
        let readerDone = DispatchSemaphore(value: 0)
        let parts = parts
        let seconds = Seconds(count: parts.count)
        let thread = Thread { [self] in
            do { try read(into: queue, failure: failure, progress: shared.progress, seconds: &seconds.values) } catch {
                failure.set(error)
            }
            queue.close()
            readerDone.signal()
        }
        thread.name = "sluice-read-\(source.name)"
        let start = Date()
        thread.start()
        let workers = contexts.map { context in
            parts.map {
                BatchWorker(
                    source: $0.source, sourceIndex: $0.index, config: config, context: context, shared: shared,
                    checkpoint: checkpoint)
            }
        }
        DispatchQueue.concurrentPerform(iterations: workers.count) { index in
            let context = contexts[index]
            while let batch = queue.pop() {
                do {
                    try context.performAndWait {
                        try workers[index][batch.part].importBatch(batch.records, number: batch.number)
                        // Enough records wait for parents: try them again, parents may have come since.
                        if let due = shared.pending.takeIfDue() {
                            try Self.retry(
                                due, config: config, context: context, shared: shared, checkpoint: checkpoint,
                                final: false)
                        }
                    }
                    shared.progress.add(records: batch.records.count)
                } catch {
                    failure.set(error)
                    queue.cancel()
                }
                queue.finished()
            }
        }
        readerDone.wait()
        if let error = failure.error { throw error }
        // The reader timed the sources it left; the last one ends now.
        var timed = seconds.values
        timed[timed.count - 1] += Date().timeIntervalSince(start) - timed.reduce(0, +)
        return timed
    }

    /// Seconds per source of the pass, written by the reading thread before it signals that it is done.
    private final class Seconds: @unchecked Sendable {
        // @unchecked: written by the reading thread only, read after its end is signalled.
        var values: [Double]
        init(count: Int) { values = Array(repeating: 0, count: count) }
    }

    /// Imports waiting records again (`PendingRecords`), a batch at a time, in `context` (call on its
    /// queue); what still finds no parent waits on — or, on the `final` try, is rejected with its key.
    static func retry(
        _ groups: [Int: [PendingRecords.Group]], config: PipelineConfig, context: ManagedObjectContext,
        shared: RunShared,
        checkpoint: BatchCheckpoint?, final: Bool
    ) throws {
        for (sourceIndex, waiting) in groups.sorted(by: { $0.key < $1.key }) {
            let worker = BatchWorker(
                source: config.sources[sourceIndex], sourceIndex: sourceIndex, config: config, context: context,
                shared: shared, checkpoint: checkpoint)
            var start = 0
            while start < waiting.count {
                let slice = waiting[start..<min(start + config.batchSize, waiting.count)]
                try worker.importBatch(
                    slice.flatMap(\.records), number: nil, origins: slice.map(\.origin), final: final)
                start += slice.count
            }
        }
    }

    /// `--resume`: reads the records a checkpoint names as waiting (top-level records and their
    /// children) from this source again.
    func collect(_ origins: Set<PendingRecords.Origin>) throws -> [PendingRecords.Group] {
        let wanted = origins.filter { $0.source == sourceIndex }
        guard let last = wanted.map(\.batch).max() else { return [] }
        var reader = try openReader(progress: RunProgress())
        var groups: [PendingRecords.Group] = []
        var topLevel = -1, current: PendingRecords.Origin?
        while let record = try readNext(&reader) {
            if record.parentRecord == nil {
                topLevel += 1
                let origin = PendingRecords.Origin(
                    source: sourceIndex, batch: topLevel / config.batchSize, record: topLevel % config.batchSize)
                if origin.batch > last { break }
                current = wanted.contains(origin) ? origin : nil
                if let current { groups.append(.init(origin: current, records: [])) }
            }
            if current != nil { groups[groups.count - 1].records.append(record) }
        }
        return groups
    }

    private func readNext(_ reader: inout any RecordReader) throws -> Record? {
        do { return try reader.next() } catch {
            throw RunError.input(source: source.name, "\(error)")
        }
    }

    /// Reads the pass into batches of records. A top-level record of another source of the pass
    /// ends the current source's batch, and is handed over once every batch before it is done (so
    /// its lookups find what the sources before it wrote); nested records go with their parent.
    private func read(
        into queue: BoundedQueue<Batch>, failure: FirstFailure, progress: RunProgress, seconds: inout [Double]
    ) throws {
        var reader = try openReader(progress: progress)
        let parts = parts
        var partOfKind: [String: Int] = [:]
        for (part, member) in parts.enumerated().reversed() {
            partOfKind[member.source.format == .xml ? member.source.record ?? "/" : member.source.table ?? ""] = part
        }
        var part = 0, numbers = Array(repeating: 0, count: parts.count)
        numbers[0] = skippedBatches
        var batch: [Record] = [], topLevel = 0
        var mark = Date()
        // A resumed run reads past the top-level records already imported, and their children.
        var skipping = skippedBatches * config.batchSize, skippingChildren = skippedBatches > 0
        batch.reserveCapacity(config.batchSize)
        /// Hands the batch over and starts the next; `false` when the import was cancelled.
        func hand() -> Bool {
            defer {
                numbers[part] += 1
                batch = []
                batch.reserveCapacity(config.batchSize)
                topLevel = 0
            }
            progress.read(records: batch.count)
            return part != 0 || !alsoDone.contains(numbers[part]) ? queue.push((part, numbers[part], batch)) : true
        }
        // Records of one kind share their reader context: the last one's part answers most records.
        var lastKind: (context: Record.Context, part: Int?)?
        while failure.error == nil {
            guard let record = try readNext(&reader) else { break }
            if skipping > 0 || (skippingChildren && record.parentRecord != nil) {
                if record.parentRecord == nil { skipping -= 1 }
                continue
            }
            skippingChildren = false
            if record.parentRecord == nil {
                if parts.count > 1, lastKind?.context !== record.context {
                    lastKind = (record.context, partOfKind[record.kind ?? ""])
                }
                if let next = lastKind?.part, next != part {
                    if !batch.isEmpty { guard hand() else { return } }
                    queue.waitUntilFinished()
                    let now = Date()
                    seconds[part] += now.timeIntervalSince(mark)
                    mark = now
                    part = next
                    progress.switchTo(source: parts[part].source.name)
                }
                if topLevel >= config.batchSize { guard hand() else { return } }
                topLevel += 1
            }
            batch.append(record)
        }
        if !batch.isEmpty { _ = hand() }
    }

    private func openReader(progress: RunProgress) throws -> any RecordReader {
        /// The file, its bytes counted for the progress line.
        func counted() throws -> ByteSource {
            let (input, counter) = try Input.openCounting(source.path)
            progress.begin(source: source.name, counter: counter, path: source.path)
            return input
        }
        do {
            switch source.format {
            case .csv: return try CSVReader(source: counted(), dialect: source.csv)
            case .xml:
                return try XMLReader(
                    source: counted(), specs: parts.map { $0.source.mapping.xmlSpec(path: $0.source.record ?? "/") })
            case .sqldump:
                return try SQLDumpReader(
                    source: counted(),
                    tables: alongside.isEmpty ? source.table.map { [$0] } : Set(parts.compactMap(\.source.table)))
            case .sqlite:
                progress.begin(source: source.name, counter: nil, path: source.path)
                return try SQLiteFileReader(path: source.path, tables: source.table.map { [$0] })
            }
        } catch {
            throw RunError.input(source: source.name, "\(error)")
        }
    }
}

/// A context's last did-save, handed from the save's callback to the batch that saved.
private final class LastSave: @unchecked Sendable {
    // @unchecked: `save` is only touched with `lock` held.
    private let lock = NSLock()
    private var save: ContextDidSave?
    func set(_ save: ContextDidSave) { lock.withLock { self.save = save } }
    func take() -> ContextDidSave? {
        lock.withLock {
            defer { save = nil }
            return save
        }
    }
}

/// The first error of any thread of a source's import.
private final class FirstFailure: @unchecked Sendable {
    // @unchecked: `stored` is only touched with `lock` held.
    private let lock = NSLock()
    private var stored: (any Error)?
    var error: (any Error)? { lock.withLock { stored } }
    func set(_ error: any Error) { lock.withLock { if stored == nil { stored = error } } }
}

/// One context's share of a source: maps the records of a batch, inserts their objects, links
/// children to parents and lookups to their destinations, saves (rejecting the records whose objects
/// fail) and resets. Used on its context's queue only.
final class BatchWorker: @unchecked Sendable {
    // @unchecked: used only inside `context.performAndWait`, one batch at a time.
    let source: PipelineConfig.Source
    let sourceIndex: Int
    let config: PipelineConfig
    let context: ManagedObjectContext
    private let shared: RunShared

    /// A mapped record waiting for its batch to be inserted.
    private struct Item {
        var record: Record
        var mapped: MappedRecord
        var kind: Int
        /// For children: the item of the parent record.
        var parent: Int?
        var object: ManagedObject?
        var reject: RecordReject?
        /// The item of the group's top-level record (itself for a top-level record).
        var top = 0
        /// For top-level records: where the record is in its input.
        var origin: PendingRecords.Origin?
        /// The group waits for a parent that has not arrived (`PendingRecords`).
        var waits = false
        /// Written by a batch insert (no object in the context).
        var bulkID: ManagedObjectID?
    }

    /// Each kind of record (the source's own, and one per nested child record): its mapper, the
    /// relationship to its parent record, its lookups.
    private struct Kind {
        var mapper: RecordMapper
        var parentRelationship: String?
        var resolvers: [LookupResolver]
        /// Its records may be written by batch inserts (`insertInBulk`).
        var bulk: Bool
    }
    private var kinds: [Kind] = []
    private var kindByName: [String: Int] = [:]
    private var lastKind: (context: Record.Context, kind: Int)?
    /// Batch inserts are worth trying: they are possible and the last batches' objects were mostly
    /// new (an input whose keys the store already holds goes through the context).
    private var bulkWorthTrying = true
    /// By kind: the run's known keys of its entity (attribute index, keys) that batch inserts feed.
    private var insertedKeys: [[(attribute: Int, known: KnownKeys)]] = []

    /// The context's last did-save (which objects it inserted, and updated with changes).
    private let lastSave = LastSave()
    private var observation: DidSaveObservation?

    private let checkpoint: BatchCheckpoint?
    private var batchNumber: Int?
    /// The groups of the batch being saved that wait for a parent, and (for a retry) the origins
    /// that no longer wait: what the checkpoint saved with the batch records.
    private var waitingOrigins: [PendingRecords.Origin] = []
    private var resolvedOrigins: [PendingRecords.Origin] = []

    init(
        source: PipelineConfig.Source, sourceIndex: Int, config: PipelineConfig, context: ManagedObjectContext,
        shared: RunShared, checkpoint: BatchCheckpoint?
    ) {
        self.source = source
        self.sourceIndex = sourceIndex
        self.config = config
        self.context = context
        self.shared = shared
        self.checkpoint = checkpoint
        observation = context.observeDidSave { [lastSave] save in lastSave.set(save) }
    }

    deinit { observation?.cancel() }

    /// Imports a batch: records read now (batch `number` of the source), or records that waited for
    /// a parent (`number` nil, each top-level record's `origins` given). On the `final` try a
    /// must-exist lookup that finds nothing rejects its record; before, the record waits.
    func importBatch(
        _ records: [Record], number: Int?, origins: [PendingRecords.Origin]? = nil, final: Bool = false
    ) throws {
        batchNumber = number
        var batch: [Item] = []
        batch.reserveCapacity(records.count)
        let hasChildren = !source.mapping.children.isEmpty
        var byNumber: [Int: Int] = [:]  // record number → item index (for children)
        var counts: [String: RunReport.Counts] = [:]
        var readByKind: [Int] = []
        var topLevel = 0
        for record in records {
            let kind = try self.kind(of: record)
            let mapper = kinds[kind].mapper
            var item = Item(record: record, mapped: MappedRecord(), kind: kind)
            if kinds[kind].parentRelationship != nil {
                guard let parentNumber = record.parentRecord, let parent = byNumber[parentNumber] else { continue }
                item.parent = parent
                item.top = batch[parent].top
            } else {
                item.origin =
                    origins?[topLevel]
                    ?? PendingRecords.Origin(source: sourceIndex, batch: number ?? 0, record: topLevel)
                item.top = batch.count
                topLevel += 1
            }
            if origins == nil {
                if kind >= readByKind.count { readByKind += repeatElement(0, count: kind + 1 - readByKind.count) }
                readByKind[kind] += 1
            }
            do {
                guard let mapped = try mapper.map(record) else { continue }  // skipped by `where`
                item.mapped = mapped
            } catch {
                item.reject = error
            }
            if hasChildren, let number = record.number { byNumber[number] = batch.count }
            batch.append(item)
        }
        for (kind, read) in readByKind.enumerated() where read > 0 {
            counts[kinds[kind].mapper.entity.name, default: .init()].read += read
        }
        try flush(&batch, counts: &counts, retried: origins, final: final)
    }

    /// The kind of a record, its mapper compiled on first sight against the record's field names.
    private func kind(of record: Record) throws -> Int {
        // Records of one kind share their context: the last one's kind answers most records.
        if let last = lastKind, last.context === record.context { return last.kind }
        let kind = try kind(named: source.format == .xml ? (record.kind ?? source.record ?? "") : "", of: record)
        lastKind = (record.context, kind)
        return kind
    }

    private func kind(named name: String, of record: Record) throws -> Int {
        if let known = kindByName[name] { return known }
        var mapping = source.mapping, parentRelationship: String?
        var spec = source.mapping.xmlSpec(path: source.record ?? "/")
        if source.format == .xml, name != source.record {
            // A nested record: find its child mapping by walking the spec tree.
            func find(
                _ children: [PipelineConfig.Child], _ specs: [XMLRecordSpec]
            ) -> (PipelineConfig.Child, XMLRecordSpec)? {
                for (child, childSpec) in zip(children, specs) {
                    if childSpec.kind == name { return (child, childSpec) }
                    if let found = find(child.mapping.children, childSpec.children) { return found }
                }
                return nil
            }
            guard let (child, childSpec) = find(source.mapping.children, spec.children) else {
                throw RunError.input(source: source.name, "a record of kind \(name) has no mapping")
            }
            mapping = child.mapping
            parentRelationship = child.parent
            spec = childSpec
        }
        let names =
            record.schema?.names
            ?? (source.format == .xml ? spec.fields.map(\.name) : (1...max(record.count, 1)).map(String.init))
        let mapper = try RecordMapper(
            mapping: mapping, model: config.model, fieldNames: names, source: source.name,
            sourceNulls: source.format == .csv ? source.csv.nullMarkers : [], file: config.file, line: source.line)
        let resolvers = try mapping.relationships.map {
            try LookupResolver(lookup: $0, model: config.model, known: shared.knownKeys(for: $0))
        }
        kinds.append(
            Kind(
                mapper: mapper, parentRelationship: parentRelationship, resolvers: resolvers,
                bulk: canInsertInBulk(
                    mapper.entity,
                    setting: mapping.relationships.map(\.relationship) + [parentRelationship].compactMap { $0 })))
        kindByName[name] = kinds.count - 1
        insertedKeys.append(
            shared.singleKeys(of: mapper.entity.name).compactMap { name, known in
                mapper.entity.attributeIndex(named: name).map { ($0, known) }
            })
        return kinds.count - 1
    }

    // MARK: Batches

    private func flush(
        _ batch: inout [Item], counts: inout [String: RunReport.Counts], retried: [PendingRecords.Origin]?, final: Bool
    ) throws {
        guard !batch.isEmpty else { return try shared.add(counts, rejected: []) }
        // A record whose parent record was rejected goes with it.
        for index in batch.indices {
            if let parent = batch[index].parent, batch[parent].reject != nil, batch[index].reject == nil {
                rejectItem(
                    &batch, index, property: kinds[batch[index].kind].parentRelationship ?? "", rule: "parent",
                    message: "its parent record was rejected")
            }
        }
        // New objects that need nothing of a context go to the store in batch inserts.
        if bulkWorthTrying, kinds.contains(where: \.bulk) { try insertInBulk(&batch) }
        // The others become objects, with their values and parents.
        for index in batch.indices where batch[index].reject == nil && batch[index].bulkID == nil {
            let kind = kinds[batch[index].kind]
            let object = context.insertNewObject(forEntityName: kind.mapper.entity.name)
            for (attribute, value) in zip(kind.mapper.attributes, batch[index].mapped.values) {
                object[attributeAt: attribute] = value
            }
            if let parent = batch[index].parent, let relationship = kind.parentRelationship,
                let parentObject = batch[parent].object ?? batch[parent].bulkID.map(context.object(with:))
            {
                object.setRelatedObject(parentObject, forKey: relationship)
            }
            batch[index].object = object
        }
        // Lookups: the batch's keys of each lookup resolved together. A must-exist key that finds
        // nothing makes its record's group wait for the parent to arrive (until the final try).
        var waitingTops = Set<Int>()
        for (kindIndex, kind) in kinds.enumerated() where !kind.resolvers.isEmpty {
            let members = batch.indices.filter { batch[$0].kind == kindIndex && batch[$0].object != nil }
            for (lookupIndex, resolver) in kind.resolvers.enumerated() where !members.isEmpty {
                let keys = members.map { kind.mapper.key(lookupIndex, of: batch[$0].mapped) }
                let found = try resolver.resolve(keys, in: context)
                for (position, index) in members.enumerated() {
                    // A record an earlier lookup rejected has left the context: link nothing to it.
                    guard let key = keys[position], batch[index].reject == nil else { continue }
                    if let destination = found[position] {
                        batch[index].object?.setRelatedObject(destination, forKey: resolver.lookup.relationship)
                    } else if !final && batch[batch[index].top].bulkID == nil {
                        waitingTops.insert(batch[index].top)
                    } else {
                        let described = zip(resolver.lookup.key, key).map { "\($0.attribute) = \($1)" }.joined(
                            separator: ", ")
                        rejectItem(
                            &batch, index, property: resolver.lookup.relationship, rule: "lookup",
                            message: "no \(resolver.entity.name) with \(described)")
                    }
                }
            }
        }
        var waiting: [PendingRecords.Group] = []
        if !waitingTops.isEmpty {
            var groupOfTop: [Int: Int] = [:]
            for index in batch.indices where waitingTops.contains(batch[index].top) {
                if let object = batch[index].object { discard(object) }
                batch[index].waits = true
                batch[index].reject = nil  // judged again when the group is tried again
                let top = batch[index].top
                if groupOfTop[top] == nil, let origin = batch[top].origin {
                    groupOfTop[top] = waiting.count
                    waiting.append(.init(origin: origin, records: []))
                }
                if let group = groupOfTop[top] { waiting[group].records.append(batch[index].record) }
            }
        }
        waitingOrigins = waiting.map(\.origin)
        resolvedOrigins =
            retried.map { origins in
                let still = Set(waitingOrigins)
                return origins.filter { !still.contains($0) }
            } ?? []
        try save(&batch)
        if retried != nil { shared.pending.putBack(waiting) } else { shared.pending.add(waiting) }
        let saved = lastSave.take()
        let inserted = Set(saved?.inserted ?? []), updated = Set(saved?.updated ?? [])
        var rejected: [RecordReject] = []
        var byKind = [RunReport.Counts](repeating: .init(), count: kinds.count)
        for index in batch.indices where !batch[index].waits {
            let kind = batch[index].kind
            if let reject = batch[index].reject {
                counts[reject.entity, default: .init()].rejected += 1
                rejected.append(reject)
            } else if batch[index].bulkID != nil {
                byKind[kind].inserted += 1
            } else if let object = batch[index].object {
                if inserted.contains(object.objectID) {
                    byKind[kind].inserted += 1
                } else if updated.contains(object.objectID) {
                    byKind[kind].updated += 1
                } else {
                    byKind[kind].unchanged += 1
                }
            }
        }
        for (kind, kindCounts) in byKind.enumerated() where kindCounts != RunReport.Counts() {
            counts[kinds[kind].mapper.entity.name, default: .init()].add(kindCounts)
        }
        context.reset()
        for kind in kinds { for resolver in kind.resolvers { resolver.reset() } }
        try shared.add(counts, rejected: rejected)
    }

    // MARK: Batch inserts

    /// Whether records of `entity` setting `relationships` can be written by batch inserts: the store
    /// takes them, no checkpoint must commit with the save, the relationships are to-ones a foreign
    /// key says everything of (`BatchInsertRequest.canSet`), no count rule of a to-many could be
    /// broken by a new member, and no to-many of the new object has a minimum checked at the save.
    private func canInsertInBulk(_ entity: EntityDescription, setting relationships: [String]) -> Bool {
        guard checkpoint == nil, context.persistentStoreCoordinator.supportsBatchInsert(for: entity) else {
            return false
        }
        for name in relationships {
            guard let relationship = entity.relationship(named: name), BatchInsertRequest.canSet(relationship),
                relationship.inverse?.maxCount == nil
            else { return false }
        }
        return entity.relationships.allSatisfy { relationship in
            guard relationship.isToMany else { return true }
            let minimum = relationship.effectiveMinCount ?? 0
            return relationship.maxCount == nil && (minimum == 0 || context.deferredValidationRules.contains(.minCount))
        }
    }

    /// Writes the batch's new objects straight to the store (`BatchInsertRequest`), a kind at a time,
    /// parents before children. A group (a top-level record and its children) goes this way when
    /// every record of it maps, belongs to a kind that can, finds every lookup's destination stored,
    /// and passes the attribute and required-relationship rules; an object that meets a stored key
    /// (a re-import, a duplicate in the input) is left to the context, whose merge policy decides —
    /// with its children. What stays behind is imported through the context as before.
    private func insertInBulk(_ batch: inout [Item]) throws {
        let coordinator = context.persistentStoreCoordinator
        var groupOK: [Int: Bool] = [:]
        for item in batch where item.reject != nil || !kinds[item.kind].bulk { groupOK[item.top] = false }
        // Each kind's candidates in a request, their lookups resolved to stored IDs.
        var requests: [(members: [Int], request: BatchInsertRequest)] = []
        for (kindIndex, kind) in kinds.enumerated() {
            let members = batch.indices.filter { batch[$0].kind == kindIndex && groupOK[batch[$0].top] == nil }
            var request = BatchInsertRequest(entity: kind.mapper.entity, capacity: members.count)
            guard kind.bulk, !members.isEmpty else {
                requests.append(([], request))
                continue
            }
            for index in members {
                let object = request.appendObject()
                for (attribute, value) in zip(kind.mapper.attributes, batch[index].mapped.values) {
                    request[object, attribute] = value
                }
            }
            for (lookupIndex, resolver) in kind.resolvers.enumerated() {
                let mapper = kind.mapper
                let found: [ManagedObjectID?], hasKey: [Bool]
                if mapper.hasSingleKey(lookupIndex) {
                    let values = members.map { mapper.singleKey(lookupIndex, of: batch[$0].mapped) }
                    found = try resolver.resolveIDs(values: values, in: coordinator)
                    hasKey = values.map { $0 != nil }
                } else {
                    let keys = members.map { mapper.key(lookupIndex, of: batch[$0].mapped) }
                    found = try resolver.resolveIDs(keys, in: coordinator)
                    hasKey = keys.map { $0 != nil }
                }
                let relationship = mapper.entity.relationship(named: resolver.lookup.relationship)!.index
                for (object, index) in members.enumerated() {
                    if hasKey[object] && found[object] == nil { groupOK[batch[index].top] = false }
                    request.setDestination(found[object], relationship: relationship, of: object)
                }
            }
            if let name = kind.parentRelationship, let relationship = kind.mapper.entity.relationship(named: name) {
                // Stands in for the parent's ID (known once the parent is written) so the check passes.
                let placeholder = ManagedObjectID(
                    entityName: relationship.destinationEntityName, storeIdentifier: nil, reference: .temporary(0))
                for object in members.indices {
                    request.setDestination(placeholder, relationship: relationship.index, of: object)
                }
            }
            for (object, index) in members.enumerated() where !request.isValid(object) {
                groupOK[batch[index].top] = false
            }
            requests.append((members, request))
        }
        // Write them, parents first; an object whose parent was not written stays behind with it.
        var attempted = 0, refused = 0
        for (kindIndex, (members, full)) in requests.enumerated() where !members.isEmpty {
            let parentRelationship = kinds[kindIndex].parentRelationship.flatMap {
                full.entity.relationship(named: $0)?.index
            }
            let kept = members.indices.filter { object in
                let index = members[object]
                guard groupOK[batch[index].top] == nil else { return false }
                if let parent = batch[index].parent { return batch[parent].bulkID != nil }
                return true
            }
            guard !kept.isEmpty else { continue }
            var request = full
            if kept.count != members.count {
                request = BatchInsertRequest(entity: full.entity, capacity: kept.count)
                for object in kept {
                    let copy = request.appendObject()
                    for attribute in full.entity.attributes {
                        request[copy, attribute.index] = full[object, attribute.index]
                    }
                    for relationship in full.entity.relationships where !relationship.isToMany {
                        request.setDestination(
                            full.destination(relationship: relationship.index, of: object),
                            relationship: relationship.index, of: copy)
                    }
                }
            }
            if let parentRelationship {
                for (copy, object) in kept.enumerated() {
                    request.setDestination(
                        batch[batch[members[object]].parent!].bulkID, relationship: parentRelationship, of: copy)
                }
            }
            let ids = try coordinator.execute(request)
            for (copy, object) in kept.enumerated() { batch[members[object]].bulkID = ids[copy] }
            // Lookups of later records and sources find these objects without asking the store.
            for (attribute, known) in insertedKeys[kindIndex] {
                known.remember(values: (0..<request.count).map { request[$0, attribute] }, objectIDs: ids)
            }
            attempted += kept.count
            refused += ids.lazy.filter { $0 == nil }.count
        }
        // Mostly stored keys (a re-import): the context's merge is the way for the rest of the source.
        if attempted >= 64 && refused * 4 > attempted { bulkWorthTrying = false }
    }

    /// Saves the batch; records whose objects fail validation or break a key under `merge: error`
    /// are rejected with those failures and the save is tried again without them.
    private func save(_ batch: inout [Item]) throws {
        while true {
            do {
                if let checkpoint {
                    try checkpoint.save(context, batch: batchNumber, waiting: waitingOrigins, resolved: resolvedOrigins)
                } else {
                    try context.save()
                }
                return
            } catch let error as ValidationError {
                var progressed = false
                for failure in error.failures {
                    guard let index = owner(of: failure.objectID, in: batch) else { continue }
                    let field = failure.key.flatMap {
                        kinds[batch[index].kind].mapper.field(of: $0, in: batch[index].record)
                    }
                    rejectItem(
                        &batch, index, property: failure.key ?? failure.entityName, rule: "\(failure.rule)",
                        message: failure.message,
                        raw: field?.raw ?? failure.value, position: field?.position)
                    progressed = true
                }
                if !progressed { throw RunError.store("a batch of \(source.name) cannot be saved: \(error)") }
            } catch let error as MergeError {
                var progressed = false
                for conflict in error.constraintConflicts {
                    for id in [conflict.objectID] + conflict.otherObjectIDs {
                        guard let index = owner(of: id, in: batch) else { continue }
                        rejectItem(
                            &batch, index, property: conflict.keyNames.joined(separator: ", "), rule: "unique",
                            message: "\(conflict)")
                        progressed = true
                    }
                }
                if !progressed { throw RunError.store("a batch of \(source.name) cannot be saved: \(error)") }
            }
        }
    }

    /// The item whose object has `objectID`, or whose lookup created that object.
    private func owner(of objectID: ManagedObjectID, in batch: [Item]) -> Int? {
        if let index = batch.indices.first(where: {
            batch[$0].reject == nil && !batch[$0].waits && batch[$0].object?.objectID == objectID
        }) {
            return index
        }
        return batch.indices.first { index in
            guard batch[index].reject == nil, !batch[index].waits, let object = batch[index].object else {
                return false
            }
            return object.entity.relationships.contains {
                !$0.isToMany && object.relatedObject(forKey: $0.name)?.objectID == objectID
            }
        }
    }

    /// Takes an object of the batch out of the context: unlinked from the destinations lookups gave
    /// it first (stored destinations are faults whose to-many edits would keep it), then deleted.
    private func discard(_ object: ManagedObject) {
        guard !object.isDeleted else { return }
        for relationship in object.entity.relationships
        where !relationship.isToMany && object.relatedObject(forKey: relationship.name) != nil {
            object.setRelatedObject(nil, forKey: relationship.name)
        }
        context.delete(object)
    }

    /// Rejects an item: its object (and its nested children's) leave the context.
    private func rejectItem(
        _ batch: inout [Item], _ index: Int, property: String, rule: String, message: String, raw: String? = nil,
        position: SourcePosition? = nil
    ) {
        let failure = RejectFailure(
            property: property, raw: raw, rule: rule, message: message,
            position: position ?? batch[index].record.position)
        if batch[index].reject == nil {
            batch[index].reject = RecordReject(
                source: source.name, entity: kinds[batch[index].kind].mapper.entity.name,
                position: batch[index].record.position,
                failures: [failure])
        } else {
            batch[index].reject!.failures.append(failure)
        }
        if let object = batch[index].object { discard(object) }
        for child in batch.indices where batch[child].parent == index && batch[child].reject == nil {
            rejectItem(
                &batch, child, property: kinds[batch[child].kind].parentRelationship ?? "", rule: "parent",
                message: "its parent record was rejected")
        }
    }
}
