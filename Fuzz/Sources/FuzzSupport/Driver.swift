import Foundation
import Readers

@_silgen_name("LLVMFuzzerRunDriver")
private func runDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// Hands control to libFuzzer, calling `body` with each input.
public func fuzz(_ body: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(runDriver(&argc, &argv, body))
}

/// Reads every record; recoverable errors go on (a reader that fails to advance shows up as a hang),
/// others end the input. Touches every field so lazy paths run too.
public func drain(_ reader: inout some RecordReader) {
    while true {
        do {
            guard let record = try reader.next() else { return }
            for index in 0..<record.count {
                _ = record.string(index)
                _ = record.position(ofField: index)
            }
        } catch let error as ReaderError where error.isRecoverable {
            _ = error.description
            continue
        } catch {
            return
        }
    }
}

/// The input split into a control byte (choosing options) and the data, handed out in chunks of a
/// size the control byte also picks, so buffer boundaries land everywhere.
public func split(_ data: UnsafePointer<UInt8>?, _ count: Int) -> (control: UInt8, source: MemoryByteSource) {
    guard let data, count > 0 else { return (0, MemoryByteSource([])) }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: count - 1))
    let control = data[0]
    let chunk = [Int.max, 1, 2, 3, 7, 64, 4096, 13][Int(control >> 5)]
    return (control, MemoryByteSource(bytes, name: "fuzz", chunkSize: chunk))
}
