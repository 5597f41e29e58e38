import Foundation

/// What a run of the built `sluice` binary printed and how it exited.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// The repository's root (`Package.swift`'s folder), found from this file.
public let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../..").standardized

/// The built `sluice` binary (`make test` builds it before the tests run).
public let sluiceBinary = repositoryRoot.appendingPathComponent(".build/debug/sluice")

/// Runs the built `sluice` binary in the repository's root, as cron would, and waits for it.
/// - Parameters:
///   - environment: variables added to (or replacing) this process's environment.
///   - input: what the command reads on standard input (none: it reads nothing).
public func runSluice(
    _ arguments: [String], environment: [String: String] = [:], input: Data? = nil
) throws -> CommandResult {
    let process = Process()
    process.executableURL = sluiceBinary
    process.arguments = arguments
    process.currentDirectoryURL = repositoryRoot
    if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    let out = Pipe(), err = Pipe(), stdin = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input == nil ? FileHandle.nullDevice : stdin
    try process.run()
    if let input {
        let writer = stdin.fileHandleForWriting
        Thread {
            try? writer.write(contentsOf: input)
            try? writer.close()
        }.start()
    }
    // Standard error is drained beside standard output, so neither pipe can fill and stall the run.
    let errors = DrainedPipe(err)
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = errors.wait()
    process.waitUntilExit()
    return CommandResult(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: stderr, as: UTF8.self))
}

/// Starts the built `sluice` with its output discarded, for tests that kill it or run beside it.
public func startSluice(_ arguments: [String]) throws -> Process {
    let process = Process()
    process.executableURL = sluiceBinary
    process.arguments = arguments
    process.currentDirectoryURL = repositoryRoot
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
}

/// A pipe read to its end on a thread of its own.
private final class DrainedPipe: @unchecked Sendable {
    // @unchecked: `data` is written by the reading thread before `done` is signalled, read after.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }.start()
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}
