import Foundation
import TestSupport
import Testing

@testable import Pipeline

@Suite struct StoreLockTests {
    @Test func aSecondWriterIsRefusedUntilTheFirstReleases() throws {
        let dir = try TemporaryDirectory()
        let target = dir.url.appendingPathComponent("shop.sqlite").path
        var first: StoreLock? = try StoreLock(forStoreAt: target)
        #expect(first?.path == target + ".lock")
        #expect(throws: StoreLock.Error.locked(path: target + ".lock")) { try StoreLock(forStoreAt: target) }
        first = nil
        _ = try StoreLock(forStoreAt: target)
        #expect(throws: StoreLock.Error.self) { try StoreLock(forStoreAt: "/nonexistent-dir/x.sqlite") }
    }
}
