import Foundation
import Readers

/// Records whose parent has not arrived yet: a must-exist lookup found no object for their key, and
/// the key's object may still come later in the input or in a later source. Each waits as a group —
/// the top-level record and its nested children — and is imported again when parents may have
/// arrived: once as many records wait as a batch holds (and twice as many as after the last try),
/// at the end of every source, and a last time at the end of the run, where what still finds no
/// parent is rejected with its key. Shared by a run's workers under a lock.
final class PendingRecords: @unchecked Sendable {
    // @unchecked: `groups`, `recordCount` and `retryAt` are only touched with `lock` held.

    /// Where a waiting top-level record is in its input: source, batch and place among the batch's
    /// top-level records (what a checkpoint names, so a resumed run can read it again).
    struct Origin: Hashable, Comparable, Sendable, CustomStringConvertible, LosslessStringConvertible {
        var source: Int
        var batch: Int
        var record: Int

        init(source: Int, batch: Int, record: Int) {
            self.source = source
            self.batch = batch
            self.record = record
        }

        /// `source.batch.record`.
        init?(_ description: String) {
            let parts = description.split(separator: ".").compactMap { Int($0) }
            guard parts.count == 3 else { return nil }
            self.init(source: parts[0], batch: parts[1], record: parts[2])
        }

        init?<S: StringProtocol>(_ text: S) { self.init(String(text)) }

        var description: String { "\(source).\(batch).\(record)" }

        static func < (a: Origin, b: Origin) -> Bool { (a.source, a.batch, a.record) < (b.source, b.batch, b.record) }
    }

    /// A top-level record and its nested children.
    struct Group: Sendable {
        var origin: Origin
        var records: [Record]
    }

    private let lock = NSLock()
    private var groups: [Group] = []
    private var recordCount = 0
    private var retryAt: Int

    /// - Parameter retryAt: how many records must wait before a worker tries them again mid-source.
    init(retryAt: Int) {
        self.retryAt = max(1, retryAt)
    }

    var count: Int { lock.withLock { groups.count } }

    func add(_ waiting: [Group]) {
        guard !waiting.isEmpty else { return }
        // Kept past their batch: each record gets storage of its own, not the reader's shared buffer.
        let kept = waiting.map { Group(origin: $0.origin, records: $0.records.map { $0.compacted() }) }
        lock.withLock {
            groups += kept
            recordCount += kept.reduce(0) { $0 + $1.records.count }
        }
    }

    /// Every waiting group, by source; none wait afterwards.
    func takeAll() -> [Int: [Group]] {
        lock.withLock {
            defer {
                groups = []
                recordCount = 0
            }
            return Dictionary(grouping: groups, by: \.origin.source)
        }
    }

    /// Every waiting group when enough records wait to be worth trying again (and the next try is
    /// set at twice what is left), or nothing.
    func takeIfDue() -> [Int: [Group]]? {
        lock.withLock {
            guard recordCount >= retryAt else { return nil }
            defer {
                groups = []
                recordCount = 0
            }
            return Dictionary(grouping: groups, by: \.origin.source)
        }
    }

    /// Records put back after a try: the next try waits for twice as many.
    func putBack(_ waiting: [Group]) {
        lock.withLock {
            groups += waiting
            let back = waiting.reduce(0) { $0 + $1.records.count }
            recordCount += back
            retryAt = max(retryAt, 2 * back)
        }
    }
}
