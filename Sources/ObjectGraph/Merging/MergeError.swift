import Foundation

/// A save refused under `MergePolicy.error`: every object that changed in the store since it was
/// read, with its diff, and every uniqueness-constraint conflict, with its key.
public struct MergeError: Error, Sendable, CustomStringConvertible {
    public let conflicts: [MergeConflict]
    public let constraintConflicts: [ConstraintConflict]

    public init(conflicts: [MergeConflict] = [], constraintConflicts: [ConstraintConflict] = []) {
        self.conflicts = conflicts
        self.constraintConflicts = constraintConflicts
    }

    public var description: String {
        var parts: [String] = []
        if !conflicts.isEmpty {
            parts.append(
                "The save conflicts with changes saved elsewhere (\(conflicts.count) "
                    + "object\(conflicts.count == 1 ? "" : "s")):\n"
                    + conflicts.map(\.description).joined(separator: "\n"))
        }
        if !constraintConflicts.isEmpty {
            parts.append(
                "The save breaks uniqueness constraints (\(constraintConflicts.count) "
                    + "conflict\(constraintConflicts.count == 1 ? "" : "s")):\n"
                    + constraintConflicts.map(\.description).joined(separator: "\n"))
        }
        return parts.joined(separator: "\n")
    }
}
