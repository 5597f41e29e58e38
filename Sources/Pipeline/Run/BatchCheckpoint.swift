import Foundation
import ObjectGraph
import Readers

/// `commit: batches`: every batch's save commits, and with it — in the same transaction — a
/// checkpoint in the target's metadata (`sluice.checkpoint`): which pipeline, which source, how many
/// of its batches are done from the first on, which later ones are done too (contexts finish
/// batches out of order), and which records of done batches still wait for a parent (`Origin`s:
/// they are in no store yet). `--resume` reads those records again, skips the sources and batches
/// the checkpoint names and goes on; the checkpoint is removed when the run ends.
final class BatchCheckpoint: @unchecked Sendable {
    // @unchecked: `sourceIndex`, `prefix`, `done` and `pending` are only touched with `lock` held.
    static let key = "sluice.checkpoint"

    /// Where an interrupted run stopped.
    struct Position: Equatable {
        var pipeline: String
        var sourceIndex: Int
        /// Batches `0..<batches` are done…
        var batches: Int
        /// …and these after them.
        var alsoDone: Set<Int> = []
        /// Records of done batches waiting for their parent.
        var pending = WaitingOrigins()
        /// What each source's input was (`InputIdentity`, `-` for standard input), by source; `nil`
        /// in a checkpoint of a version that did not record them.
        var inputs: [String]?
    }

    private let lock = NSLock()
    private let coordinator: PersistentStoreCoordinator
    private let store: any PersistentStore
    let pipeline: String
    private var sourceIndex = 0
    private var prefix = 0
    private var done = Set<Int>()
    private var pending = WaitingOrigins()
    /// The checkpoint's `inputs=` part: what the run reads, by source.
    let inputs: [String]

    init(coordinator: PersistentStoreCoordinator, store: any PersistentStore, pipeline: String, inputs: [String]) {
        self.coordinator = coordinator
        self.store = store
        self.pipeline = pipeline
        self.inputs = inputs
    }

    /// What each source of `config` reads, as a checkpoint records it: the input's identity (its
    /// size and checksum), `-` for standard input, `?` for a file that cannot be read (the run
    /// then fails reading it).
    static func inputs(of config: PipelineConfig) -> [String] {
        var known: [String: String] = [:]
        return config.sources.map { source in
            if source.path == "-" { return "-" }
            if let identity = known[source.path] { return identity }
            let identity = (try? InputIdentity(ofFileAt: source.path)).map(\.description) ?? "?"
            known[source.path] = identity
            return identity
        }
    }

    /// A pipeline's identity for checkpoints: its file, its model, the sources' paths and the batch
    /// size (a resumed run must cut the same batches).
    static func identity(of config: PipelineConfig) -> String {
        var text = (try? String(contentsOfFile: config.file, encoding: .utf8)) ?? config.file
        text +=
            "\n\(config.model.versionHash)\n\(config.batchSize)\n" + config.sources.map(\.path).joined(separator: "\n")
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a, 64 bits
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }

    /// The checkpoint a store holds, if an interrupted run left one: `<pipeline> <source> <prefix>
    /// [later=<batch>,…] [pending=<source>.<batch>.<record>,…] [inputs=<identity>,…]`.
    static func position(in metadata: StoreMetadata) -> Position? {
        guard let text = metadata.userInfo[key] else { return nil }
        let parts = text.split(separator: " ")
        guard parts.count >= 3, let source = Int(parts[1]), let batches = Int(parts[2]) else { return nil }
        var position = Position(pipeline: String(parts[0]), sourceIndex: source, batches: batches)
        for part in parts.dropFirst(3) {
            if part.hasPrefix("later=") {
                position.alsoDone = Set(part.dropFirst(6).split(separator: ",").compactMap { Int($0) })
            } else if part.hasPrefix("pending=") {
                position.pending = WaitingOrigins(text: part.dropFirst(8))
            } else if part.hasPrefix("inputs=") {
                position.inputs = part.dropFirst(7).split(separator: ",", omittingEmptySubsequences: false).map(
                    String.init)
            }
        }
        return position
    }

    /// The records of done batches waiting for a parent: a bit per record of each batch, and each
    /// batch's part of the checkpoint text kept until the batch changes — a save costs what it
    /// changes, not what waits (a million waiting records made every save re-encode them all).
    /// Written as runs per batch: `0.3:0-499;0.4:2,7-9` (source 0, batch 3, places 0 to 499; batch 4,
    /// places 2 and 7 to 9). Whole batches often wait together.
    struct WaitingOrigins: Equatable {
        struct Batch: Hashable, Comparable {
            var source: Int
            var batch: Int
            static func < (a: Batch, b: Batch) -> Bool { (a.source, a.batch) < (b.source, b.batch) }
        }
        private var bits: [Batch: [UInt64]] = [:]
        private var texts: [Batch: String] = [:]

        init(_ origins: some Sequence<PendingRecords.Origin> = []) { update(adding: origins, removing: []) }

        /// The origins a checkpoint's `pending=` text names (each set as a bit: never a set of
        /// millions of origins in memory).
        init(text: some StringProtocol) {
            var added: [PendingRecords.Origin] = []
            for entry in text.split(separator: ";") {
                let halves = entry.split(separator: ":")
                let batch = halves.first?.split(separator: ".").compactMap { Int($0) } ?? []
                guard halves.count == 2, batch.count == 2 else { continue }
                for run in halves[1].split(separator: ",") {
                    let ends = run.split(separator: "-").compactMap { Int($0) }
                    guard let first = ends.first, let last = ends.last, first <= last else { continue }
                    added += (first...last).lazy.map {
                        PendingRecords.Origin(source: batch[0], batch: batch[1], record: $0)
                    }
                }
                update(adding: added, removing: [])
                added.removeAll(keepingCapacity: true)
            }
        }

