import Testing

@testable import Pipeline

/// The record of keys seen first: small integer ids in pages, other keys (and sparse ids) in the
/// arena — a repeat found either way, with where the key was first.
@Suite struct FirstKeysTests {
    @Test func denseIdsAreFoundInPages() {
        let keys = FirstKeys()
        for id in 0..<200_000 { #expect(keys.register(integer: id, line: id + 1, record: id + 1) == nil) }
        #expect(keys.register(integer: 123_456, line: 999_999, record: nil)?.line == 123_457)
    }

    /// Ids far apart (one per 65,536 slots) past the first pages go to the arena: still found as
    /// repeats, with their record number, without a page each.
    @Test func sparseIdsAreFoundWithoutAPageEach() {
        let keys = FirstKeys()
        let ids = (0..<1_000).map { $0 << 16 }
        for (offset, id) in ids.enumerated() {
            #expect(keys.register(integer: id, line: offset + 1, record: offset + 1) == nil)
        }
        for (offset, id) in ids.enumerated() {
            let first = keys.register(integer: id, line: 5_000, record: 5_000)
            #expect(first?.line == offset + 1, "\(id)")
            if offset >= 4 { #expect(first?.record == offset + 1, "the arena keeps the record number") }
        }
        #expect(keys.pageCount <= 4)
    }
}
