/// UTF-8 checks for field bytes: a word-at-a-time ASCII test, then a full check when needed.
enum UTF8Validation {
    /// Whether every byte is below 0x80.
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var p = bytes.baseAddress else { return true }
        let end = p + bytes.count
        while end - p >= 8 {
            if p.loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            p += 8
        }
        while p < end {
            if p.load(as: UInt8.self) >= 0x80 { return false }
            p += 1
        }
        return true
    }

    /// Whether text that is not all valid UTF-8 still reads as UTF-8 with a few bad bytes rather than
    /// as a single-byte encoding: at least as many valid multi-byte sequences as bytes that start
    /// none (`naïve` and one stray byte is UTF-8; `caf\u{E9}` in Windows-1252 is not).
    static func isMostlyUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var valid = 0, invalid = 0, offset = 0
        while offset < bytes.count {
            guard let bad = firstInvalidByte(UnsafeRawBufferPointer(rebasing: bytes[offset...])) else {
                valid += multiByteStarts(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
                break
            }
            valid += multiByteStarts(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + bad]))
            invalid += 1
            offset += bad + 1
        }
        return valid >= invalid
    }

    /// The multi-byte sequences in valid UTF-8 `bytes` (their lead bytes).
    private static func multiByteStarts(_ bytes: UnsafeRawBufferPointer) -> Int {
        bytes.reduce(0) { $0 + ($1 >= 0xC0 ? 1 : 0) }
    }

    /// The offset of the first byte that does not start a valid UTF-8 sequence (no overlongs, no
    /// surrogates, nothing above U+10FFFF), or `nil` when all of `bytes` is valid.
    static func firstInvalidByte(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let b = bytes.bindMemory(to: UInt8.self)
        var i = 0
        let n = b.count
        while i < n {
            let c = b[i]
            if c < 0x80 {
                i += 1
                continue
            }
            func continuation(_ k: Int) -> Bool { i + k < n && b[i + k] & 0xC0 == 0x80 }
            switch c {
            case 0xC2...0xDF:
                guard continuation(1) else { return i }
                i += 2
            case 0xE0...0xEF:
                guard continuation(1), continuation(2) else { return i }
                let second = b[i + 1]
                if c == 0xE0 && second < 0xA0 { return i }  // overlong
                if c == 0xED && second >= 0xA0 { return i }  // surrogate
                i += 3
            case 0xF0...0xF4:
                guard continuation(1), continuation(2), continuation(3) else { return i }
                let second = b[i + 1]
                if c == 0xF0 && second < 0x90 { return i }  // overlong
                if c == 0xF4 && second >= 0x90 { return i }  // above U+10FFFF
                i += 4
            default:
                return i
            }
        }
        return nil
    }
}