        /// Whether `origin` waits.
        func contains(_ origin: PendingRecords.Origin) -> Bool {
            guard let words = bits[Batch(source: origin.source, batch: origin.batch)], origin.record / 64 < words.count
            else { return false }
            return words[origin.record / 64] & (1 << UInt64(origin.record % 64)) != 0
        }

        /// The sources whose records wait.
        var sources: [Int] { Set(bits.keys.map(\.source)).sorted() }

        /// The last batch of `source` holding a waiting record.
        func lastBatch(of source: Int) -> Int? { bits.keys.filter { $0.source == source }.map(\.batch).max() }

        /// `origins` now wait, `resolved` no longer.
        mutating func update(
            adding origins: some Sequence<PendingRecords.Origin>,
            removing resolved: some Sequence<PendingRecords.Origin>
        ) {
            var changed = Set<Batch>()
            for origin in resolved {
                let batch = Batch(source: origin.source, batch: origin.batch)
                guard var words = bits[batch], origin.record / 64 < words.count else { continue }
                words[origin.record / 64] &= ~(1 << UInt64(origin.record % 64))
                bits[batch] = words
                changed.insert(batch)
            }
            for origin in origins {
                let batch = Batch(source: origin.source, batch: origin.batch)
                var words = bits[batch] ?? []
                if words.count <= origin.record / 64 {
                    words += repeatElement(0, count: origin.record / 64 + 1 - words.count)
                }
                words[origin.record / 64] |= 1 << UInt64(origin.record % 64)
                bits[batch] = words
                changed.insert(batch)
            }
            for batch in changed {
                var records: [Int] = []
                for (word, value) in (bits[batch] ?? []).enumerated() where value != 0 {
                    for bit in 0..<64 where value & (1 << UInt64(bit)) != 0 { records.append(word * 64 + bit) }
                }
                guard !records.isEmpty else {
                    bits[batch] = nil
                    texts[batch] = nil
                    continue
                }
                var runs: [String] = [], start = 0
                while start < records.count {
                    var end = start
                    while end + 1 < records.count, records[end + 1] == records[end] + 1 { end += 1 }
                    runs.append(end == start ? "\(records[start])" : "\(records[start])-\(records[end])")
                    start = end + 1
                }
                texts[batch] = "\(batch.source).\(batch.batch):" + runs.joined(separator: ",")
            }
        }

        var isEmpty: Bool { texts.isEmpty }

        /// The checkpoint's text for them.
        var text: String { texts.sorted { $0.key < $1.key }.map(\.value).joined(separator: ";") }
    }

    /// A source starts, its first `skipped` batches and `alsoDone` already in the store (the records
    /// waiting stay as they are, or become `pending` when given: a resumed run).
    func begin(sourceIndex: Int, skipped: Int, alsoDone: Set<Int> = [], pending: WaitingOrigins? = nil) {
        lock.withLock {
            self.sourceIndex = sourceIndex
            prefix = skipped
            done = alsoDone
            if let pending { self.pending = pending }
            while done.contains(prefix) {
                done.remove(prefix)
                prefix += 1
            }
        }
    }

    /// Saves `context` with the checkpoint in the same transaction: batch `number` of the current
    /// source done (none for a retry of waiting records), the records of `waiting` now waiting and
    /// those of `resolved` no longer. If the save fails the checkpoint stays as it was.
    func save(
        _ context: ManagedObjectContext, batch number: Int?, waiting: [PendingRecords.Origin] = [],
        resolved: [PendingRecords.Origin] = []
    ) throws {
        try coordinator.performAndWait {
            let (claim, before) = lock.withLock { () -> (String, StoreMetadata) in
                var claimed = done.union(number.map { [$0] } ?? []), prefix = self.prefix
                while claimed.contains(prefix) {
                    claimed.remove(prefix)
                    prefix += 1
                }
                var text = "\(pipeline) \(sourceIndex) \(prefix)"
                if !claimed.isEmpty { text += " later=" + claimed.sorted().map(String.init).joined(separator: ",") }
                var waits = pending
                waits.update(adding: waiting, removing: resolved)
                if !waits.isEmpty { text += " pending=" + waits.text }
                text += " inputs=" + inputs.joined(separator: ",")
                return (text, coordinator.metadata(for: store))
            }
            var metadata = before
            metadata.userInfo[Self.key] = claim
            coordinator.setMetadata(metadata, for: store)
            do {
                try context.save()
            } catch {
                coordinator.setMetadata(before, for: store)
                throw error
            }
            lock.withLock {
                if let number { done.insert(number) }
                while done.contains(prefix) {
                    done.remove(prefix)
                    prefix += 1
                }
                pending.update(adding: waiting, removing: resolved)
            }
        }
    }

    /// The run is complete: the checkpoint goes.
    func finish() throws {
        var metadata = coordinator.metadata(for: store)
        guard metadata.userInfo.removeValue(forKey: Self.key) != nil else { return }
        coordinator.setMetadata(metadata, for: store)
        try coordinator.saveMetadata()
    }
}
