import FuzzSupport
import Readers

fuzz { data, count in
    let (control, source) = split(data, count)
    guard var reader = try? SQLDumpReader(source: source, tables: control & 1 == 0 ? nil : ["t"]) else { return 0 }
    drain(&reader)
    _ = reader.tables.map(\.columns)
    return 0
}
