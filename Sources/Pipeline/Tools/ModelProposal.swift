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
        fields: [(name: String, path: String)] = [], warn: (String) -> Void = { _ in }
    ) throws -> String {
        let format = try InputFormat.named(format)
        var inference = ModelInference()
        for input in inputs {
            // `--field`: an XML or JSON input's fields are those, not all its records hold.
            var spec: RecordSpec?
            if !fields.isEmpty {
                let detected = try format ?? InputFormat.detect(path: input)
                guard detected.isNested else {
                    throw ReaderError(.invalidOption, "--field applies to XML and JSON inputs, and \(input) is neither")
                }
                guard let path = recordPath ?? (detected == .xml ? nil : "/") else {
                    throw XMLReader.recordPathNeeded(for: input)
                }
                spec = RecordSpec(path: path, fields: fields)
            }
            try inference.add(
                inputAt: input, format: format, recordPath: recordPath, spec: spec, namespaces: namespaces)
        }
        guard !inference.entities.isEmpty else { throw inference.nothingIn(inputs, toDo: "infer") }
        for name in inference.notImported { warn("not imported: \(name)") }
        for hint in inference.keyHints() { warn(hint) }
        for error in inference.unreadable.first { warn("left out of the model (an import rejects it): \(error)") }
        if inference.unreadable.count > inference.unreadable.first.count {
            warn("\(inference.unreadable.count - inference.unreadable.first.count) more records left out likewise")
        }
        return inference.modelFile()
    }
}
