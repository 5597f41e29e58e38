import Drivers
import Foundation
import TestSupport
import Testing

/// A JSON Lines import's bad lines are rejected records, with their line and column, and the
/// import goes on (within `--max-errors`).
@Suite struct JSONLinesImportTests {
    @Test func badLinesAreRejectedRecords() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file(
            "things.jsonl",
            contents:
                "{\"id\":1,\"name\":\"a\",\"price\":2684.00}\n{\"id\":2,\"name\":\"b\",\"price\":1.50,\"extra\":1}\n"
                + "{\"id\":3,\"name\":{\"n\":1},\"price\":1.00}\n{\"id\":4,\"name\":\"d\",\"price\":19.99}\n")
        let store = directory.url.appendingPathComponent("t.db").path
        let result = try runSluice(["import", input.path, "--to", store, "--max-errors", "5"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.contains("Thing: 4 read, 2 inserted, 0 updated, 0 unchanged, 2 rejected"), "\(result.stdout)")
        let rejects = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.hasPrefix("t.db.rejects")
        }
        let text = try String(contentsOf: directory.url.appendingPathComponent(rejects[0]), encoding: .utf8)
        #expect(text.contains("member \\\"extra\\\" is not one of the first line's"), "\(text)")
        #expect(text.contains("holds a nested value"), "\(text)")
        #expect(
            try sqliteRows(store, "SELECT id, price FROM things ORDER BY id") == [
                [.integer(1), .integer(2684)], [.integer(4), .real(19.99)],
            ])
    }
}
