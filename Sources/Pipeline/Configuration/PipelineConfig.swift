import Foundation
import ModelFiles
import ObjectGraph
import Readers
import Stores
import Yams

/// A pipeline, read from its YAML file and checked against its model: what `sluice run` executes
/// and `sluice check` validates. Paths are absolute (resolved against the pipeline file's folder).
public struct PipelineConfig: Sendable {
    public enum StoreKind: String, Sendable {
        case sqlite, inMemory = "in-memory", xml, binary, postgres

        /// The registered store type of a target.
        public var storeType: String {
            switch self {
            case .xml: return "XML"
            case .binary: return "Binary"
            case .postgres: return "PostgreSQL"
            case .sqlite, .inMemory: return "SQLite"
            }
        }
    }
    public enum Commit: String, Sendable { case atomic, batches }

    public var file: String
    public var modelPath: String
    public var model: ManagedObjectModel
    /// The model file's text as the run read it (what the store records), and whether it is JSON;
    /// `nil` for an Xcode model.
    public var modelText: (text: String, isJSON: Bool)?
    public var store: StoreKind = .sqlite
    public var targetPath: String?
    /// `target.url` with `target.schema` as its `schema` parameter: the database of a postgres target
    /// (its password, if the URL holds one, stays in memory: `targetName` and saved pipelines leave
    /// it out).
    public var databaseURL: String?
    /// The target as messages name it: the store file, the database URL without its password, or
    /// "an in-memory store".
    public var targetName: String {
        switch store {
        case .inMemory: return "an in-memory store"
        case .postgres: return databaseURL.map(PostgresStore.redacted) ?? ""
        default: return targetPath ?? ""
        }
    }
    public var commit: Commit = .atomic
    /// `target.shared`: the SQLite file is another program's database; the store's tables go next
    /// to its own, which are never touched.
    public var sharesFile = false
    /// `target.lightweight_migration`: an existing SQLite store written with an older model gets the
    /// pipeline model's added entities and optional attributes (the store's option of that name).
    public var migratesLightly = false
    /// `target.layout`, `target.dates`, `target.version_column`: how a new SQLite target lays out its
    /// tables (the SQLite store's options of those names; an existing store keeps its own).
    public var layoutOptions: [String: String] = [:]

    /// The options the target store is opened with.
    public var storeOptions: [String: String] {
        var options = layoutOptions
        if sharesFile { options["shares_file"] = "true" }
        if migratesLightly { options["lightweight_migration"] = "true" }
        return options
    }
    public var batchSize = 5_000
    public var contexts = 2
    /// The most `batch.contexts` a pipeline may ask for (each holds a batch of objects in memory).
    public static let maxContexts = 64
    /// The most `batch.size` a pipeline may ask for.
    public static let maxBatchSize = 1_000_000
    public var merge: MergePolicy = .error
    public var maxErrors = 0
    public var rejectsPath: String?
    public var sources: [Source] = []

    /// One input and how its records become objects.
    public struct Source: Sendable {
        public var name: String
        public var format: InputFormat
        public var path: String
        public var csv = CSVDialect()
        /// The largest record the reader keeps (the pipeline's `limits`; for CSV also `csv.maxRecordBytes`).
        public var limits = ReaderLimits.standard
        /// XML: the record path (`/orders/order`); JSON: the path of the records' array (`/data/items`,
        /// `/` by default: the root's elements, or the root).
        public var record: String?
        /// JSON: a member given twice in one object is no error, the later one counts
        /// (`json: { repeated_members: last-wins }`); by default it rejects its record.
        public var lastWins = false
        /// XML: the namespace prefixes the paths use, bound to their URIs (`p: urn:example:orders`).
        /// A path step without a prefix matches its local name in any namespace.
        public var namespaces: [String: String] = [:]
        public var table: String?
        public var mapping: Mapping
        /// Where the source is declared in the pipeline file.
        public var line: Int
        /// What a record repeating a key of an earlier record of this source does.
        public var duplicates = Duplicates.reject
        /// How the records meet the stored objects of the entity (`mode:`).
        public var mode = LoadMode.merge
        /// `mode: sync`: the most stored objects of the entity a run may delete (`sync: { max_delete: }`).
        public var maxDelete = DeleteLimit.share(0.10)
    }

