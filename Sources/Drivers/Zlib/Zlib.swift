import CZlib
import Foundation

/// Whole-buffer zlib compression and CRC-32, for files written and read in one piece (the binary
/// store). Streams use `GzipInflater`.
public enum Zlib {
    /// `data` deflated at `level` (0–9) in the zlib format.
    public static func compress(_ data: Data, level: Int32 = 6) throws -> Data {
        var bound = compressBound(uLong(data.count))
        var output = Data(count: Int(bound))
        let status = output.withUnsafeMutableBytes { out in
            data.withUnsafeBytes { input in
                compress2(
                    out.bindMemory(to: Bytef.self).baseAddress, &bound, input.bindMemory(to: Bytef.self).baseAddress,
                    uLong(data.count), level)
            }
        }
        guard status == Z_OK else { throw GzipError(code: status, message: "zlib could not compress (\(status))") }
        output.count = Int(bound)
        return output
    }

    /// `data` inflated; it must come out exactly `size` bytes long.
    /// - Throws: `GzipError` for corrupt or truncated input, or another size.
    public static func decompress(_ data: Data, size: Int) throws -> Data {
        var produced = uLong(size)
        var output = Data(count: size)
        let status = output.withUnsafeMutableBytes { out in
            data.withUnsafeBytes { input in
                uncompress(
                    out.bindMemory(to: Bytef.self).baseAddress, &produced, input.bindMemory(to: Bytef.self).baseAddress,
                    uLong(data.count))
            }
        }
        guard status == Z_OK else {
            let reason =
                status == Z_DATA_ERROR
                ? "corrupt compressed data"
                : status == Z_BUF_ERROR ? "compressed data cut short or longer than recorded" : "zlib error \(status)"
            throw GzipError(code: status, message: reason)
        }
        guard Int(produced) == size else {
            throw GzipError(code: Z_DATA_ERROR, message: "decompressed to \(produced) bytes, not the \(size) recorded")
        }
        return output
    }

    /// The CRC-32 of `bytes` following those a CRC of `checksum` covers (zlib's `crc32`, as in gzip
    /// and PNG): a file's CRC is computed a buffer at a time.
    public static func crc32(_ bytes: UnsafeRawBufferPointer, after checksum: UInt32 = 0) -> UInt32 {
        UInt32(CZlib.crc32(uLong(checksum), bytes.bindMemory(to: Bytef.self).baseAddress, uInt(bytes.count)))
    }

    /// The CRC-32 of `data` (zlib's, as in gzip and PNG).
    public static func crc32(_ data: Data) -> UInt32 {
        data.withUnsafeBytes { bytes in
            UInt32(CZlib.crc32(0, bytes.bindMemory(to: Bytef.self).baseAddress, uInt(bytes.count)))
        }
    }
}
