import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One mistake in a model file, with its position.
public struct ModelFileIssue: Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    public var entity: String?
    public var property: String?
    public var message: String

    public init(file: String, line: Int, column: Int, entity: String? = nil, property: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.entity = entity
        self.property = property
        self.message = message
    }

    /// `shop.model.yaml:12:7: Order.customer: destination entity "Client" is not in the model`
    public var description: String {
        var subject = ""
        if let entity { subject = entity + (property.map { ".\($0)" } ?? "") + ": " }
        // A whole file's issue (it cannot be read) has no line to point at.
        return line == 0 ? "\(file): \(subject)\(message)" : "\(file):\(line):\(column): \(subject)\(message)"
    }
}

/// A model file that cannot be loaded: every mistake found, each with file, line and column.
public struct ModelFileError: Error, Sendable, CustomStringConvertible {
    public var issues: [ModelFileIssue]

    public init(issues: [ModelFileIssue]) { self.issues = issues }
    public var description: String {
        let count = issues.count
        return "The model file has \(count) error\(count == 1 ? "" : "s"):\n"
            + issues.map { "  " + $0.description }.joined(separator: "\n")
    }
}

extension ModelFileIssue: Error {
    /// The text of a model or pipeline file, or the issue saying in one sentence why it cannot be
    /// read (no such file, a folder, permissions, not UTF-8) — never a Foundation error's dump.
    package static func readText(at path: String, _ what: String) -> Result<String, ModelFileIssue> {
        func failure(_ reason: String) -> Result<String, ModelFileIssue> {
            .failure(ModelFileIssue(file: path, line: 0, column: 0, message: "cannot read \(what): \(reason)"))
        }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            return failure("it is a folder")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return failure(String(cString: strerror(errno)).lowercased()) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        let data: Data
        do { data = try handle.readToEnd() ?? Data() } catch { return failure(String(cString: strerror(EIO))) }
        guard let text = String(data: data, encoding: .utf8) else { return failure("it is not UTF-8 text") }
        return .success(text)
    }
}
