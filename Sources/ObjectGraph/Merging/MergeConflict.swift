import Foundation

/// One object whose save met a newer state in the store: its values now, the values it was read with,
/// the store's current values (`nil` when the row was deleted), and both versions. Attributes only;
/// relationship changes are merged by the policies but not listed.
public struct MergeConflict: Sendable, CustomStringConvertible {
    public let objectID: ManagedObjectID
    public let objectValues: [String: AttributeValue]
    public let snapshot: [String: AttributeValue]
    public let storeValues: [String: AttributeValue]?
    public let snapshotVersion: Int64
    public let storeVersion: Int64?
    /// Whether the context was deleting the object.
    public let isDelete: Bool

    /// A readable diff: one line per attribute whose three values are not all equal.
    public var description: String {
        var lines: [String] = []
        let action = isDelete ? "deleting" : "updating"
        guard let storeValues, let storeVersion else {
            return
                "\(objectID.entityName) \(objectID): \(action) an object read at version "
                + "\(Self.text(of: snapshotVersion)), but another save deleted it"
        }
        lines.append(
            "\(objectID.entityName) \(objectID): \(action) an object read at version "
                + "\(Self.text(of: snapshotVersion)), "
                + "but the store has version \(Self.text(of: storeVersion))"
        )
        for name in snapshot.keys.sorted() {
            let read = snapshot[name] ?? .null, mine = objectValues[name] ?? .null, theirs = storeValues[name] ?? .null
            guard read != mine || read != theirs else { continue }
            lines.append("  \(name): read \(read) · this context \(mine) · store \(theirs)")
        }
        return lines.joined(separator: "\n")
    }

    /// A counted version as its number, a content hash (`RowVersioning.contentHash`) as hex digits.
    private static func text(of version: Int64) -> String {
        (0..<1_000_000).contains(version) ? String(version) : "#" + String(UInt64(bitPattern: version), radix: 16)
    }
}
