import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT, SIGTERM and SIGHUP, caught so that a run stops cleanly: the run checks `requested`
/// between batches and before committing, and fails with `RunError.stopped` — the work copy
/// removed, the report written. Outside a run (while `sluice import` infers its model), at a
/// second signal, or when a run does not reach a check within `grace` (blocked opening a FIFO no
/// one writes), a signal calls the handler given to `catchSignals(outsideRun:)`, which ends the
/// process.
public enum RunStop {
    private static let received = Atomic<Int32>(0)
    private static let running = Atomic<Bool>(false)
    /// Tests: the checks left before the one that stops the run (0: no stop asked for).
    private static let checksBeforeStop = Atomic<Int>(0)
    private static let stopSignal = Atomic<Int32>(0)
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    /// The signal that asked the run to stop; `nil` while none has.
    public static var requested: Int32? {
        let signal = received.load(ordering: .acquiring)
        return signal == 0 ? nil : signal
    }

    /// How long a run has, after a signal, to reach a check and stop cleanly before the process
    /// ends anyway (its target as before: a work copy is removed by the next run).
    static let grace: DispatchTimeInterval = .seconds(10)

    /// Catches the signals from now on (call once, from the main thread, before any run).
    /// - Parameter outsideRun: what a signal does while no run is going (it ends the process).
    public static func catchSignals(outsideRun: @escaping @Sendable (Int32) -> Void) {
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let earlier = received.exchange(number, ordering: .acquiringAndReleasing)
                guard running.load(ordering: .acquiring) else { return outsideRun(number) }
                // A run stuck where it never checks (opening a FIFO no one writes, a hung mount)
                // still ends: at a second signal, or once the grace period passes.
                if earlier != 0 { return outsideRun(number) }
                DispatchQueue.global().asyncAfter(deadline: .now() + grace) {
                    if running.load(ordering: .acquiring) { outsideRun(number) }
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Marks a run going (the signal is left for it to see) or not.
    static func setRunning(_ value: Bool) { running.store(value, ordering: .releasing) }

    /// - Throws: `RunError.stopped` once a signal asked the run to stop.
    static func check() throws {
        if checksBeforeStop.load(ordering: .relaxed) > 0,
            checksBeforeStop.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0
        {
            received.store(stopSignal.load(ordering: .acquiring), ordering: .releasing)
        }
        if let requested { throw RunError.stopped(signal: requested) }
    }

    /// For tests in this process: the `check` number `checks` from now stops the run as `signal`
    /// would have, had it come just before — 1: the check as a run starts, then one after each batch
    /// (whichever context gets there first), one before the final stage and one before the commit.
    /// The stop stays asked for until `resetForTesting()`; it is one per process, so tests that run
    /// pipelines in process run one at a time.
    ///
    /// ```swift
    /// RunStop.stopForTesting(atCheck: 5)  // the check after the run's 4th batch stops it
    /// defer { RunStop.resetForTesting() }
    /// #expect(throws: RunError.self) { try runner.run() }
    /// ```
    static func stopForTesting(atCheck checks: Int, signal: Int32 = SIGTERM) {
        precondition(checks > 0, "a stop comes at a check from 1 on")
        stopSignal.store(signal, ordering: .releasing)
        checksBeforeStop.store(checks, ordering: .releasing)
    }

    /// For tests: forgets a stop asked for (`stopForTesting`) or made, so the next run goes.
    static func resetForTesting() {
        checksBeforeStop.store(0, ordering: .releasing)
        received.store(0, ordering: .releasing)
    }

    /// `SIGTERM`, `SIGINT`, … for the messages.
    public static func name(of signal: Int32) -> String {
        switch signal {
        case SIGINT: return "SIGINT"
        case SIGTERM: return "SIGTERM"
        case SIGHUP: return "SIGHUP"
        default: return "signal \(signal)"
        }
    }
}