    /// How a source's records meet the stored objects of its entity.
    public enum LoadMode: String, Sendable, CaseIterable {
        /// A record meeting a stored object by key goes through the merge policy (the default).
        case merge
        /// Insert only: a record whose key is stored already is rejected, whatever the merge policy.
        case append
        /// The entity's stored objects are deleted before the records are read (their delete rules
        /// apply), in the same commit as the records' objects.
        case replace
        /// Merge, then delete the stored objects of the entity whose key no record held.
        case sync
    }

    /// How many stored objects a `sync` may delete: a count, or a share of the objects stored before.
    public enum DeleteLimit: Sendable, Equatable, CustomStringConvertible {
        case count(Int)
        case share(Double)

        /// `100` or `5%`; `nil` for anything else.
        public init?(_ text: String) {
            if text.hasSuffix("%") {
                guard let percent = Double(text.dropLast()), percent >= 0, percent <= 100 else { return nil }
                self = .share(percent / 100)
            } else {
                guard let count = Int(text), count >= 0 else { return nil }
                self = .count(count)
            }
        }

        /// Whether deleting `deletions` of `stored` objects stays within the limit.
        public func allows(_ deletions: Int, of stored: Int) -> Bool {
            switch self {
            case .count(let most): return deletions <= most
            case .share(let share): return Double(deletions) <= share * Double(stored)
            }
        }

        public var description: String {
            switch self {
            case .count(let most): return String(most)
            case .share(let share): return "\((share * 100).formatted(.number.precision(.fractionLength(0...2))))%"
            }
        }
    }

    /// A key that appears twice in one source: the later record is rejected naming the first
    /// (`reject`, the default: an upsert is for rows stored before the run), or updates the object
    /// the first made (`lastWins`).
    public enum Duplicates: String, Sendable {
        case reject
        case lastWins = "last-wins"
    }

    /// Records of one kind onto objects of one entity; children are records nested in them (XML).
    public struct Mapping: Sendable {
        public var entity: String
        /// Attributes whose values identify an object (find-or-create, upsert).
        public var key: [String] = []
        /// The entity's other uniqueness constraints (set from the model): a record colliding on
        /// one of them with another record or a stored object is rejected, never merged.
        public var otherUniqueKeys: [[String]] = []
        /// Whether `key` is the model's first constraint the records fill, taken because the source
        /// names none: records meeting a stored or earlier object by it update that object, and no
        /// check for repeats within the input is made (it would keep every key of the input in memory).
        public var keyIsImplicit = false
        public var fields: [Field] = []
        public var relationships: [Lookup] = []
        public var children: [Child] = []
        /// Records for which the predicate is false are skipped.
        public var filter: FetchPredicate?
        /// Set for records of links (a link table, a CSV of pairs, repeated XML children holding
        /// keys): they make no object, but find one and add their lookups' destinations to its
        /// to-many relationships (a many-to-many filled by key lookups on both ends).
        public var links: LinkOwner?

        /// What a record's key is for the check of keys repeated in one input (`duplicates`): the
        /// key attributes with the fields they are mapped from; for links, both ends' keys (a pair
        /// linked twice). Empty when records have no key.
        public var repeatKey: [(name: String, from: String)] { fieldsOf(key) }

        /// The keys repeats are looked for on: `repeatKey` first, then each of `otherUniqueKeys`
        /// whose properties the records fill.
        public var repeatKeys: [[(name: String, from: String)]] {
            guard !keyIsImplicit else { return [] }
            return [repeatKey] + (links == nil ? otherUniqueKeys.map(fieldsOf).filter { !$0.isEmpty } : [])
        }

        /// The properties of a key with the fields they are mapped from; empty when one is not mapped.
        private func fieldsOf(_ key: [String]) -> [(name: String, from: String)] {
            if links != nil {
                return lookups.flatMap { lookup in
                    lookup.key.map { part in
                        (
                            lookup.relationship.isEmpty ? part.attribute : "\(lookup.relationship).\(part.attribute)",
                            part.from
                        )
                    }
                }
            }
            // An attribute by its field; a relationship by its lookup's fields (`student.id`).
            var parts: [(name: String, from: String)] = []
            for name in key {
                if let field = fields.first(where: { $0.attribute == name }) {
                    parts.append((name, field.from))
                } else if let lookup = relationships.first(where: { $0.relationship == name }), !lookup.key.isEmpty {
                    parts += lookup.key.map { ("\(name).\($0.attribute)", $0.from) }
                } else {
                    return []
                }
            }
            return parts
        }

