import Foundation
import Readers

/// The run's accounting: per-entity counts (read, inserted, updated, unchanged, rejected) and the
/// rejected records, written to the rejects file as each batch finishes. Shared by a run's
/// contexts; every call takes the lock.
final class RejectsCollector: @unchecked Sendable {
    // @unchecked: `report` and `file` are only touched with `lock` held.
    private let lock = NSLock()
    private var report = RunReport()
    private var file: RejectsFile
    private var first: [RecordReject] = []

    /// - Parameters:
    ///   - fresh: the path is the run's own time-stamped name (`RejectsFile`).
    ///   - entities: the names counts are kept under, each listed even when nothing is read for it
    ///     (an empty table says `0 read`).
    ///   - provisional: the attempt may be thrown away (`RejectsFile`, `confirm()`).
    init(rejectsPath: String?, fresh: Bool = false, entities: [String] = [], provisional: Bool = false) {
        file = RejectsFile(path: rejectsPath, fresh: fresh, provisional: provisional)
        for entity in entities { report.entities[entity] = RunReport.Counts() }
    }

    /// The counts so far.
    var currentReport: RunReport { lock.withLock { report } }

    /// The first rejected records (at most 3), for the message of a failed run.
    var firstRejects: [RecordReject] { lock.withLock { first } }

    /// The rejects file, once a rejected record made it.
    var path: String? { lock.withLock { report.rejected > 0 ? file.path : nil } }

    /// Adds a batch's counts and writes its rejected records.
    /// - Throws: `RunError.file` when the rejects file cannot be written.
    func add(_ counts: [String: RunReport.Counts], rejected: [RecordReject]) throws {
        try lock.withLock {
            for (entity, batch) in counts { report.entities[entity, default: .init()].add(batch) }
            report.rejected += rejected.count
            // In input order: a batch's value failures are found before its lookup failures.
            let ordered = rejected.sorted(by: Self.inputOrder)
            first = Array((first + ordered.prefix(3)).sorted(by: Self.inputOrder).prefix(3))
            for reject in ordered { try file.write(reject) }
        }
    }

    /// Whether `a` comes before `b` in the inputs: by file, record (or line), column.
    static func inputOrder(_ a: RecordReject, _ b: RecordReject) -> Bool {
        let (p, q) = (a.position, b.position)
        if p.file != q.file { return p.file < q.file }
        if (p.record ?? p.line) != (q.record ?? q.line) { return (p.record ?? p.line) < (q.record ?? q.line) }
        return p.column < q.column
    }

    /// Closes the rejects file (every line written is on disk once it returns).
    func close() throws { try lock.withLock { try file.close() } }
    /// The attempt stands: its rejects are the run's.
    func confirm() { lock.withLock { file.confirm() } }
    /// Throws the lines away: the run is to be run again (`RunSuperseded`).
    func discard() { lock.withLock { file.discard() } }
}
