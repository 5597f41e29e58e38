import FuzzSupport
import Readers

// Records at a path with arrays looked through, fields by path (nested, indexed, the record
// itself), children and grandchildren; the control byte picks JSON Lines or a document, a
// repeated member rejected or last-wins, and small limits so the limit paths run too.
let spec = RecordSpec(
    path: "/a/b", fields: [("id", "id"), ("deep", "c.d"), ("first", "e[0]"), ("self", "."), ("raw", "r")],
    children: [
        RecordSpec(
            path: "c", kind: "c", fields: [("e", "e"), ("t", ".")],
            children: [RecordSpec(path: "d", kind: "d", fields: [("t", "."), ("f", "f.g")])])
    ])
let rootSpec = RecordSpec(
    path: "/", fields: [("id", "id"), ("x", "x.y")],
    children: [
        RecordSpec(path: "x", kind: "x", fields: [("v", ".")])
    ])

fuzz { data, count in
    let (control, source) = split(data, count)
    let limits = ReaderLimits(
        recordBytes: control & 4 != 0 ? 4096 : ReaderLimits.defaultRecordBytes, depth: control & 8 != 0 ? 16 : 1000,
        numberCharacters: control & 16 != 0 ? 8 : 4096)
    guard
        var reader = try? JSONReader(
            source: source, lines: control & 1 != 0, spec: control & 32 != 0 ? rootSpec : spec, limits: limits,
            lastWins: control & 2 != 0)
    else { return 0 }
    drain(&reader)
    return 0
}
