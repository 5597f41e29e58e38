import Drivers
import Foundation

extension XMLReader {
    /// The paths of elements that repeat under one parent (`/products/product`,
    /// `/products/product/variants/variant`), outermost first, with how many were seen: what
    /// `--record` could name. Looks at the first `sampleElements` elements.
    /// - Throws: `ReaderError` for unreadable or malformed input.
    public static func repeatingPaths(
        path: String, sampleElements: Int = 200_000
    ) throws -> [(
        path: String, count: Int
    )] {
        let source = try Input.open(path)
        let finder = RepeatFinder(limit: sampleElements)
        let parser: XMLPushParser
        do { parser = try XMLPushParser(handler: finder, fileName: source.name) } catch {
            throw ReaderError(.malformedXML, "\(error)", underlying: error)
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while !finder.isDone, try parser.feedNextChunk(from: source, buffer: &chunk) {}
        return finder.order.compactMap { path in
            let count = finder.counts[path] ?? 0
            return finder.repeated.contains(path) ? (path, count) : nil
        }.sorted { ($0.path.split(separator: "/").count, $0.path) < ($1.path.split(separator: "/").count, $1.path) }
    }

    private final class RepeatFinder: XMLEventHandler {
        let limit: Int
        var stack: [String] = []
        /// Per open element: the names of its children so far.
        var seen: [Set<String>] = [[]]
        var counts: [String: Int] = [:]
        var order: [String] = []
        var repeated: Set<String> = []
        var elements = 0
        var isDone = false

        init(limit: Int) { self.limit = limit }

        override func startElement(
            localName: UnsafePointer<UInt8>, namespaceURI: UnsafePointer<UInt8>?,
            attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int
        ) {
            let name = String(cString: localName)
            stack.append(name)
            let path = "/" + stack.joined(separator: "/")
            if counts[path] == nil { order.append(path) }
            counts[path, default: 0] += 1
            if !seen[seen.count - 1].insert(name).inserted { repeated.insert(path) }
            seen.append([])
            elements += 1
            if elements >= limit { isDone = true }
        }

        override func endElement() {
            stack.removeLast()
            seen.removeLast()
        }
    }
}

extension XMLReader {
    /// The error for an XML input read without a record path: it names the elements that repeat
    /// in the file, the paths `--record` could take.
    public static func recordPathNeeded(for path: String) -> ReaderError {
        let proposals = ((try? repeatingPaths(path: path)) ?? []).prefix(8).map { "\($0.path) (\($0.count) seen)" }
        let found =
            proposals.isEmpty
            ? "no element repeats in \(path)" : "elements that repeat in \(path): \(proposals.joined(separator: ", "))"
        return ReaderError(
            .invalidOption, "an XML input needs --record, the path of its record elements; \(found)")
    }
}
