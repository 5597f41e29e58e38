import Drivers
import Foundation
import Readers
import TestSupport
import Testing

/// Issue 33, point 5: FTS3 and FTS4 documents are read as their table's rows too, from the file,
/// from `sqlite3 .dump` (their `_content` shadow table) and from the script (`docid` named or not);
/// a full-text index over content kept elsewhere (external content, contentless) has no rows of its
/// own and is only named.
@Suite struct FullTextTableTests {
    static let script = """
        CREATE VIRTUAL TABLE old USING fts3(title, body, tokenize=porter);
        CREATE VIRTUAL TABLE mid USING fts4("the title", body TEXT, notindexed=body);
        CREATE TABLE src(id INTEGER PRIMARY KEY, t TEXT);
        CREATE VIRTUAL TABLE ext USING fts5(t, content='src', content_rowid='id');
        CREATE VIRTUAL TABLE bare USING fts4(t, content="");
        INSERT INTO old(docid, title, body) VALUES(7, 'a', 'b');
        INSERT INTO mid VALUES('c', 'd');
        INSERT INTO mid(mid) VALUES('optimize');
        INSERT INTO src VALUES(1, 'e');
        """

    static func rows(_ reader: some RecordReader) throws -> Set<[String?]> {
        var reader = reader
        var rows = Set<[String?]>()
        while let record = try reader.next() { rows.insert([record.kind] + record.strings) }
        return rows
    }

    @Test func documentsOfEveryVersionAreRowsFromTheFileItsDumpAndTheScript() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("x.db").path
        try SQLiteConnection(path: path, mode: .readWriteCreate).execute(Self.script)
        let file = try SQLiteFileReader(path: path)
        #expect(file.tables.map(\.name) == ["old", "mid", "src"])
        #expect(file.tables[1].columns.map(\.name) == ["the title", "body"])
        for name in ["ext", "bare"] {
            #expect(
                file.notImported.contains {
                    $0.hasPrefix("virtual table \"\(name)\"") && $0.contains("kept elsewhere")
                },
                "\(file.notImported)")
        }
        let expected: Set<[String?]> = [["old", "a", "b"], ["mid", "c", "d"], ["src", "1", "e"]]
        #expect(try Self.rows(file) == expected)
        for (name, text) in [("dump", try sqliteDump(path)), ("script", Self.script)] {
            let reader = try SQLDumpReader(source: MemoryByteSource(text, name: "\(name).sql"))
            #expect(try Self.rows(reader) == expected, "\(name)")
            #expect(Set(reader.notImported) == Set(file.notImported), "\(name)")
        }
    }

    @Test func declarationsAreReadAsSQLiteReadsThem() {
        let cases: [(String, [String], Bool)] = [
            ("CREATE VIRTUAL TABLE t USING fts5(a, b UNINDEXED, tokenize = 'porter ascii')", ["a", "b"], true),
            ("create virtual table t using FTS4([x y], `z`, prefix=\"2,3\")", ["x y", "z"], true),
            ("CREATE VIRTUAL TABLE t USING fts3(a, tokenize porter)", ["a"], true),
            ("CREATE VIRTUAL TABLE t USING fts5(a, content='', contentless_delete=1)", ["a"], false),
            ("CREATE VIRTUAL TABLE t USING fts5(\"a \"\"q\"\"\", content_rowid=id)", ["a \"q\""], true),
        ]
        for (sql, columns, own) in cases {
            let table = FullTextTable(name: "t", sql: sql)
            #expect(table?.columns == columns && table?.hasOwnContent == own, "\(sql)")
        }
        #expect(FullTextTable(name: "t", sql: "CREATE VIRTUAL TABLE t USING rtree(id, a, b)") == nil)
    }
}
