import Foundation
import TestSupport
import Testing

@Suite struct InferCommandTests {
    @Test func inferPrintsAModelForGzippedCSV() throws {
        let folder = try TemporaryDirectory()
        let csv = try folder.file("people.csv", contents: "id,name,born\n1,Ada,1815-12-10\n2,Grace,1906-12-09\n")
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gzip.arguments = ["-c", "gzip -n \"$0\"", csv.path]
        try gzip.run()
        gzip.waitUntilExit()
        let result = try runSluice(["infer", csv.path + ".gz"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("  Person:\n") || result.stdout.contains("  People:\n"))
        #expect(result.stdout.contains("born: {type: calendarDate, optional: false}"))
        #expect(result.stdout.contains("unique: [[id]]"))
    }

    @Test func badUsageAndMissingFilesHaveDistinctExitCodes() throws {
        let folder = try TemporaryDirectory()
        let xml = try folder.file("a.xml", contents: "<a><b/></a>")
        let noRecord = try runSluice(["infer", xml.path])
        #expect(noRecord.status == 2 && noRecord.stderr.contains("--record"))
        let missing = try runSluice(["infer", folder.url.appendingPathComponent("none.csv").path])
        #expect(missing.status == 3 && missing.stderr.contains("none.csv"))
        let badFormat = try runSluice(["infer", "--format", "yaml", xml.path])
        #expect(badFormat.status != 0 && badFormat.stderr.contains("--format"))
    }
}
