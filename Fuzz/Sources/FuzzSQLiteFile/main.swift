import Foundation
import FuzzSupport
import Readers

// The input is written as a database file; the reader must refuse or read it, never crash.
let path = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-fuzz-\(getpid()).db").path

fuzz { data, count in
    guard let data else { return 0 }
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes: data, count: count))
    defer { try? FileManager.default.removeItem(atPath: path) }
    guard var reader = try? SQLiteFileReader(path: path) else { return 0 }
    drain(&reader)
    return 0
}