        /// The lookups of the mapping's records: the one finding a link's owner first (`links`
        /// `.found`), then `relationships`.
        public var lookups: [Lookup] {
            guard case .found(let key)? = links else { return relationships }
            return [Lookup(relationship: "", entity: entity, key: key, createsMissing: false)] + relationships
        }
    }

    /// The object a link record adds to.
    public enum LinkOwner: Sendable {
        /// The object of the mapping's entity with this key (attribute → column or path); it must exist.
        case found([(attribute: String, from: String)])
        /// The object of the record the link record is nested in (XML).
        case parent
    }

    /// A record nested in its parent's record: an object linked to the parent object through
    /// `parent`, or (`parent` empty, `mapping.links` `.parent`) a link adding destinations to the
    /// parent object's to-many relationships.
    public struct Child: Sendable {
        public var record: String
        public var parent: String
        public var mapping: Mapping
        /// How a re-run finds a stored child again when its entity has no key (`identity:`).
        public var identity = KeylessIdentity.place
    }

    /// How a re-run finds the stored children of a parent again when they have no key.
    public enum KeylessIdentity: String, Sendable, CaseIterable {
        /// The n-th record of a kind is the parent's n-th stored child of its entity (the default):
        /// a changed child is an update.
        case place
        /// A record is a stored child with the same values, wherever it is among its siblings: a
        /// changed child is a new one, and the one it replaces is deleted.
        case content
    }

    /// One attribute from one column or path, converted and transformed.
    public struct Field: Sendable {
        public var attribute: String
        public var from: String
        public var transforms: [Transform] = []
        public var date: DateFormat?
        public var binary: BinaryEncoding?
        public var defaultValue: AttributeValue?
        /// Values meaning "no value" (beyond the source's own null markers).
        public var nulls: [String] = []
        public var trueWords: [String] = ["true", "yes", "1"]
        public var falseWords: [String] = ["false", "no", "0"]

        public init(attribute: String, from: String) {
            self.attribute = attribute
            self.from = from
        }
    }

    public enum Transform: Sendable, Equatable {
        case trim, lowercase, uppercase
        case replace(String, with: String)
        /// The first capture group of a regular expression (the whole match when it has none).
        case capture(String)
    }

    public enum DateFormat: Sendable, Equatable {
        case iso8601, unixSeconds
        case pattern(String)
        /// Several formats (`date: [dd.MM.yyyy, iso8601]`): the first that reads a value wins.
        case any([DateFormat])

        /// The formats tried, in order.
        public var formats: [DateFormat] {
            if case .any(let list) = self { return list }
            return [self]
        }
    }

    public enum BinaryEncoding: String, Sendable { case hex, base64 }

    /// A relationship set by looking the destination up by its key: a to-one, or (for link records)
    /// a to-many the destination is added to.
    public struct Lookup: Sendable {
        public var relationship: String
        public var entity: String
        /// Destination key attribute → column or path of this record holding its value.
        public var key: [(attribute: String, from: String)]
        /// Whether a missing destination is created (find-or-create) or the record rejected.
        public var createsMissing: Bool

        public init(
            relationship: String, entity: String, key: [(attribute: String, from: String)], createsMissing: Bool
        ) {
            self.relationship = relationship
            self.entity = entity
            self.key = key
            self.createsMissing = createsMissing
        }
    }
}

extension MergePolicy {
    /// The policies as pipeline files name them (`merge: object-trumps`), in the order help lists them.
    public static let pipelineNames: [(name: String, policy: MergePolicy)] = [
        ("error", .error), ("store-trumps", .storeTrumps), ("object-trumps", .objectTrumps),
        ("overwrite", .overwrite), ("rollback", .rollback),
    ]

    /// The policy a pipeline file names, or `nil` for a name it does not know.
    public init?(pipelineName: String) {
        guard let policy = Self.pipelineNames.first(where: { $0.name == pipelineName })?.policy else { return nil }
        self = policy
    }

    /// The policy's name in a pipeline file (`object-trumps`).
    public var pipelineName: String { Self.pipelineNames.first { $0.policy == self }!.name }
}
