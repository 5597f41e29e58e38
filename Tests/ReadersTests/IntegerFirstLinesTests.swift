import Readers
import Testing

/// The first line of small integer keys, by value in pages: what a lookup answers for values new,
/// seen, asked without registering, beyond every page, and in pages too sparse to make.
@Suite struct IntegerFirstLinesTests {
    @Test func linesAreToldAsGivenAndLookupsRegisterOnlyWhenAsked() {
        var lines = IntegerFirstLines()
        #expect(lines.register(7, line: 0, insert: false) == .new)
        #expect(lines.contains(7) == false)
        #expect(lines.register(7, line: 0) == .new)
        #expect(lines.register(7, line: 12) == .first(line: 0))
        #expect(lines.register(8, line: Int.max) == .new)
        #expect(lines.register(8, line: 1) == .first(line: Int(Int32.max) - 1), "kept in 32 bits")
        #expect(lines.contains(7) == true)
        #expect(lines.contains(IntegerFirstLines.limit - 1) == false, "beyond every page made")
        #expect(lines.pageCount == 1)
    }

    @Test func pagesTooSparseToMakeAreElsewhereForGood() {
        var lines = IntegerFirstLines()
        for page in 0..<4 { #expect(lines.register(page << 16, line: page) == .new) }
        #expect(lines.register(9 << 16, line: 9) == .elsewhere)
        #expect(lines.contains(9 << 16) == nil)
        #expect(lines.contains(9 << 16 | 1) == nil, "the whole page stays elsewhere")
        #expect(lines.register(9 << 16 | 1, line: 10, insert: false) == .elsewhere)
        // Dense enough again: a page is made once the pages hold a key per 16 slots.
        for value in 1..<(4 << 12) { _ = lines.register(value, line: value) }
        #expect(lines.register(20 << 16, line: 1) == .new)
        #expect(lines.pageCount == 5)
        #expect(lines.register(9 << 16, line: 2) == .elsewhere)
    }

    @Test func onlyNumbersWrittenAsThemselvesAreSmallIntegers() {
        func read(_ text: String) -> Int? {
            Array(text.utf8).withUnsafeBytes { IntegerFirstLines.smallInteger($0) }
        }
        #expect(read("0") == 0)
        #expect(read("67108863") == IntegerFirstLines.limit - 1)
        for text in ["", "00", "007", "+7", "-7", "7.0", "7 ", "67108864", "123456789", "٣"] {
            #expect(read(text) == nil, "\(text.debugDescription)")
        }
    }
}
