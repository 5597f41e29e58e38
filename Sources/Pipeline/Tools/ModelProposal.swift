import ModelFiles
import Readers

/// `sluice infer`: a model file (YAML) proposed for inputs, from every value they hold.
public enum ModelProposal {
    /// The proposed model file's text for `inputs`.
    /// - Parameters:
    ///   - format: `csv`, `xml`, `sqldump`, `sqlite`, `jsonl`, or `nil`/`auto` to detect each input's.
    ///   - recordPath: XML: the path of the record elements.
    /// - Throws: `ReaderError`: unreadable input (with its position), an unknown format, XML
    ///   without a record path.
    ///   - namespaces: XML: the prefixes the record path uses, bound to their URIs.
    ///   - warn: told what the inputs define but hold no rows of (views, triggers, virtual tables).
    public static func modelFile(
        for inputs: [String], format: String?, recordPath: String?, namespaces: [String: String] = [:],
        warn: (String) -> Void = { _ in }
    ) throws -> String {
        let format = try InputFormat.named(format)
        var inference = ModelInference()
        for input in inputs {
            try inference.add(inputAt: input, format: format, recordPath: recordPath, namespaces: namespaces)
        }
        guard !inference.entities.isEmpty else {
            throw ReaderError(
                .io,
                "\(inputs.joined(separator: ", ")) hold\(inputs.count == 1 ? "s" : "") no records, nor a header naming "
                    + "columns: nothing to infer")
        }
        for name in inference.notImported { warn("not imported: \(name)") }
        for hint in inference.keyHints() { warn(hint) }
        for error in inference.unreadable.first { warn("left out of the model (an import rejects it): \(error)") }
        if inference.unreadable.count > inference.unreadable.first.count {
            warn("\(inference.unreadable.count - inference.unreadable.first.count) more records left out likewise")
        }
        return inference.modelFile()
    }
}
