import Foundation
import Readers

/// The rejects file: one JSON object per rejected record, written as the run goes. It is made
/// with the first rejected record; a run's own time-stamped file (`fresh`) takes the next free name
/// (`-2`, `-3`, …) rather than replace another run's.
struct RejectsFile {
    private var handle: FileHandle?
    /// The file; once made, the name it was made under.
    private(set) var path: String?
    private let fresh: Bool
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    init(path: String?, fresh: Bool = false) {
        self.path = path
        self.fresh = fresh
    }

    struct Line: Encodable {
        struct Position: Encodable {
            var file: String
            var line: Int
            var column: Int
            var record: Int?
        }
        struct Failure: Encodable {
            var property: String
            /// The field's text; `null` when the record has none (never the word `nil`).
            var raw: String?
            var rule: String
            var message: String
            var position: Position

            enum CodingKeys: String, CodingKey { case property, raw, rule, message, position }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(property, forKey: .property)
                try container.encode(raw, forKey: .raw)
                try container.encode(rule, forKey: .rule)
                try container.encode(message, forKey: .message)
                try container.encode(position, forKey: .position)
            }
        }
        var source: String
        var entity: String
        var position: Position
        var failures: [Failure]
    }

    mutating func write(_ reject: RecordReject) throws {
        guard var path else { return }
        if handle == nil {
            if fresh {
                let stem = path.hasSuffix(".jsonl") ? String(path.dropLast(6)) : path
                var number = 1
                while FileManager.default.fileExists(atPath: path) {
                    number += 1
                    path = "\(stem)-\(number).jsonl"
                }
                self.path = path
            }
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
