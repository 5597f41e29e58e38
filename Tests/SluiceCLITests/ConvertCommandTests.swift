import Drivers
import Foundation
import TestSupport
import Testing

/// `sluice convert`: SQLite → XML → binary → SQLite gives the same rows (keys included).
@Suite struct ConvertCommandTests {
    /// Every row of every table, keys first.
    static func contents(_ store: String) throws -> [[SQLiteValue]] {
        try ["customers", "orders", "order_lines", "products", "tags", "products_tags"].flatMap { table in
            try sqliteRows(store, "SELECT * FROM \"\(table)\" ORDER BY 1" + (table == "tags" ? "" : ", 2"))
        }
    }

    @Test func aRoundTripThroughEveryStoreTypeKeepsEverything() throws {
        let directory = try TemporaryDirectory()
        let environment = ["SLUICE_OUT": directory.url.path]
        #expect(try runSluice(["run", "Pipelines/shop.yaml"], environment: environment).status == 0)
        #expect(try runSluice(["run", "Pipelines/orders-feed.yaml"], environment: environment).status == 0)
        let original = directory.url.appendingPathComponent("shop.sqlite").path
        let model = repositoryRoot.path + "/SampleData/shop.model.yaml"
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
            inspect.stdout.contains("Binary store") && inspect.stdout.contains("(entity OrderLine): 7 rows"),
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
        let pipeline = try String(
            contentsOf: repositoryRoot.appendingPathComponent("Pipelines/shop.yaml"), encoding: .utf8
        )
        .replacingOccurrences(of: "../SampleData", with: repositoryRoot.path + "/SampleData")
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
                repositoryRoot.path + "/SampleData/shop.model.yaml",
            ]).status == 0)
        #expect(try sqliteRows(back, "SELECT count(*) FROM order_lines") == [[.integer(4)]])
    }

    /// Text keys that look like numbers (`1`, `05`) and ones that do not (`A`): a copy into stores
    /// that hand out their own references renumbers the whole table rather than keep some and mix
    /// in new ones, and every copy exports the same rows.
    @Test func textKeysThatLookLikeNumbersSurviveEveryCopy() throws {
        let directory = try TemporaryDirectory()
        func path(_ name: String) -> String { directory.url.appendingPathComponent(name).path }
        let script = try directory.file(
            "codes.sql",
            contents: """
                CREATE TABLE code(k TEXT PRIMARY KEY, n TEXT);
                INSERT INTO code VALUES('1','one'),('2','two'),('05','five'),('A','a'),('+5','plus five');
                CREATE TABLE item(id INTEGER PRIMARY KEY, code_k TEXT REFERENCES code(k));
                INSERT INTO item VALUES(1,'05'),(2,'A'),(3,'1'),(4,'+5');
                """)
        #expect(try runSluice(["import", script.path, "--to", path("plain.sqlite")]).status == 0)
        let reference = path("out-plain")
        #expect(try runSluice(["export", path("plain.sqlite"), "--to", reference + "/"]).status == 0)
        var previous = "plain.sqlite"
        for (name, options) in [
            ("graph.sqlite", ["--layout", "graph"]), ("codes.xml", []), ("codes.bin", []), ("back.sqlite", []),
        ] {
            let result = try runSluice(["convert", path(previous), path(name)] + options)
            #expect(result.status == 0, "\(name): \(result.stderr)")
            let out = path("out-" + name)
            #expect(try runSluice(["export", path(name), "--to", out + "/"]).status == 0)
            for table in ["code", "item"] {
                #expect(
                    try String(contentsOfFile: "\(out)/\(table).csv", encoding: .utf8)
                        == (try String(contentsOfFile: "\(reference)/\(table).csv", encoding: .utf8)),
                    "\(name) \(table)")
            }
            previous = name
        }
        #expect(
            try sqliteRows(path("back.sqlite"), "SELECT i.id, c.n FROM item i JOIN code c ON c.k = i.code_k ORDER BY 1")
                == [
                    [.integer(1), .text("five")], [.integer(2), .text("a")], [.integer(3), .text("one")],
                    [.integer(4), .text("plus five")],
                ])
    }
}
