import Drivers
import Foundation
import ObjectGraph

/// Bounds-checked reading of the binary store's primitives: running past the end is a `Failure`.
struct BinaryReader {
    struct Failure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    private let data: Data
    private(set) var offset: Int

    init(_ data: Data) {
        self.data = data
        offset = data.startIndex
    }

    var atEnd: Bool { offset == data.endIndex }

    private mutating func take(_ count: Int) throws -> Data {
        guard count >= 0, data.endIndex - offset >= count else {
            throw Failure(
                "it ends \(count - (data.endIndex - offset)) bytes early, at byte \(offset - data.startIndex): "
                    + "truncated"
            )
        }
        defer { offset += count }
        return data[offset..<offset + count]
    }

    mutating func bytes(_ count: Int) throws -> [UInt8] { Array(try take(count)) }
    mutating func uint8() throws -> UInt8 { try take(1).first! }
    private mutating func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
        try take(MemoryLayout<T>.size).reversed().reduce(T(0)) { ($0 << 8) | T($1) }
    }
    mutating func uint16() throws -> UInt16 { try integer(UInt16.self) }
    mutating func uint32() throws -> UInt32 { try integer(UInt32.self) }
    mutating func uint64() throws -> UInt64 { try integer(UInt64.self) }
    mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0, shift: UInt64 = 0
        while true {
            let byte = try uint8()
            guard shift < 64 else { throw Failure("a number at byte \(offset - data.startIndex) is too long") }
            value |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }
    /// A count or index, checked against what is left (each item takes at least one byte).
    mutating func count() throws -> Int {
        let value = try varint()
        guard value <= UInt64(data.endIndex - offset) + 1 << 20 else {
            throw Failure("a count of \(value) at byte \(offset - data.startIndex) is not credible")
        }
        return Int(value)
    }
    mutating func string() throws -> String {
        let bytes = try take(try count())
        guard let text = String(data: bytes, encoding: .utf8) else {
            throw Failure("a text at byte \(offset - data.startIndex) is not UTF-8")
        }
        return text
    }
    mutating func value() throws -> AttributeValue {
        let tag = try uint8()
        switch tag {
        case 0: return .null
        case 1: return .integer(Int64(bitPattern: try uint64()))
        case 2:
            let text = try string()
            guard let decimal = DecimalText.parse(text) else {
                throw Failure("\(text.debugDescription) is not a decimal")
            }
            return .decimal(decimal)
        case 3: return .double(Double(bitPattern: try uint64()))
        case 4: return .float(Float(bitPattern: try uint32()))
        case 5: return .string(try string())
        case 6: return .boolean(try uint8() != 0)
        case 7: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try uint64())))
        case 8: return .binary(try take(try count()))
        case 9:
            let b = try bytes(16)
            return .uuid(
                UUID(
                    uuid: (
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                        b[15]
                    )))
        case 10:
            let text = try string()
            guard let url = URL(string: text) else { throw Failure("\(text.debugDescription) is not a URI") }
            return .uri(url)
        default: throw Failure("unknown value tag \(tag) at byte \(offset - data.startIndex - 1)")
        }
    }
}
