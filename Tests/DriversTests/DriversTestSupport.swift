import Drivers
import Foundation
import TestSupport

/// Runs `body` with a folder of its own under the temporary directory, removed when `body` returns or
/// throws, so a test touches nothing outside it.
func withTemporaryFolder<Result>(_ body: (URL) throws -> Result) throws -> Result {
    let directory = try TemporaryDirectory()
    return try withExtendedLifetime(directory) { try body(directory.url) }
}

/// Opens (creating it) the database file `name` inside `folder`.
func openDatabase(in folder: URL, named name: String = "test.sqlite") throws -> SQLiteConnection {
    try SQLiteConnection(path: folder.appendingPathComponent(name).path)
}

/// A reproducible pseudo-random sequence (SplitMix64), so a failing split of the input can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `bytes` cut into pieces of the given sizes in turn (the last piece takes what is left).
func chunks(of bytes: [UInt8], sizes: [Int]) -> [[UInt8]] {
    var pieces: [[UInt8]] = []
    var start = 0, index = 0
    while start < bytes.count {
        let size = max(1, sizes[index % sizes.count])
        let end = min(bytes.count, start + size)
        pieces.append(Array(bytes[start..<end]))
        start = end
        index += 1
    }
    return pieces
}

/// `bytes` cut at random places (pieces of 1 to `maximum` bytes).
func randomChunks(of bytes: [UInt8], maximum: Int, seed: UInt64) -> [[UInt8]] {
    var generator = SeededGenerator(seed: seed)
    let sizes = (0..<max(1, bytes.count)).map { _ in Int.random(in: 1...maximum, using: &generator) }
    return chunks(of: bytes, sizes: sizes)
}
