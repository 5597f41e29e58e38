import Foundation
import Readers

#if canImport(Glibc)
import Glibc
#endif

/// The rejects file: one JSON object per rejected record, in input order. The lines are written
/// as the run goes to a file beside it (`<name>.sluice-tmp-<pid>`), made with the first rejected
/// record; closing puts them in input order where they are not (records rejected after waiting for
/// a parent come last), syncs the file and moves it into place — whole, never torn. A run's own
/// time-stamped file (`fresh`) takes the next free name (`-2`, `-3`, …) rather than replace another
/// run's; a file `errors.rejects` names is replaced.
///
/// A write that fails (a full disk) is an error naming the file; the lines written before it stay,
/// whole, and are moved into place when the run closes the file.
struct RejectsFile {
    /// The file; once made, the name it goes to.
    private(set) var path: String?
    private let fresh: Bool
    /// The file the lines are written to, and its descriptor (-1 before the first line).
    private var temporary: String?
    private var descriptor: Int32 = -1
    /// Bytes of whole lines written.
    private var written = 0
    private var failed = false
    /// Where each line is and where its record was read, to put them in input order.
    private var lines: [Entry] = []
    private var inOrder = true
    /// The input files of the records, by number.
    private var files: [String] = []
    private var fileNumbers: [String: Int32] = [:]

    private struct Entry {
        var file: Int32
        var column: Int32
        var length: Int32
        var record: Int
        var offset: Int
    }
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Whether the lines are an attempt's that may be thrown away (`PipelineRunner.Options.check`):
    /// written beside the name with `.provisional` after it, which a later run removes rather than
    /// keeps (`Leftovers.keepStaleRejects`), until `confirm()`.
    private var provisional: Bool

    init(path: String?, fresh: Bool = false, provisional: Bool = false) {
        self.path = path
        self.fresh = fresh
        self.provisional = provisional
    }

    /// The attempt stands: its lines are the run's rejects from now on (kept if the process is killed).
    mutating func confirm() {
        guard provisional else { return }
        provisional = false
        guard descriptor >= 0, let temporary, let path else { return }
        let kept = Leftovers.name(beside: path)
        if rename(temporary, kept) == 0 { self.temporary = kept }
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
        guard let path else { return }
        if descriptor < 0 { try open(path) }
        guard !failed else { return }
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
        var data: Data
        do { data = try encoder.encode(line) } catch {
            throw RunError.file(RunFileError(.write, "the rejects file", path: self.path!, underlying: error))
        }
        data.append(UInt8(ascii: "\n"))
        guard ReportFile.writeAll(data, to: descriptor) else {
            // No torn last line: the file keeps the whole lines before this one.
            let reason = errno
            failed = true
            _ = ftruncate(descriptor, off_t(written))
            throw RunError.file(RunFileError(.write, "the rejects file", path: self.path!, errno: reason))
        }
        let p = reject.position
        let file: Int32
        if let known = fileNumbers[p.file] {
            file = known
        } else {
            file = Int32(files.count)
            files.append(p.file)
            fileNumbers[p.file] = file
        }
        let entry = Entry(
            file: file, column: Int32(clamping: p.column), length: Int32(clamping: data.count),
            record: p.record ?? p.line, offset: written)
        if let last = lines.last, Self.precedes(entry, last, files) { inOrder = false }
        lines.append(entry)
        written += data.count
    }

    /// Makes the file the lines are written to.
    private mutating func open(_ chosen: String) throws {
        var path = chosen
        if fresh {
            var number = 1
            while FileManager.default.fileExists(atPath: path) {
                number += 1
                path = Self.numbered(chosen, number)
            }
            self.path = path
        }
        let temporary = Leftovers.name(beside: path) + (provisional ? Leftovers.provisionalSuffix : "")
        descriptor = ReportFile.createOwn(temporary, access: O_RDWR)
        guard descriptor >= 0 else { throw RunError.file(.posix(.open, "the rejects file", path: path)) }
        self.temporary = temporary
    }

    /// A run's own name taken by another file: `-2`, `-3`, … before `.jsonl`.
    private static func numbered(_ path: String, _ number: Int) -> String {
        "\(path.hasSuffix(".jsonl") ? String(path.dropLast(6)) : path)-\(number).jsonl"
    }

