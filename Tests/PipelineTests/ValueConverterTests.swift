import Foundation
import ObjectGraph
import Pipeline
import Readers
import Testing

@Suite struct ValueConverterTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let type: AttributeType
        let input: String?
        /// The expected value, or `nil` for a failure with `rule`.
        let value: AttributeValue?
        var rule: ConversionFailure.Rule?
        var field: @Sendable (inout PipelineConfig.Field) -> Void = { _ in }
        var testDescription: String { "\(type) \(input.map { $0.debugDescription } ?? "nil")" }
    }

    static func utc(_ text: String) -> AttributeValue { .date(ISO8601DateFormatter().date(from: text)!) }

    static let cases: [Case] = [
        Case(type: .integer64, input: "42", value: .integer(42)),
        Case(type: .integer64, input: "-9223372036854775808", value: .integer(.min)),
        Case(type: .integer64, input: "9223372036854775808", value: nil, rule: .integer),
        Case(type: .integer16, input: "40000", value: nil, rule: .range),
        Case(type: .integer32, input: "1.5", value: nil, rule: .integer),
        Case(type: .integer32, input: " 7", value: nil, rule: .integer),
        Case(type: .integer32, input: " 7", value: .integer(7), field: { $0.transforms = [.trim] }),
        Case(type: .decimal, input: "19.99", value: .decimal(Decimal(string: "19.99")!)),
        Case(type: .decimal, input: "0.1", value: .decimal(Decimal(string: "0.1")!)),
        Case(type: .decimal, input: "1,5", value: nil, rule: .decimal),
        Case(
            type: .decimal, input: "611.66999999999995905", value: .decimal(Decimal(string: "611.66999999999995905")!)),
        Case(type: .decimal, input: "-.5", value: .decimal(Decimal(string: "-0.5")!)),
        Case(type: .decimal, input: "+1e3", value: .decimal(Decimal(1000))),
        Case(type: .decimal, input: "2.", value: .decimal(Decimal(2))),
        Case(type: .decimal, input: "12abc", value: nil, rule: .decimal),
        Case(type: .decimal, input: "1e", value: nil, rule: .decimal),
        Case(type: .decimal, input: ".", value: nil, rule: .decimal),
        Case(type: .decimal, input: "1.5.5", value: nil, rule: .decimal),
        Case(
            type: .decimal, input: "1,5", value: .decimal(Decimal(string: "1.5")!),
            field: { $0.transforms = [.replace(",", with: ".")] }),
        Case(type: .decimal, input: "1234567890123456789012345678901234567890.5", value: nil, rule: .decimal),
        Case(type: .double, input: "2.5e3", value: .double(2500)),
        Case(type: .double, input: "two", value: nil, rule: .number),
        Case(type: .float, input: "1e39", value: nil, rule: .range),
        Case(type: .boolean, input: "Yes", value: .boolean(true)),
        Case(type: .boolean, input: "0", value: .boolean(false)),
        Case(type: .boolean, input: "maybe", value: nil, rule: .boolean),
        Case(
            type: .boolean, input: "Y", value: .boolean(true),
            field: {
                $0.trueWords = ["y"]
                $0.falseWords = ["n"]
            }),
        Case(type: .date, input: "2024-01-31", value: utc("2024-01-31T00:00:00Z")),
        Case(type: .date, input: "2024-01-31T12:30:00Z", value: utc("2024-01-31T12:30:00Z")),
        Case(
            type: .date, input: "31/01/2024", value: utc("2024-01-31T00:00:00Z"),
            field: { $0.date = .pattern("dd/MM/yyyy") }),
        Case(type: .date, input: "30/02/2024", value: nil, rule: .date, field: { $0.date = .pattern("dd/MM/yyyy") }),
        Case(
            type: .date, input: "1706700000", value: .date(Date(timeIntervalSince1970: 1_706_700_000)),
            field: { $0.date = .unixSeconds }),
        Case(type: .date, input: "yesterday", value: nil, rule: .date),
        Case(
            type: .uuid, input: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            value: .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)),
        Case(type: .uuid, input: "not-a-uuid", value: nil, rule: .uuid),
        Case(type: .binary, input: "q83v", value: .binary(Data([0xAB, 0xCD, 0xEF]))),
        Case(type: .binary, input: "ABcdEF", value: .binary(Data([0xAB, 0xCD, 0xEF])), field: { $0.binary = .hex }),
        Case(type: .binary, input: "ABC", value: nil, rule: .binary, field: { $0.binary = .hex }),
        Case(type: .uri, input: "https://example.com/a?b=1", value: .uri(URL(string: "https://example.com/a?b=1")!)),
        Case(type: .uri, input: "relative/path", value: nil, rule: .uri),
        Case(type: .string, input: "  Ada  ", value: .string("ada"), field: { $0.transforms = [.trim, .lowercase] }),
        Case(
            type: .string, input: "SKU-00123", value: .string("00123"),
            field: { $0.transforms = [.capture(#"SKU-(\d+)"#)] }),
        Case(
            type: .string, input: "X-1", value: nil, rule: .transform,
            field: { $0.transforms = [.capture(#"SKU-(\d+)"#)] }),
        Case(type: .string, input: "007", value: .string("007")),
        Case(type: .string, input: nil, value: .null),
        Case(type: .string, input: "NULL", value: .null, field: { $0.nulls = ["NULL"] }),
        Case(type: .integer64, input: nil, value: .integer(5), field: { $0.defaultValue = .integer(5) }),
        Case(
            type: .integer64, input: "n/a", value: .integer(5),
            field: {
                $0.nulls = ["n/a"]
                $0.defaultValue = .integer(5)
            }),
        // What the byte-level readers (`convert(_:field:)`) must take or leave exactly as the text path does.
        Case(type: .integer64, input: "+5", value: .integer(5)),
        Case(type: .integer64, input: "-0", value: .integer(0)),
        Case(type: .integer64, input: "007", value: .integer(7)),
        Case(type: .integer64, input: "9223372036854775807", value: .integer(.max)),
        Case(type: .integer64, input: "-9223372036854775809", value: nil, rule: .integer),
        Case(type: .integer64, input: "99999999999999999999999", value: nil, rule: .integer),
        Case(type: .integer64, input: "", value: .null),  // an empty value is an absent one
        Case(type: .integer64, input: "-", value: nil, rule: .integer),
        Case(type: .integer64, input: "1_000", value: nil, rule: .integer),
        Case(type: .integer64, input: "\u{0663}", value: nil, rule: .integer),
        Case(type: .integer32, input: "-2147483649", value: nil, rule: .range),
        Case(type: .integer64, input: "", value: .null, field: { $0.nulls = [""] }),
        Case(type: .decimal, input: "-0.0", value: .decimal(Decimal(0))),
        Case(type: .decimal, input: "00.50", value: .decimal(Decimal(string: "0.5")!)),
        Case(type: .decimal, input: "", value: .null),
        Case(type: .decimal, input: "-", value: nil, rule: .decimal),
        Case(type: .date, input: "2023-02-29", value: nil, rule: .date),
        Case(type: .date, input: "2024-02-29T23:59:60Z", value: nil, rule: .date),
        Case(
            type: .date, input: "2024-02-29T23:59:59.5+01:00",
            value: .date(ISO8601DateFormatter().date(from: "2024-02-29T22:59:59Z")!.addingTimeInterval(0.5))),
        Case(type: .date, input: "2024-01-31 ", value: nil, rule: .date),
        Case(type: .date, input: "2024-01-31", value: .null, field: { $0.nulls = ["2024-01-31"] }),
    ]

    @Test(arguments: cases)
    func convertsExactlyOrFails(_ test: Case) throws {
        var field = PipelineConfig.Field(attribute: "a", from: "a")
        test.field(&field)
        let converter = try ValueConverter(field: field, attribute: AttributeDescription(name: "a", type: test.type))
        // A record's field converts as its text does (integers, decimals and dates are read from its bytes).
        let record = Record(
            fields: [test.input], context: Record.Context(file: "t.csv", schema: RecordSchema(names: ["a"]), kind: nil))
        #expect(converter.convert(record, field: 0) == converter.convert(test.input))
        #expect(converter.convert(record, field: 1) == converter.convert(nil), "an absent field is null")
        switch converter.convert(test.input) {
        case .success(let value):
            #expect(value == test.value, "got \(value)")
        case .failure(let failure):
            #expect(test.value == nil && failure.rule == test.rule, "\(failure)")
            #expect(failure.raw == test.input && failure.message.hasPrefix("a: \(test.input!.debugDescription) "))
        }
    }

    @Test func theSourcesNullMarkersApplyToo() throws {
        let converter = try ValueConverter(
            field: PipelineConfig.Field(attribute: "a", from: "a"),
            attribute: AttributeDescription(name: "a", type: .integer64), sourceNulls: [""])
        #expect(try converter.convert("").get() == .null)
    }
}
