import Readers
import Testing

func readXML(_ text: String, _ specs: [RecordSpec], namespaces: [String: String] = [:]) throws -> [Record] {
    var results: [[Record]] = []
    for chunk in [Int.max, 1, 7] {
        let reader = try XMLReader(
            source: MemoryByteSource(Array(text.utf8), name: "t.xml", chunkSize: chunk), specs: specs,
            namespaces: namespaces)
        var records: [Record] = []
        while let record = try reader.next() { records.append(record) }
        results.append(records)
    }
    #expect(results.allSatisfy { $0.map(\.strings) == results[0].map(\.strings) }, "chunked reads must agree")
    return results[0]
}

func xmlError(_ text: String, _ spec: RecordSpec) -> ReaderError? {
    do {
        _ = try readXML(text, [spec])
        return nil
    } catch {
        return error as? ReaderError
    }
}

@Suite struct XMLReaderTests {
    static let orders = RecordSpec(
        path: "/orders/order",
        fields: [
            ("number", "@id"), ("customer", "customer/@ref"), ("note", "note"), ("city", "ship-to/city"),
            ("missing", "nothing"), ("text", "."),
        ],
        children: [
            RecordSpec(path: "line", kind: "line", fields: [("sku", "@sku"), ("qty", "@qty")])
        ])

    @Test func recordsFieldsAndChildRecordsFollowThePaths() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <orders>
              <order id="7"><customer ref="c1"/><note>Fragile &amp; &lt;heavy&gt; &#x2603; &#65;</note>
                <ship-to><city>Zürich</city></ship-to>
                <line sku="A" qty="1"/><line sku="B" qty="2"/>
              </order>
              <order id="8"><note><![CDATA[<raw> & "quoted"]]></note><note>second note is ignored</note></order>
            </orders>
            """
        let records = try readXML(text, [Self.orders])
        #expect(records.map(\.kind) == [nil, "line", "line", nil])
        let first = records[0]
        #expect(first["number"] == "7" && first["customer"] == "c1" && first["city"] == "Zürich")
        #expect(first["note"] == "Fragile & <heavy> ☃ A")
        #expect(first.isNull(4), "an absent element is null")
        #expect(first.number == 1 && first.position.line == 3)
        #expect(records[1].strings == ["A", "1"] && records[1].parentRecord == 1 && records[2].strings == ["B", "2"])
        #expect(records[3]["note"] == "<raw> & \"quoted\"" && records[3]["number"] == "8" && records[3].isNull(1))
        #expect(records[3].number == 4 && records[3].parentRecord == nil)
    }

    @Test func namespacePrefixesBindToURIs() throws {
        let text = """
            <a:feed xmlns:a="urn:feed" xmlns:x="urn:extra"><a:item x:id="1"><a:title>One</a:title><title>plain</title>\
            </a:item><item/></a:feed>
            """
        let spec = RecordSpec(path: "/f:feed/f:item", fields: [("id", "@e:id"), ("title", "f:title")])
        let records = try readXML(text, [spec], namespaces: ["f": "urn:feed", "e": "urn:extra"])
        #expect(records.map(\.strings) == [["1", "One"]])
        #expect { _ = try XMLReader(source: MemoryByteSource("<a/>"), specs: [spec]) } throws: { error in
            (error as? ReaderError)?.kind == .invalidOption
        }
    }

    @Test func severalRecordKindsInOnePassAndDeclaredEncodings() throws {
        let specs = [
            RecordSpec(path: "/d/c", fields: [("n", ".")]), RecordSpec(path: "/d/p", fields: [("n", "@n")]),
        ]
        #expect(try readXML("<d><c>x</c><p n='y'/><c>z</c></d>", specs).map(\.strings) == [["x"], ["y"], ["z"]])
        let latin1: [UInt8] =
            Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><d><c>".utf8) + [0x4A, 0xFC] + Array("</c></d>".utf8)
        let reader = try XMLReader(source: MemoryByteSource(latin1), specs: specs)
        #expect(try reader.next()?.strings == ["Jü"])
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("<d><c>b</c></d>".utf8)
        #expect(try XMLReader(source: MemoryByteSource(bom), specs: specs).next()?.strings == ["b"])
    }

    @Test func malformedXMLIsAnErrorWithLineAndColumn() throws {
        let error = try #require(xmlError("<orders>\n<order id=\"1\">\n</orders>", Self.orders))
        #expect(error.kind == .malformedXML && error.position?.line == 3)
        let unclosed = try #require(xmlError("<orders><order id=\"1\">", Self.orders))
        #expect(unclosed.kind == .malformedXML)
        let badAttribute = try #require(xmlError("<orders><order id=1/></orders>", Self.orders))
        #expect(badAttribute.kind == .malformedXML && badAttribute.position?.line == 1)
    }

    @Test func bytesInvalidInTheDeclaredEncodingAreAnError() throws {
        let bad: [UInt8] =
            Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<orders><order id=\"1\"><note>".utf8) + [0xC3, 0x28]
            + Array("</note></order></orders>".utf8)
        let reader = try XMLReader(source: MemoryByteSource(bad, name: "bad.xml"), specs: [Self.orders])
        #expect { _ = try reader.next() } throws: { error in
            (error as? ReaderError).map {
                $0.kind == .malformedXML && $0.position?.line == 2 && $0.message.contains("UTF-8")
            } ?? false
        }
    }

    @Test func externalEntitiesAndEntityExpansionAreRefused() throws {
        let xxe = """
            <?xml version="1.0"?>
            <!DOCTYPE orders [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
            <orders><order id="1"><note>&secret;</note></order></orders>
            """
        let error = try #require(xmlError(xxe, Self.orders))
        #expect(error.kind == .malformedXML && error.message.contains("secret"))
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE orders [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c \
            "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>
            <orders><order id="1"><note>&c;</note></order></orders>
            """
        #expect(xmlError(laughs, Self.orders)?.kind == .malformedXML)
    }

