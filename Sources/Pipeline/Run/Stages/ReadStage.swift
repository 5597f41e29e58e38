import Foundation
import Readers

/// The read stage of a pass: opens its file's reader and cuts the records into batches of
/// `batch.size` top-level records (a record's nested children stay in its batch) — fewer when their
/// bytes reach `ReadStage.batchBytes` — handed to the contexts through a queue bounded in batches and
/// in bytes. Runs on the pass's reading thread.
///
/// A pass may read several consecutive sources of one file (`SourcePass.sharesPass`): a top-level
/// record of another source of the pass ends the current source's batch, and is handed over once
/// every batch before it is done (so its lookups find what the sources before it wrote).
struct ReadStage {
    /// A batch of records of one source of the pass (0: the first, then the ones read alongside),
    /// its number in that source (from 0), the records repeating a key of an earlier record of the
    /// source (by index in `records`: where the key appeared first), and the rejections of the CSV
    /// records read among them that the reader could not read as records (a short or long row, a
    /// misplaced quote, invalid text: the reader goes on with the next one). The contexts write
    /// batches in the order they are handed over, so whatever wins or is rejected never depends on
    /// which context was faster.
    struct Batch: Sendable {
        var part: Int
        var number: Int
        var records: [Record]
        var repeats: [Int: KeyRepeats.Repeat]
        var unreadable: [RecordReject]
    }

    /// The pass's sources, with their places in the pipeline.
    let parts: [(source: PipelineConfig.Source, index: Int)]
    let batchSize: Int
    /// Batches of the first source already in the store (`--resume`): read past, not imported —
    /// the first `skippedBatches`, and `alsoDone`.
    var skippedBatches = 0
    var alsoDone: Set<Int> = []

    private var source: PipelineConfig.Source { parts[0].source }

    /// A batch ends before a top-level record once its records weigh this much (`weight(of:)`): a
    /// batch of a few huge records, or of a very large `batch.size`, holds no more than that.
    static let batchBytes = 8 << 20

    /// What a record costs in memory while its batch is imported, about: its bytes, and the object,
    /// snapshot and row it becomes (measured: some 500 bytes for a small record).
    @inline(__always)
    static func weight(of record: Record) -> Int { record.totalByteCount + 512 }
    /// The bytes of the batches handed over and not yet imported (the reading thread waits beyond
    /// it): with the batch being read, what a pass holds of its records at once.
    static let queuedBytes = 32 << 20

    /// Where batches end, the same way whenever a source is read (a resumed run finds the batches
    /// its checkpoint names): before a top-level record, once the batch holds `size` of them or
    /// its records hold `ReadStage.batchBytes`.
    struct BatchCut {
        let size: Int
        /// The batch the last top-level record went in, and its place there.
        private(set) var number = -1
        private(set) var place = -1
        private(set) var bytes = 0

        init(size: Int) { self.size = size }

        /// Whether a top-level record would start a new batch (the current one is full).
        var isFull: Bool { Self.isFull(topLevel: place + 1, weight: bytes, size: size) }

        /// The rule: a batch of `topLevel` records weighing `weight` takes no more top-level records.
        @inline(__always)
        static func isFull(topLevel: Int, weight: Int, size: Int) -> Bool {
            topLevel >= size || (topLevel > 0 && weight >= ReadStage.batchBytes)
        }

        /// Notes a record read; `true` when it is top-level and starts a new batch.
        @inline(__always)
        mutating func add(_ record: Record) -> Bool {
            var starts = false
            if record.parentRecord == nil {
                if number < 0 || isFull {
                    number += 1
                    place = -1
                    bytes = 0
                    starts = true
                }
                place += 1
            }
            bytes += ReadStage.weight(of: record)
            return starts
        }
    }

    init(parts: [(source: PipelineConfig.Source, index: Int)], batchSize: Int) {
        self.parts = parts
        self.batchSize = batchSize
    }

