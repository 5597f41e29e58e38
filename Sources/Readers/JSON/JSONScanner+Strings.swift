extension JSONScanner {
    // MARK: Strings

    /// A string value (the opening quote at the current position).
    mutating func string() throws {
        let start = tape.bytes.count
        try stringBytes()
        tape.nodes[tape.nodes.count - 1].start = Int32(start)
        tape.nodes[tape.nodes.count - 1].end = Int32(tape.bytes.count)
    }

    /// Decodes a string's text into `tape.bytes` (the opening quote at the current position).
    mutating func stringBytes() throws {
        position += 1
        while true {
            // Plain bytes run until a quote, a backslash, a control character or a non-ASCII byte.
            var run = position
            while run < end {
                let byte = buffer[run]
                if byte == 34 || byte == 92 || byte < 0x20 || byte >= 0x80 { break }
                run += 1
            }
            if run > position {
                tape.bytes.append(contentsOf: UnsafeBufferPointer(start: buffer + position, count: run - position))
                position = run
                if tape.bytes.count > limits.recordBytes { throw TooLarge() }
            }
            guard let byte = try peek() else { throw syntax("the input ends inside a string") }
            switch byte {
            case 34:
                position += 1
                return
            case 92: try escape()
            case 10:
                if lines { throw syntax("the line ends inside a string") }
                noteValueError("a line break inside a string (write it as \\n)")
                tape.bytes.append(byte)
                takeLineBreak()
            case 0..<0x20:
                noteValueError("a control character inside a string (write it as an escape)")
                tape.bytes.append(byte)
                position += 1
            case 0x80...: try utf8Sequence(lead: byte)
            default: break  // not reached: the run above takes every other byte
            }
        }
    }

    /// A multi-byte UTF-8 sequence, checked as RFC 3629 says (no overlong forms, no surrogates,
    /// nothing above U+10FFFF); a bad one is the value's fault and its lead byte is passed over.
    mutating func utf8Sequence(lead: UInt8) throws {
        let at = column
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            high = 0x9F
        case 0xF0:
            length = 4
            low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            high = 0x8F
        default:
            noteValueError("invalid UTF-8", column: at)
            position += 1
            return
        }
        var sequence: (UInt8, UInt8, UInt8, UInt8) = (lead, 0, 0, 0)
        position += 1
        for index in 1..<length {
            guard let byte = try peek(), byte >= (index == 1 ? low : 0x80), byte <= (index == 1 ? high : 0xBF) else {
                noteValueError("invalid UTF-8", column: at)
                return
            }
            switch index {
            case 1: sequence.1 = byte
            case 2: sequence.2 = byte
            default: sequence.3 = byte
            }
            position += 1
        }
        tape.bytes.append(sequence.0)
        tape.bytes.append(sequence.1)
        if length > 2 { tape.bytes.append(sequence.2) }
        if length > 3 { tape.bytes.append(sequence.3) }
    }

    mutating func escape() throws {
        let at = column
        position += 1
        try escapeLetter(at: at)
    }

    /// The letter after a backslash (and the digits of `\u`); `at` is the backslash's column.
    private mutating func escapeLetter(at: Int) throws {
        guard let letter = try peek() else { throw syntax("the input ends inside a string") }
        position += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): tape.bytes.append(letter)
        case UInt8(ascii: "b"): tape.bytes.append(8)
        case UInt8(ascii: "f"): tape.bytes.append(12)
        case UInt8(ascii: "n"): tape.bytes.append(10)
        case UInt8(ascii: "r"): tape.bytes.append(13)
        case UInt8(ascii: "t"): tape.bytes.append(9)
        case UInt8(ascii: "u"):
            guard var scalar = try hex4() else {
                noteValueError("\\u needs four hexadecimal digits", column: at)
                return
            }
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate: a low one must follow.
                var low: UInt32?
                if try peek() == UInt8(ascii: "\\") {
                    let next = column
                    position += 1
                    guard try peek() == UInt8(ascii: "u") else {
                        // Another escape follows: the surrogate is alone, and that escape is read on.
                        noteValueError("a lone surrogate \\u\(String(scalar, radix: 16, uppercase: true))", column: at)
                        try escapeLetter(at: next)
                        return
                    }
                    position += 1
                    low = try hex4()
                }
                guard let low, (0xDC00..<0xE000).contains(low) else {
                    noteValueError("a lone surrogate \\u\(String(scalar, radix: 16, uppercase: true))", column: at)
                    return
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                noteValueError("a lone surrogate \\u\(String(scalar, radix: 16, uppercase: true))", column: at)
                return
            }
            tape.bytes.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default:
            noteValueError("an unknown escape \\\(String(decoding: [letter], as: UTF8.self))", column: at)
        }
    }

    /// Four hexadecimal digits; `nil` (having taken the digits there are) when they are not.
    mutating func hex4() throws -> UInt32? {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = try peek() else { return nil }
            let digit: UInt8
            switch byte {
            case 48...57: digit = byte - 48
            case 65...70: digit = byte - 55
            case 97...102: digit = byte - 87
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }
}