    @Test func ampersandsInAttributesAndTextAreDecodedOnce() throws {
        let text = """
            <d><r a="Toys &amp; Games" b="&#38;x" c="&amp;#38;" e="&lt;&amp;&gt;&quot;&apos;" f="&amp;&amp;"><t>A \
            &amp; B &#38; C</t></r></d>
            """
        let spec = RecordSpec(
            path: "/d/r", fields: [("a", "@a"), ("b", "@b"), ("c", "@c"), ("e", "@e"), ("f", "@f"), ("t", "t")])
        #expect(
            try readXML(text, [spec]).map(\.strings) == [["Toys & Games", "&x", "&#38;", "<&>\"'", "&&", "A & B & C"]])
    }

    @Test func nestedTextFieldsAndAttributesInsideThemKeepTheirOwnBytes() throws {
        let text = """
            <d><r id="1">head <address kind="home &amp; work"><street>Main</street> <city code="Z">Zürich</city>\
            </address> tail</r></d>
            """
        let spec = RecordSpec(
            path: "/d/r",
            fields: [
                ("all", "."), ("address", "address"), ("kind", "address/@kind"), ("city", "address/city"),
                ("code", "address/city/@code"),
                ("id", "@id"), ("city again", "address/city"),
            ])
        let record = try #require(try readXML(text, [spec]).first)
        #expect(
            record.strings == ["head Main Zürich tail", "Main Zürich", "home & work", "Zürich", "Z", "1", "Zürich"])
    }

    @Test func grandchildRecordsFollowTheirParentsDepthFirst() throws {
        let text = """
            <orders>
              <order id="1"><line no="1"><serial>s1</serial><serial>s2</serial></line><line no="2"/><note>after the \
            lines</note></order>
              <order id="2"><line no="1"><serial>s3</serial></line></order>
            </orders>
            """
        let spec = RecordSpec(
            path: "/orders/order", fields: [("id", "@id"), ("note", "note")],
            children: [
                RecordSpec(
                    path: "line", kind: "line", fields: [("no", "@no")],
                    children: [
                        RecordSpec(path: "serial", kind: "serial", fields: [("value", ".")])
                    ])
            ])
        let records = try readXML(text, [spec])
        #expect(
            records.map(\.strings) == [
                ["1", "after the lines"], ["1"], ["s1"], ["s2"], ["2"], ["2", nil], ["1"], ["s3"],
            ])
        #expect(records.map(\.kind) == [nil, "line", "serial", "serial", "line", nil, "line", "serial"])
        #expect(records.map(\.number) == Array(1...8))
        #expect(records.map(\.parentRecord) == [nil, 1, 2, 2, 1, nil, 6, 7])
    }

    @Test func recordsNestedInRecordsOfAnotherSpecAreBothRead() throws {
        let specs = [
            RecordSpec(path: "/a/b", fields: [("n", "@n")]), RecordSpec(path: "/a/b/c", fields: [("v", ".")]),
        ]
        // A record is queued when its element ends.
        #expect(
            try readXML("<a><b n='1'><c>x</c><c>y</c></b><b n='2'/></a>", specs).map(\.strings) == [
                ["x"], ["y"], ["1"], ["2"],
            ])
    }

    @Test func fieldsCarryThePositionOfTheirElement() throws {
        let text = "<d>\n<r id='1'>\n  <name>n</name>\n  <x>\n    <city>c</city></x></r></d>"
        let spec = RecordSpec(
            path: "/d/r", fields: [("id", "@id"), ("name", "name"), ("city", "x/city"), ("none", "none")])
        let record = try #require(try readXML(text, [spec]).first)
        #expect(record.position.line == 2 && record.position(ofField: 0).line == 2)
        #expect(record.position(ofField: 1).line == 3 && record.position(ofField: 2).line == 5)
        #expect(record.position(ofField: 3).line == 2, "an absent field is placed at its record")
    }

    @Test func recordsKeptByTheCallerAreNotOverwrittenByLaterOnes() throws {
        let count = 3000
        var text = "<d>"
        for i in 0..<count { text += "<r id='\(i)'><v>\(String(repeating: "x", count: i % 50))</v></r>" }
        text += "</d>"
        let reader = try XMLReader(
            source: MemoryByteSource(Array(text.utf8), chunkSize: 1000),
            specs: [RecordSpec(path: "/d/r", fields: [("id", "@id"), ("v", "v")])])
        var records: [Record] = []
        while let record = try reader.next() { records.append(record) }
        #expect(records.count == count)
        #expect(
            records.indices.allSatisfy { records[$0].strings == ["\($0)", String(repeating: "x", count: $0 % 50)] })
    }

    @Test func badPathsAreRefusedBeforeReading() {
        let bad = [
            RecordSpec(path: "d/r", fields: []),
            RecordSpec(path: "/", fields: []),
            RecordSpec(path: "/d/r", fields: [("x", "@")]),
            RecordSpec(path: "/d/r", fields: [], children: [RecordSpec(path: "/d/r/c", fields: [])]),
            RecordSpec(path: "/d/r", fields: [], children: [RecordSpec(path: "", fields: [])]),
        ]
        for spec in bad {
            #expect(throws: ReaderError.self) { _ = try XMLReader(source: MemoryByteSource("<d/>"), specs: [spec]) }
        }
    }
}
