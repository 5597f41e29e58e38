import FuzzSupport
import Readers

// Dialects chosen by the control byte's low bits.
fuzz { data, count in
    let (control, source) = split(data, count)
    var dialect = CSVDialect()
    dialect.delimiter = [UInt8(ascii: ","), UInt8(ascii: ";"), 9, UInt8(ascii: "|")][Int(control & 3)]
    if control & 4 != 0 { dialect.escape = UInt8(ascii: "\\") }
    if control & 8 != 0 {
        dialect.nullMarkers = ["", "NULL", "\\N"]
        dialect.trimsWhitespace = true
    }
    if control & 16 != 0 {
        dialect.comment = UInt8(ascii: "#")
        dialect.lenientQuotes = true
        dialect.hasHeader = false
    }
    dialect.lossyEncoding = control & 32 != 0
    dialect.encoding = [TextEncoding.utf8, .latin1, .windows1252, .utf16][Int(control >> 6)]
    dialect.maxRecordBytes = 1 << 16
    guard var reader = try? CSVReader(source: source, dialect: dialect) else { return 0 }
    drain(&reader)
    return 0
}
