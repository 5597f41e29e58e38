/// Writes an SQL value as record bytes: integers in decimal, reals in their shortest exact form, text
/// as is, blobs as lowercase hexadecimal (record fields are text; the table's declared type tells a
/// mapping to decode them).
enum SQLValueText {
    static func hex(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return out
    }

    static func real(_ value: Double) -> [UInt8] {
        if value.isInfinite { return Array((value < 0 ? "-Inf" : "Inf").utf8) }
        return Array("\(value)".utf8)
    }
}
