import Drivers
import Foundation
import Synchronization

/// Decompresses gzip data as it is read: streaming, multi-member files supported; a corrupt or truncated
/// stream, a checksum mismatch, or trailing bytes that are not another member are errors.
public final class GzipByteSource: ByteSource {
    private let base: ByteSource
    private let inflater: GzipInflater
    private let input: UnsafeMutableRawBufferPointer
    private var inputStart = 0, inputEnd = 0
    private var compressedOffset = 0
    private var baseAtEnd = false
    private var finished = false
    /// Whether the current member is complete (so ending here is fine).
    private var betweenMembers = false
    public var name: String { base.name }

    public init(_ base: ByteSource) throws {
        self.base = base
        do { inflater = try GzipInflater() } catch {
            throw ReaderError(.compression, "\(base.name): \(error)", underlying: error)
        }
        input = .allocate(byteCount: 1 << 18, alignment: 16)
    }

    deinit { input.deallocate() }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 0 else { return 0 }
        while !finished {
            if inputStart == inputEnd, !baseAtEnd {
                inputStart = 0
                inputEnd = try base.read(into: input)
                if inputEnd == 0 { baseAtEnd = true }
            }
            if inputStart == inputEnd, baseAtEnd {
                if betweenMembers {
                    finished = true
                    return 0
                }
                throw ReaderError(
                    .compression,
                    "\(name): the gzip data is truncated (the input ends inside a compressed member, after "
                        + "\(compressedOffset) compressed bytes)"
                )
            }
            if betweenMembers {
                // Another member must follow: its magic bytes, or nothing.
                guard input.load(fromByteOffset: inputStart, as: UInt8.self) == 0x1f else {
                    throw ReaderError(
                        .compression,
                        "\(name): unexpected bytes after gzip member at compressed byte \(compressedOffset) (not "
                            + "another gzip member)"
                    )
                }
                inflater.startNextMember()
                betweenMembers = false
            }
            let step: GzipInflater.Step
            do {
                step = try inflater.inflate(
                    input: UnsafeRawBufferPointer(rebasing: input[inputStart..<inputEnd]), output: buffer)
            } catch {
                throw ReaderError(
                    .compression, "\(name): \(error), near compressed byte \(compressedOffset)",
                    underlying: error)
            }
            inputStart += step.consumed
            compressedOffset += step.consumed
            if step.endOfMember { betweenMembers = true }
            if step.produced > 0 { return step.produced }
            if step.consumed == 0, !step.endOfMember, inputStart < inputEnd {
                throw ReaderError(
                    .compression, "\(name): the gzip data is corrupt near compressed byte \(compressedOffset)")
            }
        }
        return 0
    }
}
