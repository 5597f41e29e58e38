import Foundation
import Readers
import TestSupport
import Testing

@testable import Pipeline

@Suite struct RunProgressTests {
    /// The line names the source, counts records, and gives the share of the file read so far
    /// (bytes counted as the reader pulls them) with the time left.
    @Test func theLineCountsRecordsAndTheShareOfTheFileRead() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.file("in.csv", contents: String(repeating: "a,b\n", count: 100_000))  // 400,000 bytes
        let (source, counter) = try Input.openCounting(file.path)
        let progress = RunProgress()
        progress.begin(source: "things", counter: counter, path: file.path)
        // The reader pulls 100,000 bytes (a 4 KB look at the start for the gzip magic comes first).
        var buffer = [UInt8](repeating: 0, count: 10_000)
        var pulled = 0
        while pulled < 100_000 { pulled += try buffer.withUnsafeMutableBytes { try source.read(into: $0) } }
        #expect(counter.bytesRead >= 100_000 && counter.bytesRead <= 104_096)
        progress.read(records: 500)
        progress.add(records: 250)
        let line = progress.line
        #expect(line.hasPrefix("things: 250 records, "), "\(line)")
        // A quarter of the file read (give or take the look ahead), half of what was read imported.
        #expect(line.contains(", 12%, about ") || line.contains(", 13%, about "), "\(line)")
    }

    @Test func withoutAByteCounterOnlyRecordsAndRate() {
        let progress = RunProgress()
        progress.begin(source: "table", counter: nil, path: "/nonexistent")
        progress.read(records: 3)
        progress.add(records: 3)
        #expect(progress.line.hasPrefix("table: 3 records, ") && !progress.line.contains("%"))
    }
}
