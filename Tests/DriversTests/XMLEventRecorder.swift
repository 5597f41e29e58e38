import Drivers
import Foundation

/// Records an `XMLPushParser`'s events as lines of text, adjacent text events joined into one:
/// `start name`, `start {uri}name a=1 {uri}b=2`, `text …`, `end`.
final class XMLEventRecorder: XMLEventHandler {
    private(set) var events: [String] = []
    private var pendingText: [UInt8] = []
    /// Called with each element's local name after its event is recorded.
    var onStartElement: ((String) -> Void)?

    override func startElement(
        localName: UnsafePointer<UInt8>, namespaceURI: UnsafePointer<UInt8>?,
        attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int
    ) {
        flushText()
        let name = String(cString: localName)
        var event = "start " + Self.qualified(name, namespaceURI)
        for index in 0..<attributeCount {
            guard let fields = attributes?.advanced(by: index * 5), let start = fields[3], let end = fields[4],
                let attributeName = fields[0]
            else { continue }
            let raw = UnsafeBufferPointer(start: start, count: end - start)
            let value = XMLEventHandler.decodedAttributeValue(raw).map { String(decoding: $0, as: UTF8.self) }
            event += " \(Self.qualified(String(cString: attributeName), fields[2]))="
            event += value ?? String(decoding: raw, as: UTF8.self)
        }
        events.append(event)
        onStartElement?(name)
    }

    override func endElement() {
        flushText()
        events.append("end")
    }

    override func characters(_ text: UnsafeBufferPointer<UInt8>) {
        pendingText.append(contentsOf: text)
    }

    /// The events so far, with any text not yet followed by a tag.
    func finish() -> [String] {
        flushText()
        return events
    }

    private func flushText() {
        guard !pendingText.isEmpty else { return }
        events.append("text " + String(decoding: pendingText, as: UTF8.self))
        pendingText.removeAll()
    }

    private static func qualified(_ name: String, _ namespaceURI: UnsafePointer<UInt8>?) -> String {
        namespaceURI.map { "{\(String(cString: $0))}\(name)" } ?? name
    }
}

/// The events of a document fed to a new parser in the given pieces, then finished.
func parseEvents(_ pieces: [[UInt8]]) throws -> [String] {
    let recorder = XMLEventRecorder()
    let parser = try XMLPushParser(handler: recorder, fileName: "test.xml")
    for piece in pieces {
        try piece.withUnsafeBytes { try parser.feed($0) }
    }
    try parser.finish()
    return recorder.finish()
}

/// The events of `document` fed to a new parser in one piece.
func parseEvents(_ document: String) throws -> [String] {
    try parseEvents([Array(document.utf8)])
}

/// The error a new parser throws for `bytes` (fed whole, then finished), if any.
func parseError(_ bytes: [UInt8]) -> XMLParseError? {
    do {
        _ = try parseEvents([bytes])
        return nil
    } catch {
        return error as? XMLParseError
    }
}
