import Foundation
import Readers
import TestSupport
import Testing

/// gzip output of `text`, made by the system's gzip (a second, independent implementation).
func gzipped(_ text: String) throws -> [UInt8] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", "gzip -n -c"]
    let input = Pipe(), output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    input.fileHandleForWriting.write(Data(text.utf8))
    try input.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Array(data)
}

func readAll(_ source: ByteSource) throws -> [UInt8] {
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 5)
    while true {
        let n = try chunk.withUnsafeMutableBytes { try source.read(into: $0) }
        if n == 0 { return result }
        result += chunk[..<n]
    }
}

@Suite struct InputTests {
    @Test func gzipIsRecognisedByItsMagicWhateverTheName() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("data.csv").path  // no .gz suffix
        try Data(try gzipped("id\n1\n2\n")).write(to: URL(fileURLWithPath: path))
        let reader = try CSVReader(path: path)
        var ids: [String?] = []
        while let record = try reader.next() { ids.append(record.string(0)) }
        #expect(ids == ["1", "2"])
    }

    @Test func multiMemberGzipFilesAreReadWhole() throws {
        let bytes = try gzipped("first part\n") + gzipped("second part\n")
        #expect(
            String(
                decoding: try readAll(try Input.decompressingIfNeeded(MemoryByteSource(bytes, chunkSize: 3))),
                as: UTF8.self)
                == "first part\nsecond part\n")
    }

    @Test func aBadChecksumTruncationOrTrailingGarbageIsAnError() throws {
        let text = String(repeating: "some text to compress, ", count: 200)
        var corrupt = try gzipped(text)
        corrupt[corrupt.count - 6] ^= 0xFF  // inside the CRC-32 of the trailer
        #expect { _ = try readAll(try Input.decompressingIfNeeded(MemoryByteSource(corrupt))) } throws: { error in
            (error as? ReaderError)?.kind == .compression
        }
        let whole = try gzipped(text)
        let truncated = Array(whole.prefix(whole.count - 10))
        #expect { _ = try readAll(try Input.decompressingIfNeeded(MemoryByteSource(truncated))) } throws: { error in
            (error as? ReaderError).map { $0.kind == .compression && $0.message.contains("truncated") } ?? false
        }
        let trailing = whole + Array("junk".utf8)
        #expect { _ = try readAll(try Input.decompressingIfNeeded(MemoryByteSource(trailing))) } throws: { error in
            (error as? ReaderError).map { $0.kind == .compression && $0.message.contains("after gzip member") } ?? false
        }
    }

    @Test func plainInputPassesThroughAndMissingFilesAreIOErrors() throws {
        #expect(try readAll(try Input.decompressingIfNeeded(MemoryByteSource("x"))) == Array("x".utf8))
        #expect(try readAll(try Input.decompressingIfNeeded(MemoryByteSource(""))) == [])
        #expect { _ = try Input.open("/nonexistent/file.csv") } throws: { error in
            (error as? ReaderError).map { $0.kind == .io && $0.message.contains("/nonexistent/file.csv") } ?? false
        }
    }
}
