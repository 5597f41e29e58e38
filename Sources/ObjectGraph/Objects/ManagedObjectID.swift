import Foundation
import Synchronization

/// Identifies one object across contexts and threads: the store, the entity, and the object's
/// reference in that store. It is the only handle that may cross from one context to another.
///
/// IDs of newly inserted objects are temporary until the object is saved (or
/// `obtainPermanentIDs(for:)` is called). `uriRepresentation` is a URL that survives restarts:
/// `x-sluice://<store UUID>/<Entity>/p<primary key>` (or `/s<key>` for string references,
/// `/t<n>` for temporary IDs, which have no store).
public struct ManagedObjectID: Hashable, Sendable, CustomStringConvertible {
    /// A store's key for an object, or a temporary number before the first save.
    public enum Reference: Hashable, Sendable {
        case temporary(UInt64)
        case integer(Int64)
        case string(String)

        /// The reference of an object kept under a key attribute (`PersistentStore.referenceAttribute`):
        /// an integer or text value of that attribute; `nil` for any other value.
        public init?(key value: AttributeValue) {
            switch value {
            case .integer(let key): self = .integer(key)
            case .string(let key): self = .string(key)
            default: return nil
            }
        }
    }

    /// The entity and store of an ID, shared by every ID made from one template (`withReference`), so
    /// copying an ID retains one object rather than two strings. Equality never depends on sharing.
    final class Scope: Sendable {
        let entityName: String
        let storeIdentifier: String?
        init(entityName: String, storeIdentifier: String?) {
            self.entityName = entityName
            self.storeIdentifier = storeIdentifier
        }
    }

    let scope: Scope
    public let reference: Reference

    public var entityName: String { scope.entityName }
    /// The identifier (UUID) of the store holding the object; `nil` while the ID is temporary.
    public var storeIdentifier: String? { scope.storeIdentifier }

    public init(entityName: String, storeIdentifier: String?, reference: Reference) {
        self.init(scope: Scope(entityName: entityName, storeIdentifier: storeIdentifier), reference: reference)
    }

    init(scope: Scope, reference: Reference) {
        self.scope = scope
        self.reference = reference
    }

    /// An ID of the same entity and store with another reference. Stores that make many IDs of one
    /// entity (fetches, new keys) keep one ID per entity and derive the others from it: cheaper than
    /// `init(entityName:storeIdentifier:reference:)`, which allocates.
    public func withReference(_ reference: Reference) -> ManagedObjectID {
        ManagedObjectID(scope: scope, reference: reference)
    }

    private static let temporaryCounter = Atomic<UInt64>(0)

    static func makeTemporary(in scope: Scope) -> ManagedObjectID {
        let n = temporaryCounter.add(1, ordering: .relaxed).newValue
        return ManagedObjectID(scope: scope, reference: .temporary(n))
    }

    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        guard lhs.reference == rhs.reference else { return false }
        return lhs.scope === rhs.scope
            || (lhs.scope.entityName == rhs.scope.entityName && lhs.scope.storeIdentifier == rhs.scope.storeIdentifier)
    }

    public var isTemporaryID: Bool { if case .temporary = reference { return true } else { return false } }

    /// The integer primary key, for stores that use one.
    public var primaryKey: Int64? { if case .integer(let key) = reference { return key } else { return nil } }

    public static let uriScheme = "x-sluice"

    public var uriRepresentation: URL {
        var components = URLComponents()
        components.scheme = Self.uriScheme
        components.host = storeIdentifier ?? ""
        let tail: String
        switch reference {
        case .temporary(let n): tail = "t\(n)"
        case .integer(let key): tail = "p\(key)"
        case .string(let key): tail = "s\(key)"
        }
        components.path = "/\(entityName)/\(tail)"
        return components.url!
    }

    /// Parses a URI made by `uriRepresentation`; `nil` when it is not one.
    public init?(uriRepresentation uri: URL) {
        guard uri.scheme == Self.uriScheme,
            let components = URLComponents(url: uri, resolvingAgainstBaseURL: false)
        else { return nil }
        let parts = components.path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, let kind = parts[1].first else { return nil }
        let value = String(parts[1].dropFirst())
        let host = components.host ?? ""
        switch kind {
        case "t":
            guard host.isEmpty, let n = UInt64(value) else { return nil }
            self.init(entityName: String(parts[0]), storeIdentifier: nil, reference: .temporary(n))
        case "p":
            guard !host.isEmpty, let key = Int64(value) else { return nil }
            self.init(entityName: String(parts[0]), storeIdentifier: host, reference: .integer(key))
        case "s":
            guard !host.isEmpty else { return nil }
            self.init(entityName: String(parts[0]), storeIdentifier: host, reference: .string(value))
        default:
            return nil
        }
    }

    /// Hashes the reference alone: keys are unique within an entity's store table, so the entity name
    /// and store (compared by `==`) rarely separate IDs and would cost two string hashes per lookup.
    public func hash(into hasher: inout Hasher) {
        switch reference {
        case .temporary(let n): hasher.combine(n)
        case .integer(let key): hasher.combine(key)
        case .string(let key): ExactText.hash(key, into: &hasher)
        }
    }

    /// What dictionaries and sets of IDs hash with: integer references (nearly every stored object) go
    /// through a 64-bit mixer (SplitMix64's finaliser, seeded) instead of SipHash — registries and the
    /// coordinator's snapshot table hash an ID several times per imported object.
    public func _rawHashValue(seed: Int) -> Int {
        switch reference {
        case .integer(let key): return Self.mix(UInt64(bitPattern: key) ^ UInt64(bitPattern: Int64(seed)))
        case .temporary(let n): return Self.mix(n ^ 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: Int64(seed)))
        case .string:
            var hasher = Hasher()
            hasher.combine(seed)
            hash(into: &hasher)
            return hasher.finalize()
        }
    }

    @inline(__always) private static func mix(_ value: UInt64) -> Int {
        var x = value &+ 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int(bitPattern: UInt(x ^ (x >> 31)))
    }

    public var description: String { uriRepresentation.absoluteString }
}
