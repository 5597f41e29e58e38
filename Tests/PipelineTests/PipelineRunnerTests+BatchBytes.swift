import Drivers
import Foundation
import TestSupport
import Testing

@testable import Pipeline

/// Batches of big records end at `ReadStage.batchBytes`, not at `batch.size`: memory is bounded per
/// batch — and a resumed `commit: batches` run cuts the same batches, so it skips exactly what its
/// checkpoint names and reads again exactly the records that waited (counted as read by it). In the
/// runner tests' suite: its stop (`RunStop.stopForTesting`) would stop any run going in process.
extension PipelineRunnerTests {
    /// Documents of 1 MiB each before the folders they belong to (each waits for its folder).
    static func bigDocsPipeline(
        in directory: TemporaryDirectory, name: String, size: Int = 100
    ) throws -> PipelineConfig {
        let body = String(repeating: "x", count: 1 << 20)
        _ = try directory.file(
            "docs.csv", contents: "id,folder,body\n" + (1...40).map { "\($0),f\($0 % 3),\(body)\n" }.joined())
        _ = try directory.file("folders.csv", contents: "code\nf0\nf1\nf2\n")
        _ = try directory.file(
            "docs.model.yaml",
            contents: """
                version: 1
                entities:
                  Folder:
                    attributes: { code: string! }
                    relationships: { docs: { destination: Doc, toMany: true, inverse: folder } }
                    unique: [[code]]
                  Doc:
                    attributes: { id: integer64!, body: string }
                    relationships: { folder: { destination: Folder, inverse: docs, optional: false } }
                    unique: [[id]]
                """)
        let file = try directory.file(
            "\(name).yaml",
            contents: """
                version: 1
                model: docs.model.yaml
                target: { store: sqlite, path: \(name).sqlite, commit: batches }
                batch: { size: \(size), contexts: 2 }
                sources:
                  - name: docs
                    path: docs.csv
                    entity: Doc
                    key: [id]
                    fields: { id: id, body: body }
                    relationships: { folder: { entity: Folder, key: { code: folder }, missing: reject } }
                  - { name: folders, path: folders.csv, entity: Folder, key: [code], fields: { code: code } }
                """)
        return try PipelineFile.load(contentsOf: file)
    }

    static func bigDocRows(_ store: String) throws -> [[SQLiteValue]] {
        try sqliteRows(
            store, "SELECT d.id, f.code, length(d.body) FROM Doc d JOIN Folder f ON f.code = d.folder_id ORDER BY d.id")
    }

    @Test func bigRecordsMakeSmallBatchesAndAResumeFindsThem() throws {
        let directory = try TemporaryDirectory()
        let whole = PipelineRunner(config: try Self.bigDocsPipeline(in: directory, name: "whole"))
        let report = try whole.run()
        #expect(report.entities["Doc"] == .init(read: 40, inserted: 40))
        let expected = try Self.bigDocRows(directory.url.appendingPathComponent("whole.sqlite").path)
        #expect(expected.count == 40)

        let config = try Self.bigDocsPipeline(in: directory, name: "cut")
        let store = directory.url.appendingPathComponent("cut.sqlite").path
        RunStop.stopForTesting(atCheck: 3)  // after the docs' second batch: 16 of them (or more) wait
        let stopped = PipelineRunner(config: config)
        #expect(throws: RunError.self) { try stopped.run() }
        RunStop.resetForTesting()
        let read = stopped.report.entities["Doc"]?.read ?? 0
        #expect(read > 0 && read < 40 && read % 8 == 0, "batches of 8 (8 MiB each), not one of 40: \(read)")
        let checkpoint = try #require(
            try sqliteRows(store, "SELECT value FROM _sluice_metadata WHERE key = 'user.sluice.checkpoint'").first)
        guard case .text(let text) = checkpoint.first else { throw CancellationError() }
        #expect(text.contains("pending=0.0:0-7;0.1:0-7"), "the waiting docs, by batches of 8: \(text)")

        var options = PipelineRunner.Options()
        options.resume = true
        let resumed = try PipelineRunner(config: config).run(options)
        #expect(resumed.entities["Doc"] == .init(read: 40, inserted: 40), "the 16 read again count as read")
        #expect(try Self.bigDocRows(store) == expected)
    }
}
