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

    /// A top-level record and its nested children; `readAgain`: read again by a resumed run from
    /// its checkpoint (counted as read by this run when first tried).
    struct Group: Sendable {
        var origin: Origin
        var records: [Record]
        var readAgain = false
    }

    /// Waiting groups of one source, packed (`PackedRecords`: a million small records fit in tens of
    /// megabytes) and read back a slice at a time.
    struct Waiting: Sendable {
        private var packed = PackedRecords()
        /// Where each group starts in `packed`: its origin's batch and record, its record count (twice
        /// it, plus one when read again from a checkpoint), then its records.
        private var starts: [Int] = []
        let source: Int
        private(set) var recordCount = 0

        init(source: Int) { self.source = source }

        var count: Int { starts.count }
        var isEmpty: Bool { starts.isEmpty }

        mutating func append(_ group: Group) {
            starts.append(packed.end)
            packed.append(integer: group.origin.batch)
            packed.append(integer: group.origin.record)
            packed.append(integer: group.records.count * 2 + (group.readAgain ? 1 : 0))
            for record in group.records { packed.append(record) }
            recordCount += group.records.count
        }

        func group(_ index: Int) -> Group {
            var offset = starts[index]
            let origin = origin(at: &offset)
            let count = packed.integer(at: &offset)
            return Group(
                origin: origin, records: (0..<count / 2).map { _ in packed.record(at: &offset) },
                readAgain: count % 2 == 1)
        }

        /// The groups of `range`, with their records.
        func groups(_ range: Range<Int>) -> [Group] { range.map(group) }

        /// The groups not taken yet (`takeNext`).
        private var taken = 0
        var remaining: Int { count - taken }

        /// The next `count` groups not taken yet, with their records; the memory of what was taken
        /// is freed as it goes (a try of a million waiting records never holds them twice).
        mutating func takeNext(_ count: Int) -> [Group] {
            let range = taken..<min(taken + count, starts.count)
            taken = range.upperBound
            defer { packed.release(before: taken < starts.count ? starts[taken] : packed.end) }
            return groups(range)
        }

        private func origin(at offset: inout Int) -> Origin {
            let batch = packed.integer(at: &offset)
            return Origin(source: source, batch: batch, record: packed.integer(at: &offset))
        }
    }

    private let lock = NSLock()
    private var waiting: [Int: Waiting] = [:]
    private var recordCount = 0
    private var retryAt: Int
    /// Records put back since the last take (a try puts back a batch at a time).
    private var putBackSinceTake = 0
    /// Whether a batch inserted objects since the last take: without new objects a try finds no
    /// more parents than the last (the end of each source tries again anyway).
    private var insertedSinceTake = true

    /// - Parameter retryAt: how many records must wait before a worker tries them again mid-source.
    init(retryAt: Int) {
        self.retryAt = max(1, retryAt)
    }

    var count: Int { lock.withLock { waiting.values.reduce(0) { $0 + $1.count } } }

    func add(_ groups: [Group]) {
        guard !groups.isEmpty else { return }
        lock.withLock {
            for group in groups {
                waiting[group.origin.source, default: Waiting(source: group.origin.source)].append(group)
                recordCount += group.records.count
            }
        }
    }

    /// A batch saved new objects: waiting records may find their parents now.
    func noteInserted() { lock.withLock { insertedSinceTake = true } }

    /// Whether records wait and objects were saved since they were last tried (else a try would
    /// find no parent the last did not).
    var worthTrying: Bool { lock.withLock { recordCount > 0 && insertedSinceTake } }

    /// Every waiting group, by source; none wait afterwards.
    func takeAll() -> [Int: Waiting] { lock.withLock { take() } }

    /// Every waiting group when enough records wait to be worth trying again — as many as a batch,
    /// or twice as many as the last try left — and objects were saved since, or nothing.
    func takeIfDue() -> [Int: Waiting]? {
        lock.withLock {
            guard recordCount >= retryAt, insertedSinceTake else { return nil }
            return take()
        }
    }

    private func take() -> [Int: Waiting] {
        defer {
            waiting = [:]
            recordCount = 0
            putBackSinceTake = 0
            insertedSinceTake = false
        }
        return waiting
    }

    /// Records put back after a try, a batch at a time: the next try waits for twice as many as the
    /// whole try left.
    func putBack(_ groups: [Group]) {
        lock.withLock {
            var back = 0
            for group in groups {
                waiting[group.origin.source, default: Waiting(source: group.origin.source)].append(group)
                back += group.records.count
            }
            recordCount += back
            putBackSinceTake += back
            retryAt = max(retryAt, 2 * putBackSinceTake)
        }
    }
}
