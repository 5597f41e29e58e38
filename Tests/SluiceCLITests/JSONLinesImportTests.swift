import Drivers
import Foundation
import TestSupport
import Testing

/// A JSON Lines import's bad lines are rejected records, with their line and column, and the
/// import goes on (within `--max-errors`); members only some lines have, and nested values, are
/// fields like any other.
@Suite struct JSONLinesImportTests {
    @Test func badLinesAreRejectedRecords() throws {
        let directory = try TemporaryDirectory()
        let input = try directory.file(
            "things.jsonl",
            contents:
                "{\"id\":1,\"name\":\"a\",\"price\":2684.00}\n{\"id\":2,\"name\":\"b\",\"price\":1.50,\"extra\":1}\n"
                + "{\"id\":3,\"name\":{\"n\":1},\"price\":1.00}\n{\"id\":4,\"name\":\"d\",\"price\":19.99,\"id\":5}\n"
                + "{\"id\":6,\"name\":\"e\",\"price\":1.}\n{\"id\":7,\"name\":\"f\",\"price\":0.5}\n")
        let store = directory.url.appendingPathComponent("t.db").path
        let result = try runSluice(["import", input.path, "--to", store, "--max-errors", "5"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.contains("Thing: 6 read, 4 inserted, 0 updated, 0 unchanged, 2 rejected"), "\(result.stdout)")
        let rejects = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.hasPrefix("t.db.rejects")
        }
        let text = try String(contentsOf: directory.url.appendingPathComponent(rejects[0]), encoding: .utf8)
        #expect(text.contains("the member \\\"id\\\" is given twice in one object"), "\(text)")
        #expect(text.contains("a number needs digits after its point"), "\(text)")
        #expect(text.contains("\"line\":5"), "\(text)")
        #expect(
            try sqliteRows(store, "SELECT id, name, price, extra FROM things ORDER BY id") == [
                [.integer(1), .text("a"), .integer(2684), .null], [.integer(2), .text("b"), .real(1.5), .integer(1)],
                [.integer(3), .text("{\"n\":1}"), .integer(1), .null], [.integer(7), .text("f"), .real(0.5), .null],
            ])
    }
}