    /// Reads the pass into `queue` until the input ends or `isCancelled` says so; `seconds` gets
    /// the time spent on each source but the last (which ends when its batches are done).
    /// - Throws: `RunError.input` with the reader's error and position.
    func read(
        into queue: BoundedQueue<Batch>, progress: RunProgress, seconds: inout [Double], isCancelled: () -> Bool
    ) throws {
        var reader = try openReader(progress: progress)
        let partOfKind = partsByKind()
        var batch = OpenBatch(
            parts: parts.count, batchSize: batchSize, skippedBatches: skippedBatches, alsoDone: alsoDone)
        // Found here, in input order, so that which of two records with one key is first never
        // depends on timing.
        let keyRepeats = parts.map { KeyRepeats($0.source) }
        var mark = Date()
        // Records of one kind share their reader context: the last one's part answers most records.
        var lastKind: (context: Record.Context, part: Int?)?
        while !isCancelled() {
            // Read on only while the batches handed over weigh less than the queue holds: a huge
            // record is not read while the one before it is still being imported (asked as a batch
            // starts, and after a heavy record: never a lock per small record).
            if batch.records.isEmpty || batch.lastWasHeavy {
                guard queue.waitForRoom() else { return }
            }
            let next: Record?
            do {
                next = try reader.next()
            } catch let error as ReaderError where error.isRecoverable && [.csv, .json, .jsonl].contains(source.format)
            {
                guard let position = error.position else { throw inputError(error) }
                batch.unreadable.append(unreadableReject(error, at: position, part: batch.part))
                // Many unreadable rows in a row are handed over a batch at a time, on their own.
                guard batch.handUnreadableWhenFull(to: queue) else { return }
                continue
            } catch {
                throw inputError(error)
            }
            guard let record = next else { break }
            if record.parentRecord == nil {
                if parts.count > 1, lastKind?.context !== record.context {
                    lastKind = (record.context, partOfKind[kindKey(record.kind ?? "")])
                }
                if let next = lastKind?.part, next != batch.part {
                    if !batch.isEmpty { guard batch.hand(to: queue, progress: progress) else { return } }
                    queue.waitUntilFinished()
                    let now = Date()
                    seconds[batch.part] += now.timeIntervalSince(mark)
                    mark = now
                    batch.part = next
                    progress.switchTo(source: parts[batch.part].source.name)
                }
                if batch.isFull { guard batch.hand(to: queue, progress: progress) else { return } }
                batch.topLevel += 1
                // An update of an earlier record (`last-wins`) needs nothing here: batches are
                // written in input order.
                if case .repeated(let repeated)? = keyRepeats[batch.part]?.repeated(record) {
                    batch.repeats[batch.records.count] = repeated
                }
            }
            batch.records.append(record)
            let weight = Self.weight(of: record)
            batch.bytes += weight
            batch.lastWasHeavy = weight >= Self.batchBytes / 8
            // A full batch goes as soon as no child of its records can follow, so that the next record
            // is not read while this batch waits (a huge record is not held next to another).
            if batch.isFull, !reader.nextMayBeChild { guard batch.hand(to: queue, progress: progress) else { return } }
        }
        if !batch.isEmpty { _ = batch.hand(to: queue, progress: progress) }
    }

    /// The batch `read` is filling, and the numbers of each part's batches so far.
    private struct OpenBatch {
        let batchSize: Int
        /// The part of the pass the batch's records belong to.
        var part = 0
        /// The next batch's number, by part.
        var numbers: [Int]
        var records: [Record] = []
        var topLevel = 0
        var bytes = 0
        /// Whether the last record read weighed an eighth of a batch or more.
        var lastWasHeavy = false
        var repeats: [Int: KeyRepeats.Repeat] = [:]
        var unreadable: [RecordReject] = []
        /// Batches of the first part already in the store (`--resume`): read, never handed over —
        /// the first `skippedBatches`, and `alsoDone`.
        let skippedBatches: Int
        let alsoDone: Set<Int>

        init(parts: Int, batchSize: Int, skippedBatches: Int, alsoDone: Set<Int>) {
            self.batchSize = batchSize
            numbers = Array(repeating: 0, count: parts)
            self.skippedBatches = skippedBatches
            records.reserveCapacity(Self.reserved(batchSize))
            self.alsoDone = alsoDone
        }

        /// The records a batch makes room for at once (a `batch.size` of millions grows as it fills).
        private static func reserved(_ batchSize: Int) -> Int { min(batchSize, 4_096) }

        /// Whether a top-level record starts the next batch.
        var isFull: Bool { BatchCut.isFull(topLevel: topLevel, weight: bytes, size: batchSize) }

        /// Whether the batch holds neither records nor unreadable ones.
        var isEmpty: Bool { records.isEmpty && unreadable.isEmpty }

        /// Hands the batch over and starts the next; `false` when the import was cancelled.
        mutating func hand(to queue: BoundedQueue<Batch>, progress: RunProgress) -> Bool {
            let hasRecords = !records.isEmpty
            defer {
                // A batch of unreadable records only is not numbered: the numbers count records.
                if hasRecords { numbers[part] += 1 }
                records = []
                records.reserveCapacity(Self.reserved(batchSize))
                topLevel = 0
                bytes = 0
                repeats = [:]
                unreadable = []
            }
            progress.read(records: records.count)
            let number = numbers[part]
            guard part != 0 || (number >= skippedBatches && !(hasRecords && alsoDone.contains(number))) else {
                return true  // imported before: the keys it holds are taken (`KeyRepeats`), nothing more
            }
            return queue.push(
                Batch(part: part, number: number, records: records, repeats: repeats, unreadable: unreadable),
                weight: bytes)
        }

