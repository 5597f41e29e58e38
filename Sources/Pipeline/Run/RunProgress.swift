import Foundation
import Readers

/// What a run has done so far, for the progress line: the current source, its records imported,
/// and the share of its file done — the file's bytes read against its size, scaled by the share of
/// the records read that are imported (reading runs a few batches ahead).
final class RunProgress: @unchecked Sendable {
    // @unchecked: every stored property is only touched with `lock` held.
    private let lock = NSLock()
    private var source = ""
    private var records = 0
    private var readRecords = 0
    private var started = Date()
    private var counter: CountingByteSource?
    private var totalBytes: Int64 = 0

    func begin(source: String, counter: CountingByteSource?, path: String) {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        lock.withLock {
            self.source = source
            records = 0
            readRecords = 0
            started = Date()
            self.counter = counter
            totalBytes = size
        }
    }

    /// The pass over a file goes on with the records of another source of the same file.
    func switchTo(source: String) { lock.withLock { self.source = source } }

    /// Records handed to the contexts.
    func read(records count: Int) { lock.withLock { readRecords += count } }
    /// Records imported (mapped, saved or rejected).
    func add(records count: Int) { lock.withLock { records += count } }

    /// `orders: 523,000 records, 181,000/s, 45%, about 12 s left`.
    var line: String {
        lock.withLock {
            let seconds = max(Date().timeIntervalSince(started), 0.001)
            var text = "\(source): \(records.formatted()) records, \(Int(Double(records) / seconds).formatted())/s"
            if let counter, totalBytes > 0 {
                let imported = readRecords > 0 ? min(1, Double(records) / Double(readRecords)) : 0
                let fraction = min(1, Double(counter.bytesRead) / Double(totalBytes)) * imported
                text += ", \(Int(fraction * 100))%"
                if fraction > 0.01 && fraction < 1 {
                    text += ", about \(Int(seconds / fraction * (1 - fraction)) + 1) s left"
                }
            }
            return text
        }
    }
}

/// Rewrites one status line on standard error every half second until stopped (only when standard
/// error is a terminal: logs of cron runs stay clean).
final class ProgressLine: @unchecked Sendable {
    // @unchecked: `stopped` is only touched with `condition` locked.
    private let condition = NSCondition()
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init(_ progress: RunProgress) {
        let thread = Thread { [self] in
            var width = 0
            condition.lock()
            while !stopped {
                _ = condition.wait(until: Date().addingTimeInterval(0.5))
                if stopped { break }
                let text = progress.line
                FileHandle.standardError.write(
                    Data(("\r" + text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0)).utf8))
                width = text.count
            }
            condition.unlock()
            if width > 0 {
                FileHandle.standardError.write(Data(("\r" + String(repeating: " ", count: width) + "\r").utf8))
            }
            done.signal()
        }
        thread.name = "sluice-progress"
        thread.start()
    }

    /// Clears the line and waits for the thread to end.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
        done.wait()
    }
}
