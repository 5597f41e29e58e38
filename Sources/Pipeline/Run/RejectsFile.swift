import Foundation
import Readers

/// The rejects file: one JSON object per rejected record, written as the run goes.
struct RejectsFile {
    private var handle: FileHandle?
    private let path: String?
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    init(path: String?) { self.path = path }

    struct Line: Encodable {
        struct Position: Encodable {
            var file: String
            var line: Int
            var column: Int
            var record: Int?
        }
        struct Failure: Encodable {
            var property: String
            var raw: String?
            var rule: String
            var message: String
            var position: Position
        }
        var source: String
        var entity: String
        var position: Position
        var failures: [Failure]
    }

    mutating func write(_ reject: RecordReject) throws {
        guard let path else { return }
        if handle == nil {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            guard let opened = FileHandle(forWritingAtPath: path) else {
                throw RunError.file(.posix(.open, "the rejects file", path: path))
            }
            handle = opened
        }
        func position(_ p: SourcePosition) -> Line.Position {
            .init(file: p.file, line: p.line, column: p.column, record: p.record)
        }
        let line = Line(
            source: reject.source, entity: reject.entity, position: position(reject.position),
            failures: reject.failures.map {
                .init(
                    property: $0.property, raw: $0.raw, rule: $0.rule, message: $0.message,
                    position: position($0.position))
            })
        do { try handle!.write(contentsOf: encoder.encode(line) + Data("\n".utf8)) } catch {
            throw RunError.file(RunFileError(.write, "the rejects file", path: path, underlying: error))
        }
    }

    mutating func close() throws {
        try handle?.close()
        handle = nil
    }
}