    /// Whether `a` comes before `b` in the inputs: by file (in the order the run read them: the
    /// order their first rejects came in), record (or line), column.
    private static func precedes(_ a: Entry, _ b: Entry, _ files: [String]) -> Bool {
        if a.file != b.file { return a.file < b.file }
        if a.record != b.record { return a.record < b.record }
        return a.column < b.column
    }

    /// Closes and removes the file beside the rejects file's name: nothing is published.
    mutating func discard() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
        if let temporary { unlink(temporary) }
        temporary = nil
    }

    /// Puts the lines in input order, syncs the file and moves it into place.
    /// - Throws: `RunError.file` naming the rejects file; when it cannot be moved into place, the
    ///   file beside it is kept and named instead.
    mutating func close() throws {
        guard descriptor >= 0, let path else { return }
        var keep = false
        defer {
            Glibc.close(descriptor)
            descriptor = -1
            if let temporary, !keep { unlink(temporary) }
            temporary = nil
        }
        // Unsorted (a full disk), the lines are still moved into place before the error is told.
        let sorting: RunError? = !inOrder && !failed ? sort() : nil
        guard let file = temporary else { return }
        func kept(_ operation: RunFileError.Operation) -> RunError {
            keep = true
            return .file(
                RunFileError(operation, "the rejects file (its lines are kept in \(file))", path: path, errno: errno))
        }
        guard fsync(descriptor) == 0 else { throw kept(.sync) }
        if fresh {
            // A name another run took meanwhile is left to it. Where the file system has no hard
            // links (vfat, exFAT), the name is claimed by creating it, then replaced.
            var candidate = path, number = 1
            while true {
                if link(file, candidate) == 0 { break }
                if errno != EEXIST {
                    let claim = Glibc.open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                    if claim >= 0 {
                        Glibc.close(claim)
                        guard rename(file, candidate) == 0 else { throw kept(.rename) }
                        temporary = nil
                        break
                    }
                    guard errno == EEXIST else { throw kept(.rename) }
                }
                number += 1
                candidate = Self.numbered(path, number)
            }
            self.path = candidate
        } else {
            guard rename(file, path) == 0 else { throw kept(.rename) }
            temporary = nil
        }
        let folder = Glibc.open(URL(fileURLWithPath: path).deletingLastPathComponent().path, O_RDONLY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            Glibc.close(folder)
        }
        if let sorting { throw sorting }
    }

    /// Rewrites the lines in input order (records of one place keep the order they were written in).
    /// - Returns: the error when it could not (the lines stay as they were written).
    private mutating func sort() -> RunError? {
        guard let path, let temporary else { return nil }
        let files = files
        let order = lines.indices.sorted { a, b in
            Self.precedes(lines[a], lines[b], files) || (!Self.precedes(lines[b], lines[a], files) && a < b)
        }
        let sorted = temporary + ".sorted"
        let output = ReportFile.createOwn(sorted)
        let role = "the rejects file (complete, but not put in input order)"
        guard output >= 0 else { return .file(.posix(.write, role, path: path)) }
        var buffer = Data(), ok = true
        buffer.reserveCapacity(1 << 16)
        var line = [UInt8](repeating: 0, count: 1 << 12)
        for index in order where ok {
            let entry = lines[index]
            if line.count < Int(entry.length) { line = [UInt8](repeating: 0, count: Int(entry.length)) }
            let read = line.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress!, Int(entry.length), off_t(entry.offset))
            }
            guard read == Int(entry.length) else {
                ok = false
                break
            }
            buffer.append(contentsOf: line[0..<Int(entry.length)])
            if buffer.count >= 1 << 16 {
                ok = ReportFile.writeAll(buffer, to: output)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if ok { ok = ReportFile.writeAll(buffer, to: output) }
        guard ok else {
            let reason = errno
            Glibc.close(output)
            unlink(sorted)
            return .file(RunFileError(.write, role, path: path, errno: reason))
        }
        Glibc.close(descriptor)
        unlink(temporary)
        descriptor = output
        self.temporary = sorted
        return nil
    }
}
