import Drivers
import Foundation
import ObjectGraph

/// Little-endian writing of the binary store's primitives.
struct BinaryWriter {
    private(set) var data = Data()

    mutating func bytes(_ bytes: [UInt8]) { data.append(contentsOf: bytes) }
    mutating func uint8(_ value: UInt8) { data.append(value) }
    mutating func uint16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    mutating func uint32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    mutating func uint64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            data.append(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        data.append(UInt8(rest))
    }
    mutating func string(_ text: String) {
        varint(UInt64(text.utf8.count))
        data.append(contentsOf: text.utf8)
    }
    mutating func value(_ value: AttributeValue) {
        switch value {
        case .null: uint8(0)
        case .integer(let v):
            uint8(1)
            uint64(UInt64(bitPattern: v))
        case .decimal(let v):
            uint8(2)
            string(DecimalText.canonical(v))
        case .double(let v):
            uint8(3)
            uint64(v.bitPattern)
        case .float(let v):
            uint8(4)
            uint32(v.bitPattern)
        case .string(let v):
            uint8(5)
            string(v)
        case .boolean(let v):
            uint8(6)
            uint8(v ? 1 : 0)
        case .date(let v):
            uint8(7)
            uint64(v.timeIntervalSinceReferenceDate.bitPattern)
        case .binary(let v):
            uint8(8)
            varint(UInt64(v.count))
            data.append(v)
        case .uuid(let v):
            uint8(9)
            withUnsafeBytes(of: v.uuid) { data.append(contentsOf: $0) }
        case .uri(let v):
            uint8(10)
            string(v.absoluteString)
        }
    }
}
