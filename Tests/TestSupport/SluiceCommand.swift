import Foundation
import Testing

/// What a run of the built `sluice` binary printed and how it exited.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// The repository's root (`Package.swift`'s folder), found from this file.
public let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../..").standardized

/// The `sluice` binary the CLI tests run: `SLUICE_BINARY` when set (a path, relative to the
/// repository's root or absolute), else the one built beside the
/// running test bundle — `<scratch path>/debug/sluice` next to `<scratch path>/debug/<…>.xctest`,
/// so `swift test --sanitize=thread --scratch-path .build-tsan` runs the thread-sanitized binary
/// `swift build --product sluice --sanitize=thread --scratch-path .build-tsan` made (`make tsan`).
/// - Throws: `SluiceBinaryError` when there is none (it says how to build one).
public var sluiceBinary: URL {
    get throws { try SluiceBinaryError.located.get() }
}

/// No `sluice` binary where the CLI tests look for it.
public struct SluiceBinaryError: Error, CustomStringConvertible, Sendable {
    /// The paths looked at.
    public var candidates: [String]
    /// Whether `SLUICE_BINARY` named them.
    public var fromEnvironment: Bool

    public var description: String {
        if fromEnvironment {
            return "SLUICE_BINARY names no executable file (\(candidates.joined())); point it at a built sluice binary"
        }
        let looked = candidates.isEmpty ? "the test bundle's folder is unknown" : candidates.joined(separator: ", ")
        return "no sluice binary beside the test bundle (\(looked)): build it with the flags the tests were built "
            + "with (`swift build --product sluice`, or for `make tsan` `swift build --product sluice "
            + "--sanitize=thread --scratch-path .build-tsan`), or set SLUICE_BINARY to its path"
    }

    /// The binary, looked for once per test process.
    static let located: Result<URL, SluiceBinaryError> = {
        let files = FileManager.default
        if let named = ProcessInfo.processInfo.environment["SLUICE_BINARY"], !named.isEmpty {
            let url = URL(fileURLWithPath: named, relativeTo: repositoryRoot).standardizedFileURL
            guard files.isExecutableFile(atPath: url.path) else {
                return .failure(SluiceBinaryError(candidates: [url.path], fromEnvironment: true))
            }
            return .success(url)
        }
        let candidates = testBundleFolders.map { $0.appendingPathComponent("sluice").path }
        guard let found = candidates.first(where: files.isExecutableFile(atPath:)) else {
            return .failure(SluiceBinaryError(candidates: candidates, fromEnvironment: false))
        }
        return .success(URL(fileURLWithPath: found))
    }()

    /// The folders the test bundle may be in: on Linux the test executable is `Bundle.main`
    /// (`<scratch path>/debug/<package>PackageTests.xctest`); on macOS `xctest` loads the
    /// `.xctest` bundle, one of `Bundle.allBundles`.
    private static var testBundleFolders: [URL] {
        var folders = Bundle.allBundles.filter { $0.bundlePath.hasSuffix(".xctest") }.map {
            $0.bundleURL.resolvingSymlinksInPath().deletingLastPathComponent()
        }
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            folders.append(executable.deletingLastPathComponent())
        }
        var seen = Set<String>()
        return folders.filter { seen.insert($0.path).inserted }
    }
}

/// Runs the built `sluice` binary (`sluiceBinary`) in the repository's root, as cron would, and
/// waits for it. A binary built with the thread sanitizer that reports a data race (on standard
/// error, then exit status 66) records an issue with the report, at the caller.
/// - Parameters:
///   - environment: variables added to (or replacing) this process's environment.
///   - input: what the command reads on standard input (none: it reads nothing).
///   - launcher: a program and its arguments that run `sluice` (`["/usr/bin/strace", …]`); none: run
///     directly.
public func runSluice(
    _ arguments: [String], environment: [String: String] = [:], input: Data? = nil, launcher: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> CommandResult {
    let process = Process()
    if let program = launcher.first {
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = launcher.dropFirst() + [try sluiceBinary.path] + arguments
    } else {
        process.executableURL = try sluiceBinary
        process.arguments = arguments
    }
    process.currentDirectoryURL = repositoryRoot
    // Every import plans from a sample of one record per CSV input (`SampledImport`), so that each test
    // input checks the one-pass import against the whole inputs' plan, both when it stands and not.
    process.environment = ProcessInfo.processInfo.environment.merging(["SLUICE_IMPORT_SAMPLE": "1"]) { $1 }
        .merging(environment) { $1 }
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
    let result = CommandResult(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: stderr, as: UTF8.self))
    if result.stderr.contains("WARNING: ThreadSanitizer:") {
        let command = "sluice " + arguments.joined(separator: " ")
        let report = "\(command) reported a data race (exit \(result.status)):\n\(result.stderr)"
        Issue.record(Comment(rawValue: report), sourceLocation: sourceLocation)
    }
    return result
}

/// Starts the built `sluice` with its output discarded, for tests that kill it or run beside it.
public func startSluice(_ arguments: [String]) throws -> Process {
    let process = Process()
    process.executableURL = try sluiceBinary
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
