import Drivers
import Foundation
import TestSupport
import Testing

/// `sluice convert`: SQLite → XML → binary → SQLite gives the same rows (keys included).
@Suite struct ConvertCommandTests {
    typealias R = RunCommandTests

    /// Every row of every table, keys first.
    static func contents(_ store: String) throws -> [[SQLiteValue]] {
        try ["customers", "orders", "order_lines", "products", "tags", "products_tags"].flatMap { table in
            try R.query(store, "SELECT * FROM \"\(table)\" ORDER BY 1" + (table == "tags" ? "" : ", 2"))
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
        // The model a run recorded goes along: no --model needed after the first store.
        #expect(try runSluice(["convert", xml, binary]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: binary)).starts(with: Data("SLUICEBS".utf8)))
        let inspect = try runSluice(["inspect", binary])
        #expect(
            inspect.stdout.contains("Binary store") && inspect.stdout.contains("OrderLine  7"),
            "\(inspect.stdout)\(inspect.stderr)")
        #expect(try runSluice(["validate", xml]).status == 0)
        #expect(try runSluice(["convert", binary, back, "--to", "sqlite", "--model", model]).status == 0)
        #expect(try Self.contents(back) == (try Self.contents(original)))
        // The copy is a working store: validate it with the model it carries along.
        #expect(try runSluice(["validate", back]).status == 0)

        let again = try runSluice(["convert", original, xml])
        #expect(again.status == 3 && again.stderr.contains("already"), "the destination exists")
        let foreign = try directory.file(
            "foreign.xml", contents: "<?xml version=\"1.0\"?><sluice-store version=\"1\" identifier=\"X\"/>")
        #expect(
            try runSluice(["convert", foreign.path, directory.url.appendingPathComponent("x.bin").path]).status == 2,
            "no model recorded, none given")
    }

    /// A pipeline writes an XML or binary store as well (atomically); re-running it changes nothing.
    @Test(arguments: ["xml", "binary"])
    func aPipelineTargetsAnAtomicStore(kind: String) throws {
        let directory = try TemporaryDirectory()
        let pipeline = try String(contentsOf: R.root.appendingPathComponent("Pipelines/shop.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "../SampleData", with: R.root.path + "/SampleData")
            .replacingOccurrences(
                of: "{ store: sqlite, path: \"${SLUICE_OUT:-../out}/shop.sqlite\"",
                with: "{ store: \(kind), path: \"\(directory.url.path)/shop.store\"")
        let file = try directory.file("p.yaml", contents: pipeline)
        let first = try runSluice(["run", file.path], environment: ["SLUICE_OUT": directory.url.path])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("OrderLine: 4 read, 4 inserted"))
        let again = try runSluice(["run", file.path], environment: ["SLUICE_OUT": directory.url.path])
        #expect(
            again.stdout.contains("OrderLine: 4 read, 0 inserted, 0 updated, 4 unchanged"),
            "\(again.stdout)\(again.stderr)")
        let back = directory.url.appendingPathComponent("back.sqlite").path
        #expect(
            try runSluice([
                "convert", directory.url.appendingPathComponent("shop.store").path, back, "--to", "sqlite", "--model",
                R.root.path + "/SampleData/shop.model.yaml",
            ]).status == 0)
        #expect(try R.query(back, "SELECT count(*) FROM order_lines") == [[.integer(4)]])
    }
}
