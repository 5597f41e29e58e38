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
        return finder.repeatedPaths.sorted {
            ($0.path.split(separator: "/").count, $0.path) < ($1.path.split(separator: "/").count, $1.path)
        }
    }

    /// Counts elements by path. Paths are numbered in a trie (a path's number by its parent's and
    /// its name), so an element costs the same at any depth; only the paths that repeat are spelt out.
    private final class RepeatFinder: XMLEventHandler {
        struct Step: Hashable {
            var parent: Int
            var name: String
        }
        let limit: Int
        /// Path 0 is the document; each other path's parent and name.
        var steps: [Step] = [Step(parent: -1, name: "")]
        var numbers: [Step: Int] = [:]
        var counts: [Int] = [0]
        /// The open elements' paths, and per open element the names of its children so far.
        var stack: [Int] = [0]
        var seen: [Set<String>] = [[]]
        var repeated: Set<Int> = []
        var elements = 0
        var isDone = false

        init(limit: Int) { self.limit = limit }

        /// The paths that repeat, spelt out (`/products/product`), with how many were seen.
        var repeatedPaths: [(path: String, count: Int)] {
            repeated.map { number in
                var names: [String] = [], step = number
                while step > 0 {
                    names.append(steps[step].name)
                    step = steps[step].parent
                }
                return ("/" + names.reversed().joined(separator: "/"), counts[number])
            }
        }

        override func startElement(
            localName: UnsafePointer<UInt8>, namespaceURI: UnsafePointer<UInt8>?,
            attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int
        ) {
            let step = Step(parent: stack[stack.count - 1], name: String(cString: localName))
            let number: Int
            if let known = numbers[step] {
                number = known
            } else {
                number = steps.count
                steps.append(step)
                counts.append(0)
                numbers[step] = number
            }
            counts[number] += 1
            if !seen[seen.count - 1].insert(step.name).inserted { repeated.insert(number) }
            stack.append(number)
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
