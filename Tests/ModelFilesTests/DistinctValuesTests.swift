import Readers
import Testing

@testable import ModelFiles

/// Key detection keeps the values of a key candidate while they are all different: ids by value in
/// pages, other text by hash. These tests hold it to the plain rule — a value repeats exactly when
/// its text came before, reported with the line it came at first — on the shapes keys have.
@Suite struct DistinctValuesTests {
    /// Observes `values` (line = position + 1) in a key candidate; what it concluded.
    static func observed(_ values: [String]) -> ModelInference.Column {
        var column = ModelInference.Column(source: "id", keyCandidate: true)
        for (offset, value) in values.enumerated() { column.observe(value, line: offset + 1) }
        return column
    }

    /// The rule, on the text: the first value that repeats one before it, and both lines.
    static func firstRepeat(_ values: [String]) -> ModelInference.Column.KeyFlaw? {
        var first: [String: Int] = [:]
        for (offset, value) in values.enumerated() {
            if let line = first[value] { return .repeats(first: line, line: offset + 1) }
            first[value] = offset + 1
        }
        return nil
    }

    @Test func aMillionDenseIdsAreUniqueAndARepeatNamesBothLines() {
        var values = (1...1_000_000).map(String.init)
        #expect(Self.observed(values).isUnique)
        values.append("654321")
        let column = Self.observed(values)
        #expect(!column.isUnique)
        #expect(column.flaws == [.repeats(first: 654_321, line: 1_000_001)])
    }

    /// Numbers that are not written as themselves, large and sparse ids, and text: each its own
    /// value, compared as the text is written (`7` and `007` differ).
    @Test func everyShapeOfKeyRepeatsExactlyWhenItsTextDoes() {
        let shapes = [
            "0", "7", "007", "+7", "-7", "7.0", "65535", "65536", "67108863", "67108864", "99999999",
            "123456789012", "A-7", "7 ", "ß",
        ]
        #expect(Self.observed(shapes).isUnique)
        for value in shapes {
            let values = shapes + [value]
            #expect(Self.observed(values).flaws == [Self.firstRepeat(values)!], "\(value.debugDescription)")
        }
        // Ids one per page (odd; past the first four pages each page is too sparse to allocate, so
        // they are kept by hash), ids beyond the pages, then dense even ids: each shape repeated.
        let far: [String] = (0..<1_000).map { String($0 << 16 | 5) }
        let beyond: [String] = (0..<100).map { String(IntegerFirstLines.limit + $0) }
        let near: [String] = (0..<70_000).map { String($0 * 2) }
        let sparse = far + beyond + near
        #expect(Self.observed(sparse).isUnique)
        for repeated in [far[2], far[600], beyond[50], near[10], near[69_999]] {
            let values = sparse + [repeated]
            #expect(Self.observed(values).flaws == [Self.firstRepeat(values)!], "\(repeated)")
        }
    }

    /// Lines as the caller numbers them, 0 too (ids staged, and ids in pages).
    @Test func theFirstLineIsToldAsGiven() {
        for count in [10, 10_000] {
            var column = ModelInference.Column(source: "id", keyCandidate: true)
            column.observe("5", line: 0)
            for id in 6..<(count + 6) { column.observe(String(id), line: id) }
            column.observe("5", line: 99)
            #expect(column.flaws == [.repeats(first: 0, line: 99)], "\(count) ids")
        }
    }

    /// A `<name>_id` column of a SQL table is a reference only when each of its values is a key of
    /// its destination: asked of ids staged, ids in pages, ids kept by hash and text alike.
    @Test func referencesAreFoundAmongTheKeysWhateverTheirShape() throws {
        let few: [String] = ["1", "2", "3", String(40 << 16), String(41 << 16), "123456789012", "007", "A-1"]
        // Dense ids, then one per page: page 10 is made (the fourth), 11 and on are kept by hash.
        let many: [String] = few + (100..<5_000).map { String($0) } + (10..<40).map { String($0 << 16) }
        for keys in [few, many] {
            let distinct = try #require(Self.observed(keys).distinct)
            for value in keys { #expect(distinct.contains(.init(value)), "\(value)") }
            for value in ["4", "7", String(42 << 16), String(20 << 16 | 1), "123456789013", "7.0", "A-2", "5000"] {
                #expect(!distinct.contains(.init(value)), "\(value)")
            }
            var reference = ModelInference.Column(source: "customer_id", keyCandidate: false, declaredType: "INTEGER")
            for value in ["1", "007", "123456789012", String(41 << 16), "1"] { reference.observe(value) }
            if keys.count > few.count { reference.observe(String(20 << 16)) }
            #expect(reference.references?.allSatisfy(distinct.contains) == true)
            reference.observe("4")
            #expect(reference.references?.allSatisfy(distinct.contains) == false)
        }
    }
}
