import Drivers
import Foundation

/// `data` as one gzip member: the deflate data of `Zlib.compress` (a zlib stream without its 2-byte
/// header and Adler-32 trailer) between a 10-byte gzip header and the CRC-32 and length trailer.
func gzipMember(_ data: Data, level: Int32 = 6) throws -> [UInt8] {
    let zlib = try Zlib.compress(data, level: level)
    var member: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]
    member += zlib.dropFirst(2).dropLast(4)
    let crc = Zlib.crc32(data), length = UInt32(truncatingIfNeeded: data.count)
    for shift in stride(from: 0, to: 32, by: 8) { member.append(UInt8(truncatingIfNeeded: crc >> shift)) }
    for shift in stride(from: 0, to: 32, by: 8) { member.append(UInt8(truncatingIfNeeded: length >> shift)) }
    return member
}

/// What `gunzip` decompressed.
struct Gunzipped {
    var bytes: [UInt8] = []
    /// Members whose trailer was read and checked.
    var members = 0
    /// Whether the input ended just after a member (not inside one).
    var endsBetweenMembers = false
}

/// The inflater consumed and produced nothing although input was left.
struct InflaterMadeNoProgress: Error {
    var offset: Int
}

/// Decompresses every member of `input` with one `GzipInflater`, handing it the input in pieces of
/// `inputSizes` (in turn) and an output buffer of `outputSize` bytes, as a streaming reader does.
/// - Throws: the inflater's `GzipError`.
func gunzip(_ input: [UInt8], inputSizes: [Int] = [Int.max], outputSize: Int = 1 << 16) throws -> Gunzipped {
    let inflater = try GzipInflater()
    var result = Gunzipped()
    var buffer = [UInt8](repeating: 0, count: outputSize)
    var start = 0, chunkEnd = 0, chunkIndex = 0
    while true {
        if start == chunkEnd, chunkEnd < input.count {
            let size = max(1, inputSizes[chunkIndex % inputSizes.count])
            chunkEnd = size >= input.count - chunkEnd ? input.count : chunkEnd + size
            chunkIndex += 1
        }
        if result.endsBetweenMembers {
            if start == input.count { break }
            inflater.startNextMember()
            result.endsBetweenMembers = false
        }
        let step = try input[start..<chunkEnd].withUnsafeBytes { piece in
            try buffer.withUnsafeMutableBytes { try inflater.inflate(input: piece, output: $0) }
        }
        result.bytes += buffer[0..<step.produced]
        start += step.consumed
        if step.endOfMember {
            result.members += 1
            result.endsBetweenMembers = true
        } else if step.consumed == 0, step.produced == 0 {
            guard start == input.count else { throw InflaterMadeNoProgress(offset: start) }
            break
        }
    }
    return result
}

/// Text that compresses well but not trivially: numbered lines with a few repeating words.
func sampleText(lines: Int) -> Data {
    let words = ["alpha", "beta", "gamma", "delta", "caf\u{E9}", "\u{1F600}"]
    var text = ""
    for line in 0..<lines { text += "\(line): \(words[line % words.count]) \(words[(line * 7) % words.count])\n" }
    return Data(text.utf8)
}

/// Bytes that do not compress (pseudo-random, reproducible).
func incompressibleBytes(count: Int, seed: UInt64) -> Data {
    var generator = SeededGenerator(seed: seed)
    return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
}
