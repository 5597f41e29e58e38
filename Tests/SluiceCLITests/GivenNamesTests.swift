import Drivers
import Foundation
import TestSupport
import Testing

/// Issue 33, names the user gave: `--entity` names the table too (as given, never made plural), so
/// the daily files of one entity share its table; `--table` names it outright, and is refused for
/// an entity the target keeps in another table; standard input takes them, and its format is
/// sniffed when `--format` is absent.
@Suite struct GivenNamesTests {
    static func tables(_ store: String) throws -> [String] {
        try sqliteRows(
            store, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'"
        )
        .compactMap { if case .text(let name) = $0[0] { name } else { nil } }.sorted()
    }

    @Test func dailyFilesOfANamedEntityShareItsTable() throws {
        let directory = try TemporaryDirectory()
        let store = directory.url.appendingPathComponent("s.sqlite").path
        let day1 = try directory.file("stock_2024-11-25.csv", contents: "sku,qty\nA,1\nB,2\n")
        let day2 = try directory.file("stock_2024-11-26.csv", contents: "sku,qty\nA,3\nB,2\nC,1\n")
        for day in [day1, day2] {
            let run = try runSluice(["import", day.path, "--entity", "Stock", "--key", "sku", "--to", store])
            #expect(run.status == 0, "\(run.stderr)")
        }
        #expect(try Self.tables(store) == ["stock"])
        #expect(
            try sqliteRows(store, "SELECT sku, qty FROM stock ORDER BY sku") == [
                [.text("A"), .integer(3)], [.text("B"), .integer(2)], [.text("C"), .integer(1)],
            ])
        let renamed = try runSluice(["import", day2.path, "--entity", "Stock", "--table", "stocks", "--to", store])
        #expect(
            renamed.status == 2 && renamed.stderr.contains("--table stocks: the target keeps Stock in table stock"),
            "\(renamed.stderr)")
    }

    @Test func dailyXMLFilesOfANamedEntityShareItsTable() throws {
        let directory = try TemporaryDirectory()
        let store = directory.url.appendingPathComponent("s.sqlite").path
        let day1 = try directory.file("feed-1.xml", contents: "<feed><item sku=\"A\"><qty>1</qty></item></feed>")
        let day2 = try directory.file("feed-2.xml", contents: "<feed><item sku=\"A\"><qty>4</qty></item></feed>")
        for day in [day1, day2] {
            let run = try runSluice([
                "import", day.path, "--record", "/feed/item", "--entity", "StockItem", "--key", "sku", "--to", store,
            ])
            #expect(run.status == 0, "\(run.stderr)")
        }
        #expect(try Self.tables(store) == ["stock_item"])
        #expect(try sqliteRows(store, "SELECT sku, qty FROM stock_item") == [[.text("A"), .integer(4)]])
    }

    @Test func standardInputTakesTheNamesGivenAndTellsItsFormat() throws {
        let directory = try TemporaryDirectory()
        let store = directory.url.appendingPathComponent("s.sqlite").path
        let people = try runSluice(
            ["import", "-", "--entity", "people", "--to", store], input: Data("id,name\n1,Ann\n2,Bob\n".utf8))
        #expect(people.status == 0, "\(people.stderr)")
        let folks = try runSluice(
            ["import", "-", "--entity", "Person", "--table", "folks", "--to", store],
            input: Data("id;name\n1;Cy\n".utf8))
        #expect(folks.status == 0, "\(folks.stderr)")
        let dump = "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);\nINSERT INTO t VALUES (1, 'x');\n"
        let sql = try runSluice(["import", "-", "--to", store], input: Data(dump.utf8))
        #expect(sql.status == 0, "\(sql.stderr)")
        #expect(try Self.tables(store) == ["folks", "people", "t"])
        #expect(try sqliteRows(store, "SELECT name FROM folks") == [[.text("Cy")]])
        let unknown = try runSluice(["import", "-", "--to", store], input: Data("just words\n".utf8))
        #expect(unknown.status == 2 && unknown.stderr.contains("cannot tell the format of -"), "\(unknown.stderr)")
    }
}
