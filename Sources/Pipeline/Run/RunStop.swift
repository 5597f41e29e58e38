import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT, SIGTERM and SIGHUP, caught so that a run stops cleanly: the run checks `requested`
/// between batches and before committing, and fails with `RunError.stopped` — the work copy
/// removed, the report written. Outside a run (while `sluice import` infers its model) a signal
/// calls the handler given to `catchSignals(outsideRun:)`, which ends the process.
public enum RunStop {
    private static let received = Atomic<Int32>(0)
    private static let running = Atomic<Bool>(false)
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    /// The signal that asked the run to stop; `nil` while none has.
    public static var requested: Int32? {
        let signal = received.load(ordering: .acquiring)
        return signal == 0 ? nil : signal
    }

    /// Catches the signals from now on (call once, from the main thread, before any run).
    /// - Parameter outsideRun: what a signal does while no run is going (it ends the process).
    public static func catchSignals(outsideRun: @escaping @Sendable (Int32) -> Void) {
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                received.store(number, ordering: .releasing)
                if !running.load(ordering: .acquiring) { outsideRun(number) }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Marks a run going (the signal is left for it to see) or not.
    static func setRunning(_ value: Bool) { running.store(value, ordering: .releasing) }

    /// - Throws: `RunError.stopped` once a signal asked the run to stop.
    static func check() throws {
        if let requested { throw RunError.stopped(signal: requested) }
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
