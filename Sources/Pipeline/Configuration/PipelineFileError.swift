import Foundation
import ModelFiles
import ObjectGraph
import Readers
import Yams

/// A pipeline file that cannot be used: every mistake found, each with file, line and column.
public struct PipelineFileError: Error, Sendable, CustomStringConvertible {
    public var issues: [ModelFileIssue]

    public init(issues: [ModelFileIssue]) { self.issues = issues }
    public var description: String {
        let count = issues.count
        return "The pipeline file has \(count) error\(count == 1 ? "" : "s"):\n"
            + issues.map { "  " + $0.description }.joined(separator: "\n")
    }
}
