import Drivers
import Foundation
import Testing

/// zlib's `Z_DATA_ERROR`, the code of a corrupt stream.
private let dataErrorCode: Int32 = -3

/// The gzip command of the system, when there is one.
private let gzipCommand = ["/usr/bin/gzip", "/bin/gzip"].first { FileManager.default.isExecutableFile(atPath: $0) }

@Suite struct GzipInflaterTests {
    @Test func roundTripsMembersMadeWithZlibsDeflate() throws {
        let payloads = [
            Data(), Data("hello, gzip".utf8), sampleText(lines: 20_000), incompressibleBytes(count: 70_000, seed: 7),
        ]
        for payload in payloads {
            for level: Int32 in [0, 1, 9] {
                let result = try gunzip(try gzipMember(payload, level: level))
                #expect(result.bytes == Array(payload), "\(payload.count) bytes at level \(level)")
                #expect(result.members == 1 && result.endsBetweenMembers)
            }
        }
    }

    @Test(.enabled(if: gzipCommand != nil)) func decompressesAFileMadeByTheGzipCommand() throws {
        try withTemporaryFolder { folder in
            let original = sampleText(lines: 5_000)
            let file = folder.appendingPathComponent("orders.csv")
            try original.write(to: file)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try #require(gzipCommand))
            // Keeps the input and stores its name and time in the header (FNAME, MTIME).
            process.arguments = ["-9", "-k", file.path]
            process.currentDirectoryURL = folder
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            let compressed = try Data(contentsOf: folder.appendingPathComponent("orders.csv.gz"))
            #expect(compressed[3] & 0x08 != 0, "the header has a file name")
            let result = try gunzip(Array(compressed), inputSizes: [4096], outputSize: 1000)
            #expect(result.bytes == Array(original))
            #expect(result.members == 1 && result.endsBetweenMembers)
        }
    }

    @Test func concatenatedMembersDecompressInOrder() throws {
        let parts = [Data("first\n".utf8), sampleText(lines: 300), Data(), Data("last\n".utf8)]
        let input = try parts.flatMap { try gzipMember($0) }
        let result = try gunzip(input)
        #expect(result.bytes == Array(parts.joined()))
        #expect(result.members == 4 && result.endsBetweenMembers)
    }

    @Test func aMemberEndsWithoutConsumingTheNextOne() throws {
        let first = try gzipMember(Data("one".utf8)), second = try gzipMember(Data("two".utf8))
        let inflater = try GzipInflater()
        var buffer = [UInt8](repeating: 0, count: 100)
        let input = first + second
        let step = try input.withUnsafeBytes { bytes in
            try buffer.withUnsafeMutableBytes { try inflater.inflate(input: bytes, output: $0) }
        }
        #expect(step.endOfMember && step.consumed == first.count && step.produced == 3)
        #expect(Array(buffer[0..<3]) == Array("one".utf8))
        inflater.startNextMember()
        let next = try input[first.count...].withUnsafeBytes { bytes in
            try buffer.withUnsafeMutableBytes { try inflater.inflate(input: bytes, output: $0) }
        }
        #expect(next.endOfMember && next.consumed == second.count && Array(buffer[0..<3]) == Array("two".utf8))
    }

    @Test func anyChunkingOfInputAndOutputGivesTheSameBytes() throws {
        let parts = [sampleText(lines: 2_000), incompressibleBytes(count: 5_000, seed: 3)]
        let input = try parts.flatMap { try gzipMember($0) }
        let expected = Array(parts.joined())
        for (inputSizes, outputSize) in [([1], 1), ([1], 4096), ([3], 7), ([4096], 1), ([10, 1, 100], 333)] {
            let result = try gunzip(input, inputSizes: inputSizes, outputSize: outputSize)
            #expect(result.bytes == expected, "input pieces \(inputSizes), output \(outputSize)")
            #expect(result.members == 2)
        }
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<10 {
            let sizes = (0..<50).map { _ in Int.random(in: 1...600, using: &generator) }
            let result = try gunzip(input, inputSizes: sizes, outputSize: Int.random(in: 1...900, using: &generator))
            #expect(result.bytes == expected, "input pieces \(sizes)")
        }
    }

