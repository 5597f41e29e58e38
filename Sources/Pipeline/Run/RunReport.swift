import Foundation
import ObjectGraph
import Readers

/// What a run did, per entity and in all.
public struct RunReport: Sendable, Codable {
    public struct Counts: Sendable, Codable, Equatable {
        /// Records mapped onto the entity (children and objects created by lookups not included).
        public var read = 0
        /// Objects of those records saved as new rows.
        public var inserted = 0
        /// Objects of those records that became updates of stored rows (by key, through the merge
        /// policy) and changed them.
        public var updated = 0
        /// Objects of those records equal to the stored rows they met: nothing written.
        public var unchanged = 0
        public var rejected = 0
        /// Records a source's `where` left out (read = inserted + updated + unchanged + rejected +
        /// filtered).
        public var filtered = 0
        /// Stored objects deleted: by `mode: replace` or `mode: sync`, or by the delete rules of
        /// those deletions (stored before + inserted − deleted = stored after).
        public var deleted = 0

        /// Whether every record read is accounted for: read = inserted + updated + unchanged +
        /// rejected + filtered (true of every entity once a run has ended well).
        public var isBalanced: Bool { read == inserted + updated + unchanged + rejected + filtered }

        mutating func add(_ other: Counts) {
            read += other.read
            inserted += other.inserted
            updated += other.updated
            unchanged += other.unchanged
            rejected += other.rejected
            filtered += other.filtered
            deleted += other.deleted
        }
    }
    public var entities: [String: Counts] = [:]
    /// Every entity's counts added up.
    public var totals: Counts { entities.values.reduce(into: Counts()) { $0.add($1) } }
    public var rejected = 0
    public var seconds = 0.0
    /// Where the time went, in order: `target` (the lock and the work copy), one entry per source
    /// (named after it), then the final stage's
    /// `indexes` (built after the load), `validation` (the whole graph) and `commit`.
    public var stages: [Stage] = []
    public var peakRSSMegabytes = 0.0

    public init() {}

    public struct Stage: Sendable, Codable, Equatable {
        public var name: String
        public var seconds: Double
    }
}
