/// Converts ISO-8859-1, Windows-1252 or UTF-16 to UTF-8 while streaming.
final class TranscodingByteSource: ByteSource {
    private let base: ByteSource
    private let encoding: TextEncoding
    private let lossy: Bool
    private var raw: [UInt8]
    private var rawCount = 0
    private var offset = 0  // bytes of the original input converted so far
    private var pendingHighSurrogate: UInt16?
    private var atEnd = false
    /// The error that stopped the conversion; every later read throws it again.
    private var failure: ReaderError?
    var name: String { base.name }

    init(_ base: ByteSource, from encoding: TextEncoding, lossy: Bool) {
        self.base = base
        self.encoding = encoding
        self.lossy = lossy
        raw = [UInt8](repeating: 0, count: 1 << 16)
    }

    /// Windows-1252 0x80...0x9F; 0 marks the five undefined bytes.
    private static let windows1252High: [UInt16] = [
        0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
        0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E,
        0x0178,
    ]

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let failure { throw failure }
        do {
            return try convert(into: buffer)
        } catch let error as ReaderError {
            // The stream cannot be resynchronised reliably: the error ends the input.
            let stop = ReaderError(error.kind, error.message, at: error.position, recoverable: false)
            failure = stop
            throw stop
        }
    }

    private func convert(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        precondition(buffer.count >= 8, "transcoding needs room for a few characters")
        let out = buffer.bindMemory(to: UInt8.self)
        var produced = 0
        while produced == 0 {
            if atEnd { return try endOfInput(into: out) }
            try readRaw(room: out.count)
            let used: Int
            switch encoding {
            case .latin1, .windows1252: used = try convertSingleBytes(into: out, produced: &produced)
            default: used = try convertUTF16(into: out, produced: &produced)
            }
            dropConverted(used)
        }
        return produced
    }

    /// At the end of the input: a UTF-16 character left unfinished is an error, or U+FFFD when lossy.
    /// Returns the bytes written to `out` (0 when nothing was left).
    @inline(__always)
    private func endOfInput(into out: UnsafeMutableBufferPointer<UInt8>) throws -> Int {
        guard rawCount > 0 || pendingHighSurrogate != nil else { return 0 }
        guard lossy else {
            throw ReaderError(.encoding, "\(name): the input ends inside a UTF-16 character (byte \(offset))")
        }
        rawCount = 0
        pendingHighSurrogate = nil
        return Self.put(0xFFFD, into: out, at: 0)
    }

    /// Reads after the raw bytes kept as much raw input as an output of `room` bytes can hold after
    /// expansion (at most 3 bytes per unit); sets `atEnd` at the end of the input.
    @inline(__always)
    private func readRaw(room: Int) throws {
        let wanted = min(raw.count - rawCount, max(2, room / 3))
        guard wanted > 0 else { return }
        let n = try raw.withUnsafeMutableBytes {
            try base.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[rawCount..<rawCount + wanted]))
        }
        if n == 0 { atEnd = true }
        rawCount += n
    }

    /// Converts raw ISO-8859-1 or Windows-1252 bytes into `out` from `produced` on, while it has room.
    /// Returns the raw bytes used.
    @inline(__always)
    private func convertSingleBytes(into out: UnsafeMutableBufferPointer<UInt8>, produced: inout Int) throws -> Int {
        var used = 0
        while used < rawCount, produced + 3 <= out.count {
            let byte = raw[used]
            if byte < 0x80 {
                out[produced] = byte
                produced += 1
            } else {
                var scalar = UInt32(byte)
                if encoding == .windows1252, byte < 0xA0 {
                    let mapped = Self.windows1252High[Int(byte - 0x80)]
                    if mapped == 0 {
                        guard lossy else {
                            throw ReaderError(
                                .encoding,
                                "\(name): byte 0x\(String(byte, radix: 16, uppercase: true)) at byte "
                                    + "\(offset + used) is not a Windows-1252 character"
                            )
                        }
                        scalar = 0xFFFD
                    } else {
                        scalar = UInt32(mapped)
                    }
                }
                produced += Self.put(scalar, into: out, at: produced)
            }
            used += 1
        }
        return used
    }

    /// Converts raw UTF-16 (the byte order of `encoding`) into `out` from `produced` on, while it has
    /// room; a high surrogate at the end waits in `pendingHighSurrogate`. Returns the raw bytes used.
    @inline(__always)
    private func convertUTF16(into out: UnsafeMutableBufferPointer<UInt8>, produced: inout Int) throws -> Int {
        var used = 0
        let bigEndian = encoding == .utf16BE
        while used + 1 < rawCount, produced + 4 <= out.count {
            let unit =
                bigEndian
                ? UInt16(raw[used]) << 8 | UInt16(raw[used + 1])
                : UInt16(raw[used + 1]) << 8 | UInt16(raw[used])
            used += 2
            if let high = pendingHighSurrogate {
                pendingHighSurrogate = nil
                if (0xDC00...0xDFFF).contains(unit) {
                    let scalar = 0x10000 + (UInt32(high - 0xD800) << 10) + UInt32(unit - 0xDC00)
                    produced += Self.put(scalar, into: out, at: produced)
                    continue
                }
                guard lossy else { throw invalidUTF16(at: offset + used - 4) }
                produced += Self.put(0xFFFD, into: out, at: produced)
            }
            switch unit {
            case 0xD800...0xDBFF: pendingHighSurrogate = unit
            case 0xDC00...0xDFFF:
                guard lossy else { throw invalidUTF16(at: offset + used - 2) }
                produced += Self.put(0xFFFD, into: out, at: produced)
            default: produced += Self.put(UInt32(unit), into: out, at: produced)
            }
        }
        return used
    }

    /// Counts `used` raw bytes as converted and moves the raw bytes after them to the front.
    @inline(__always)
    private func dropConverted(_ used: Int) {
        offset += used
        if used > 0 {
            raw.withUnsafeMutableBytes {
                $0.baseAddress!.copyMemory(from: $0.baseAddress! + used, byteCount: rawCount - used)
            }
            rawCount -= used
        }
    }

    private func invalidUTF16(at byte: Int) -> ReaderError {
        ReaderError(.encoding, "\(name): unpaired UTF-16 surrogate at byte \(byte)")
    }

    /// Writes `scalar` as UTF-8 at `index`; returns the byte count.
    static func put(_ scalar: UInt32, into out: UnsafeMutableBufferPointer<UInt8>, at index: Int) -> Int {
        switch scalar {
        case ..<0x80:
            out[index] = UInt8(scalar)
            return 1
        case ..<0x800:
            out[index] = UInt8(0xC0 | scalar >> 6)
            out[index + 1] = UInt8(0x80 | scalar & 0x3F)
            return 2
        case ..<0x10000:
            out[index] = UInt8(0xE0 | scalar >> 12)
            out[index + 1] = UInt8(0x80 | scalar >> 6 & 0x3F)
            out[index + 2] = UInt8(0x80 | scalar & 0x3F)
            return 3
        default:
            out[index] = UInt8(0xF0 | scalar >> 18)
            out[index + 1] = UInt8(0x80 | scalar >> 12 & 0x3F)
            out[index + 2] = UInt8(0x80 | scalar >> 6 & 0x3F)
            out[index + 3] = UInt8(0x80 | scalar & 0x3F)
            return 4
        }
    }
}