        /// Hands the unreadable records over on their own once there are a batch of them; `false`
        /// when the import was cancelled.
        @inline(__always)
        mutating func handUnreadableWhenFull(to queue: BoundedQueue<Batch>) -> Bool {
            guard unreadable.count >= batchSize else { return true }
            let rows = Batch(part: part, number: numbers[part], records: [], repeats: [:], unreadable: unreadable)
            unreadable = []
            guard part != 0 || numbers[part] >= skippedBatches else { return true }  // rejected before
            return queue.push(rows)
        }
    }

    /// The part of the pass each record kind belongs to (the first part, when several read one kind).
    private func partsByKind() -> [String: Int] {
        var partOfKind: [String: Int] = [:]
        for (part, member) in parts.enumerated().reversed() {
            partOfKind[
                kindKey(member.source.format.isNested ? member.source.record ?? "/" : member.source.table ?? "")] =
                part
        }
        return partOfKind
    }

    /// A CSV record the reader could not read as a record, rejected for the source of `part`.
    private func unreadableReject(_ error: ReaderError, at position: SourcePosition, part: Int) -> RecordReject {
        let source = parts[part].source
        return RecordReject(
            source: source.name, entity: source.mapping.entity, position: position,
            failures: [
                RejectFailure(
                    property: "", raw: nil, rule: "\(error.kind)", message: error.message, position: position)
            ])
    }

    /// A record kind as the pass compares it: SQL table names as SQLite does (in any ASCII case).
    private func kindKey(_ kind: String) -> String {
        source.format == .sqldump || source.format == .sqlite ? TableSchema.sqlName(kind) : kind
    }

    /// `--resume`: reads again the records a checkpoint names as waiting for a parent (top-level
    /// records and their children) from the pass's first source, into `pending` as they are read
    /// (packed: a million of them never wait in memory as records). They count as read by this run.
    /// - Throws: `RunError.input`.
    func collect(_ origins: BatchCheckpoint.WaitingOrigins, into pending: PendingRecords) throws {
        let sourceIndex = parts[0].index
        guard let last = origins.lastBatch(of: sourceIndex) else { return }
        var reader = try openReader(progress: RunProgress())
        var cut = BatchCut(size: batchSize), current: PendingRecords.Group?
        while let record = try readNext(&reader) {
            _ = cut.add(record)
            if record.parentRecord == nil {
                if let current { pending.add([current]) }
                if cut.number > last { return }
                let origin = PendingRecords.Origin(source: sourceIndex, batch: cut.number, record: cut.place)
                current = origins.contains(origin) ? .init(origin: origin, records: [], readAgain: true) : nil
            }
            current?.records.append(record)
        }
        if let current { pending.add([current]) }
    }

    private func readNext(_ reader: inout any RecordReader) throws -> Record? {
        do { return try reader.next() } catch { throw inputError(error) }
    }

    /// A reader's failure as the run's: `RunError.input` with the `ReaderError` and its position.
    private func inputError(_ error: any Error) -> RunError {
        let reader =
            error as? ReaderError
            ?? ReaderError(.io, "\(error)", underlying: error)
        return .input(source: source.name, reader)
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
            case .json, .jsonl:
                return try JSONReader(
                    source: counted(), lines: source.format == .jsonl,
                    spec: source.mapping.recordSpec(path: source.record ?? "/"), limits: source.limits,
                    lastWins: source.lastWins)
            case .xml:
                return try XMLReader(
                    source: counted(), specs: parts.map { $0.source.mapping.recordSpec(path: $0.source.record ?? "/") },
                    namespaces: parts.reduce(into: [:]) { $0.merge($1.source.namespaces) { first, _ in first } },
                    limits: source.limits)
            case .sqldump:
                return try SQLDumpReader(
                    source: counted(),
                    tables: parts.count == 1 ? source.table.map { [$0] } : Set(parts.compactMap(\.source.table)),
                    limits: source.limits)
            case .sqlite:
                progress.begin(source: source.name, counter: nil, path: source.path)
                return try SQLiteFileReader(path: source.path, tables: source.table.map { [$0] }, limits: source.limits)
            }
        } catch {
            throw inputError(error)
        }
    }
}