    @Test func emptyInputIsNoProgressRatherThanAnError() throws {
        let inflater = try GzipInflater()
        var buffer = [UInt8](repeating: 0, count: 16)
        let step = try buffer.withUnsafeMutableBytes { output in
            try [UInt8]().withUnsafeBytes { try inflater.inflate(input: $0, output: output) }
        }
        #expect(step.consumed == 0 && step.produced == 0 && !step.endOfMember)
    }

    @Test func truncatedInputNeverReportsTheEndOfAMember() throws {
        let original = sampleText(lines: 200)
        let member = try gzipMember(original)
        for cut in 0..<member.count {
            let result = try gunzip(Array(member[..<cut]), inputSizes: [64], outputSize: 256)
            #expect(result.members == 0 && !result.endsBetweenMembers, "cut at \(cut) of \(member.count)")
            #expect(original.starts(with: result.bytes), "cut at \(cut): the bytes so far are the original's")
        }
    }

    @Test func corruptDeflateDataIsAGzipErrorNamingTheFault() throws {
        var member = try gzipMember(sampleText(lines: 100))
        member[10] = 0x07  // the first block: final, of the reserved type 3
        let error = try #require(throws: GzipError.self) { try gunzip(member) }
        #expect(error.code == dataErrorCode)
        #expect(error.message == "the gzip data is corrupt (invalid block type)")
        #expect(error.description == error.message)
    }

    @Test func checksumOrLengthMismatchIsAGzipError() throws {
        let member = try gzipMember(sampleText(lines: 100))
        var badCRC = member, badLength = member
        badCRC[member.count - 8] ^= 0x01
        badLength[member.count - 1] ^= 0x01
        let crcError = try #require(throws: GzipError.self) { try gunzip(badCRC) }
        #expect(crcError.code == dataErrorCode && crcError.message.contains("incorrect data check"))
        let lengthError = try #require(throws: GzipError.self) { try gunzip(badLength) }
        #expect(lengthError.code == dataErrorCode && lengthError.message.contains("incorrect length check"))
    }

    @Test func dataThatIsNotGzipIsAGzipError() throws {
        let zlibFormat = Array(try Zlib.compress(Data("zlib, not gzip".utf8)))
        for input in [Array("plain text, no header".utf8), zlibFormat] {
            let error = try #require(throws: GzipError.self) { try gunzip(input) }
            #expect(error.code == dataErrorCode && error.message.contains("incorrect header check"))
        }
    }

    @Test func bytesAfterAMemberThatAreNotAMemberAreAGzipError() throws {
        let input = try gzipMember(Data("payload".utf8)) + Array("trailing junk".utf8)
        let error = try #require(throws: GzipError.self) { try gunzip(input) }
        #expect(error.message.contains("incorrect header check"))
    }

    @Test func anErrorInTheSecondMemberComesAfterTheFirstMembersBytes() throws {
        let first = try gzipMember(Data("intact".utf8))
        var second = try gzipMember(sampleText(lines: 50))
        second[second.count - 6] ^= 0xff
        let inflater = try GzipInflater()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let input = first + second
        let step = try input.withUnsafeBytes { bytes in
            try buffer.withUnsafeMutableBytes { try inflater.inflate(input: bytes, output: $0) }
        }
        #expect(step.endOfMember && Array(buffer[0..<step.produced]) == Array("intact".utf8))
        inflater.startNextMember()
        #expect(throws: GzipError.self) {
            _ = try input[step.consumed...].withUnsafeBytes { bytes in
                try buffer.withUnsafeMutableBytes { try inflater.inflate(input: bytes, output: $0) }
            }
        }
    }
}
