import Drivers
import Foundation
import Testing

@Suite struct ZlibTests {
    @Test func compressThenDecompressRestoresTheBytes() throws {
        let payloads = [Data(), Data("x".utf8), sampleText(lines: 3_000), incompressibleBytes(count: 10_000, seed: 1)]
        for payload in payloads {
            for level: Int32 in [0, 1, 6, 9] {
                let compressed = try Zlib.compress(payload, level: level)
                #expect(try Zlib.decompress(compressed, size: payload.count) == payload, "level \(level)")
            }
        }
    }

    @Test func repetitiveDataShrinks() throws {
        let payload = Data(String(repeating: "abc,def,ghi\n", count: 10_000).utf8)
        let compressed = try Zlib.compress(payload, level: 9)
        #expect(compressed.count < payload.count / 50)
        #expect(try Zlib.compress(payload, level: 0).count > payload.count)
    }

    @Test func decompressingToAnotherSizeThanRecordedIsAGzipError() throws {
        let payload = sampleText(lines: 100)
        let compressed = try Zlib.compress(payload)
        let shorter = try #require(throws: GzipError.self) { try Zlib.decompress(compressed, size: payload.count - 1) }
        #expect(shorter.message == "compressed data cut short or longer than recorded")
        let longer = try #require(throws: GzipError.self) { try Zlib.decompress(compressed, size: payload.count + 5) }
        #expect(longer.message == "decompressed to \(payload.count) bytes, not the \(payload.count + 5) recorded")
    }

    @Test func truncatedOrCorruptDataIsAGzipError() throws {
        let payload = sampleText(lines: 100)
        let compressed = try Zlib.compress(payload)
        for cut in [0, 1, 2, compressed.count / 2, compressed.count - 1] {
            let error = try #require(throws: GzipError.self, "cut at \(cut)") {
                try Zlib.decompress(compressed.prefix(cut), size: payload.count)
            }
            #expect(!error.message.isEmpty)
        }
        var badChecksum = compressed
        badChecksum[badChecksum.count - 1] ^= 0x01
        let error = try #require(throws: GzipError.self) { try Zlib.decompress(badChecksum, size: payload.count) }
        #expect(error.message == "corrupt compressed data")
    }

    @Test func crc32MatchesTheStandardCheckValue() {
        #expect(Zlib.crc32(Data("123456789".utf8)) == 0xCBF4_3926)
        #expect(Zlib.crc32(Data()) == 0)
        #expect(Zlib.crc32(Data([0])) == 0xD202_EF8D)
    }
}
