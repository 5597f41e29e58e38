import ObjectGraph
import Readers

/// The map stage: each record of a batch becomes an item with its values converted for its
/// entity (`RecordMapper`), its place among the batch's groups (a top-level record and its nested
/// children) and, for a record that fails to map, its rejection with every failure.
struct MapStage {
    let scope: StageScope

    /// Maps a batch: records read now (batch `number` of the source), or records that waited for a
    /// parent (`number` nil, each top-level record's `origins` given). Records in `repeats` repeat
    /// a key of an earlier record of the source (where it appeared first): they are rejected, or
    /// left out where their SQL says `INSERT OR IGNORE` (counted unchanged).
    /// - Throws: `PipelineFileError` when the mapping names a field the records do not have;
    ///   `RunError.unmappedRecord`.
    func map(
        _ records: [Record], number: Int?, origins: [PendingRecords.Origin]?,
        repeats: [Int: KeyRepeats.Repeat] = [:], readAgain: [Bool]? = nil
    ) throws -> ImportBatch {
        let kinds = scope.kinds
        var batch = ImportBatch(number: number, retried: origins)
        batch.items.reserveCapacity(records.count)
        let hasChildren = !scope.source.mapping.children.isEmpty
        var byNumber: [Int: Int] = [:]  // record number → item index (for children)
        var topLevel = 0
        for (offset, record) in records.enumerated() {
            let kind = try kinds.kind(of: record)
            let mapper = kinds[kind].mapper
            var item = ImportBatch.Item(record: record, mapped: MappedRecord(), kind: kind)
            if kinds[kind].isNested {
                guard let parentNumber = record.parentRecord, let parent = byNumber[parentNumber] else { continue }
                item.parent = parent
                item.top = batch.items[parent].top
            } else {
                item.origin =
                    origins?[topLevel]
                    ?? PendingRecords.Origin(source: scope.sourceIndex, batch: number ?? 0, record: topLevel)
                item.top = batch.items.count
                topLevel += 1
            }
            // Read now: a batch's records, or waiting ones a resumed run read again from its checkpoint
            // (a nested record goes with the top-level record before it).
            let isRead = origins == nil || (topLevel > 0 && readAgain?[topLevel - 1] == true)
            if isRead {
                if kind >= batch.readByKind.count {
                    batch.readByKind += repeatElement(0, count: kind + 1 - batch.readByKind.count)
                }
                batch.readByKind[kind] += 1
            }
            let repeated = repeats.isEmpty ? nil : repeats[offset]
            if repeated != nil, record.conflict == .ignore {
                batch.ignoredByKind[kind, default: 0] += 1  // SQLite keeps the earlier row, as here
                continue
            }
            do {
                guard let mapped = try mapper.map(record) else {
                    if isRead { batch.filteredByKind[kind, default: 0] += 1 }  // left out by `where`
                    continue
                }
                item.mapped = mapped
                if kinds[kind].requiresKey, let places = kinds[kind].keyPlaces,
                    places.contains(where: { mapped.values[$0].isNull })
                {
                    let empty = zip(scope.source.mapping.key, places).filter { mapped.values[$1].isNull }.map(\.0)
                    item.reject = keyless(record, mapper, empty: empty)
                }
            } catch {
                item.reject = error
            }
            if let repeated {
                item.reject = self.repeated(record, first: repeated, mapper: mapper, into: item.reject)
            }
            if hasChildren, let number = record.number { byNumber[number] = batch.items.count }
            batch.items.append(item)
        }
        // A record whose parent record was rejected goes with it.
        for index in batch.items.indices {
            if let parent = batch.items[index].parent, batch.items[parent].reject != nil,
                batch.items[index].reject == nil
            {
                scope.rejectWithParent(&batch, index)
            }
        }
        return batch
    }

    /// The rejection of a record whose key is empty, or some part of it (`empty`): no run could find
    /// it again by that key, so every run would store it anew.
    private func keyless(_ record: Record, _ mapper: RecordMapper, empty: [String]) -> RecordReject {
        let key = scope.source.mapping.key
        let said =
            empty.count == key.count
            ? "has no key (\(key.joined(separator: ", ")) empty)"
            : "has part of its key empty (\(empty.joined(separator: ", ")) of \(key.joined(separator: ", ")))"
        return RecordReject(
            source: scope.source.name, entity: mapper.reportName, position: record.position,
            failures: [
                RejectFailure(
                    property: key.joined(separator: ", "), raw: nil, rule: "key",
                    message: "\(said): a record without its whole key could never be found again, and every run "
                        + "would store it anew", position: record.position)
            ])
    }

    /// The rejection of a record repeating a key: the key, where it appeared first, what to do.
    private func repeated(
        _ record: Record, first repeated: KeyRepeats.Repeat, mapper: RecordMapper, into reject: RecordReject?
    ) -> RecordReject {
        let mapping = scope.source.mapping
        let key = mapping.repeatKeys[repeated.key], first = repeated.first
        let described = key.map { part in
            let field = record.schema.map { $0.index(of: part.from) } ?? Int(part.from).map { $0 - 1 }
            let raw = field.flatMap { $0 >= 0 && $0 < record.count ? record.string($0) : nil }
            return "\(part.name) = \(raw ?? "null")"
        }.joined(separator: ", ")
        // The source's key may repeat with `last-wins`; another uniqueness constraint never merges.
        let message =
            repeated.key == 0
            ? "the key \(described) appeared before in this input, at \(first); a key is imported once per run and "
                + "the first record stays (`duplicates: last-wins` on the source lets later ones update it)"
            : "\(described) appeared before in this input, at \(first), and \(mapping.entity) keeps "
                + "[\(key.map(\.name).joined(separator: ", "))] unique: the first record stays (only the source's key "
                + "may update an object)"
        let failure = RejectFailure(
            property: key.map(\.name).joined(separator: ", "), raw: nil, rule: "duplicate", message: message,
            position: record.position)
        var reject =
            reject
            ?? RecordReject(
                source: scope.source.name, entity: mapper.reportName, position: record.position, failures: [])
        reject.failures.append(failure)
        return reject
    }
}
