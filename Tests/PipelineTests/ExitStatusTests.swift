import Foundation
import ModelFiles
import ObjectGraph
import Pipeline
import Readers
import Testing

/// `ExitStatus(for:)` chooses the status from the error's type and code (never its text), through
/// the `RunError` that wraps a reader's, a store's or a file's error.
@Suite struct ExitStatusTests {
    static let position = SourcePosition(file: "orders.csv", line: 12, column: 7)

    @Test func dataErrorsExitOne() {
        #expect(ExitStatus(for: RunError.tooManyRejects(count: 3, max: 0, rejects: nil)) == .dataErrors)
        #expect(ExitStatus(for: RunError.invalidGraph([])) == .dataErrors)
        #expect(ExitStatus(for: ValidationError(failures: [])) == .dataErrors)
        #expect(ExitStatus(for: StoreError(.constraintViolation, "taken")) == .dataErrors)
        #expect(ExitStatus(for: RunError.store(StoreError(.conflict, "changed"))) == .dataErrors)
    }

    @Test func usageModelAndPipelineErrorsExitTwo() {
        #expect(ExitStatus(for: PipelineFileError(issues: [])) == .usage)
        #expect(ExitStatus(for: ModelFileError(issues: [])) == .usage)
        #expect(ExitStatus(for: UsageError("--to must be sqlite")) == .usage)
        #expect(ExitStatus(for: ReaderError(.invalidOption, "no record path")) == .usage)
        #expect(
            ExitStatus(for: RunError.input(source: "orders", ReaderError(.invalidOption, "unbound prefix"))) == .usage)
        #expect(ExitStatus(for: RunError.store(StoreError(.incompatibleModel, "other model"))) == .usage)
        #expect(ExitStatus(for: RunError.unmappedRecord(source: "orders", kind: "note")) == .usage)
        let interrupted = InterruptedRun(target: "t.sqlite", reason: .needsResume, source: 1, batches: 2)
        #expect(ExitStatus(for: RunError.interrupted(interrupted)) == .usage)
    }

    @Test func inputStoreAndFileErrorsExitThree() {
        let ragged = ReaderError(.raggedRow, "the record has 5 fields, the header has 4", at: Self.position)
        #expect(ExitStatus(for: ragged) == .failure)
        #expect(ExitStatus(for: RunError.input(source: "orders", ragged)) == .failure)
        // A fault whose row could not be read: the context's recorded failure, thrown by the save.
        let io = StoreError(.io, "could not load a row", underlying: ragged)
        #expect(ExitStatus(for: RunError.store(io)) == .failure)
        #expect(ExitStatus(for: RunError.store(StoreError(.corrupt, "malformed"))) == .failure)
        #expect(
            ExitStatus(for: RunError.file(RunFileError(.sync, "the finished store", path: "/t", errno: EIO)))
                == .failure)
        #expect(ExitStatus(for: RunError.targetChanged(path: "/t")) == .failure)
        #expect(ExitStatus(for: RunError.batchNotSaved(source: "orders", underlying: io)) == .failure)
    }

    @Test func aHeldLockExitsFour() {
        #expect(ExitStatus(for: RunError.locked(path: "t.sqlite.lock")) == .locked)
    }

    @Test func wrappedErrorsKeepTheirTypeAndPosition() throws {
        let ragged = ReaderError(.raggedRow, "the record has 5 fields, the header has 4", at: Self.position)
        let error = RunError.input(source: "orders", ragged)
        let underlying = try #require(error.underlying as? ReaderError)
        #expect(underlying.kind == .raggedRow && underlying.position == Self.position)
        #expect("\(error)" == "source orders: orders.csv:12:7: the record has 5 fields, the header has 4")
    }
}
