import Foundation
import ModelFiles
import ObjectGraph
import Readers
import TestSupport
import Testing

@Suite struct ModelInferenceTests {
    static func write(_ folder: TemporaryDirectory, _ name: String, _ text: String) throws -> String {
        try folder.file(name, contents: text).path
    }

    @Test func csvFilesGiveTypedEntitiesKeysAndRelationships() throws {
        let folder = try TemporaryDirectory()
        var inference = ModelInference()
        try inference.add(
            inputAt: try Self.write(
                folder, "customers.csv",
                "id;name;signup_date;balance;vip\n1;Ada;2023-01-02;12.50;true\n2;Bob;2024-02-03;-3;false\n"))
        try inference.add(
            inputAt: try Self.write(
                folder, "order_lines.csv",
                "id,customer_id,qty,weight,note\n1,1,3,1.5e3,\n2,2,4,2,\"x, y\"\n3,1,5,0.25,z\n"))
        let text = inference.modelFile()
        let model = try ModelFile.load(text: text, file: "inferred.yaml")
        let customer = try #require(model["Customer"]), line = try #require(model["OrderLine"])
        #expect(
            customer.attribute(named: "signupDate")?.type == .calendarDate
                && customer.attribute(named: "balance")?.type == .decimal)
        // `12.50` and `-3` are written with different scales: none is declared.
        #expect(customer.attribute(named: "balance")?.scale == nil)
        #expect(
            customer.attribute(named: "vip")?.type == .boolean && customer.attribute(named: "name")?.isOptional == false
        )
        #expect(customer.uniquenessConstraints == [["id"]])
        #expect(line.attribute(named: "qty")?.type == .integer64 && line.attribute(named: "weight")?.type == .double)
        #expect(line.attribute(named: "note")?.isOptional == true)
        #expect(line.relationship(named: "customer")?.destinationEntity === customer)
        #expect(customer.relationship(named: "orderLines")?.isToMany == true)
    }

    @Test func dumpKeysAndForeignKeysAreUsed() throws {
        let folder = try TemporaryDirectory()
        let dump = try Self.write(
            folder, "legacy.sql",
            """
            CREATE TABLE makers(code TEXT PRIMARY KEY, name TEXT);
            CREATE TABLE widgets(id INTEGER PRIMARY KEY, maker TEXT REFERENCES makers(code), size REAL);
            INSERT INTO makers VALUES('a','Acme'),('b',NULL);
            INSERT INTO widgets VALUES(1,'a',2.5),(2,'b',NULL);
            """)
        var inference = ModelInference()
        try inference.add(inputAt: dump)
        let model = try ModelFile.load(text: inference.modelFile(), file: "inferred.yaml")
        let maker = try #require(model["Maker"]), widget = try #require(model["Widget"])
        #expect(maker.uniquenessConstraints == [["code"]] && maker.attribute(named: "name")?.isOptional == true)
        #expect(widget.relationship(named: "maker")?.destinationEntity === maker)
        #expect(
            widget.attribute(named: "size")?.type == .double, "the declared REAL wins over the decimal-looking text")
    }

    @Test func xmlRecordsAndTheirChildrenBecomeRelatedEntities() throws {
        let folder = try TemporaryDirectory()
        let xml = try Self.write(
            folder, "feed.xml",
            """
            <orders><order id="1"><placed>2024-01-01</placed><line sku="A" qty="1"/><line sku="B" qty="2"/></order>
            <order id="2"><placed>2024-01-02</placed><line sku="C" qty="3"/></order></orders>
            """)
        var inference = ModelInference()
        #expect(throws: ReaderError.self) { try inference.add(inputAt: xml) }
        try inference.add(inputAt: xml, recordPath: "/orders/order")
        let model = try ModelFile.load(text: inference.modelFile(), file: "inferred.yaml")
        let order = try #require(model["Order"]), line = try #require(model["Line"])
        #expect(order.attribute(named: "placed")?.type == .calendarDate && order.uniquenessConstraints == [["id"]])
        #expect(
            line.relationship(named: "order")?.destinationEntity === order
                && order.relationship(named: "lines")?.deleteRule == .cascade)
    }

    @Test func formatsAreDetected() throws {
        let folder = try TemporaryDirectory()
        #expect(try InputFormat.detect(path: try Self.write(folder, "a.csv", "x\n1\n")) == .csv)
        #expect(try InputFormat.detect(path: try Self.write(folder, "noext", "  <a/>")) == .xml)
        #expect(throws: ReaderError.self) { try InputFormat.detect(path: try Self.write(folder, "mystery", "hello")) }
    }
}
