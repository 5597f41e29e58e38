import Drivers
import Foundation
import Testing
import TestSupport

/// `sluice convert`: SQLite → XML → binary → SQLite gives the same rows (keys included).
@Suite struct ConvertCommandTests {
    typealias R = RunCommandTests

    /// Every row of every table but the row versions (`_opt`: a copy starts at version 1).
    static func contents(_ store: String) throws -> [[SQLiteValue]] {
        try ["Customer", "Order", "OrderLine", "Product", "Tag"].flatMap { table in
            try R.query(store, "SELECT * FROM \"\(table)\" ORDER BY _pk").map { row in row.enumerated().filter { $0.offset != 2 }.map(\.element) }
        }
    }

    @Test func aRoundTripThroughEveryStoreTypeKeepsEverything() throws {
        let directory = try TemporaryDirectory()
        let environment = ["SLUICE_OUT": directory.url.path]
        #expect(try runSluice(["run", "Pipelines/shop.yaml"], environment: environment).status == 0)
        #expect(try runSluice(["run", "Pipelines/orders-feed.yaml"], environment: environment).status == 0)
        let original = directory.url.appendingPathComponent("shop.sqlite").path
        let model = R.root.path + "/SampleData/shop.model.yaml"
        let xml = directory.url.appendingPathComponent("shop.xml").path
        let binary = directory.url.appendingPathComponent("shop.bin").path
        let back = directory.url.appendingPathComponent("back.sqlite").path
        let first = try runSluice(["convert", original, xml])
        #expect(first.status == 0 && first.stdout.contains("Copied 18 objects"), "\(first.stdout)\(first.stderr)")
        #expect(try String(contentsOfFile: xml, encoding: .utf8).contains("<sluice-store version=\"1\" type=\"XML\""))
        #expect(try runSluice(["convert", xml, binary, "--model", model]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: binary)).starts(with: Data("SLUICEBS".utf8)))
        #expect(try runSluice(["convert", binary, back, "--to", "sqlite", "--model", model]).status == 0)
        #expect(try Self.contents(back) == (try Self.contents(original)))
        // The copy is a working store: validate it with the model it carries along.
        #expect(try runSluice(["validate", back]).status == 0)

        let again = try runSluice(["convert", original, xml])
        #expect(again.status == 3 && again.stderr.contains("already"), "the destination exists")
        #expect(try runSluice(["convert", xml, directory.url.appendingPathComponent("x.bin").path]).status == 2, "no model known for an XML source")
    }
}
