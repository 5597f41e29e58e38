import Foundation
import ModelFiles
import Readers

extension ImportPlan {
    /// What the inputs are: each file's format (and XML record spec), and the model inference
    /// made of every value they hold.
    struct Inputs {
        struct Source {
            let path: String
            let format: InputFormat
            /// The index of the file's first entity in `inference.entities` (a database has several).
            let firstEntity: Int
            let spec: RecordSpec?
        }

        var inference = ModelInference()
        var sources: [Source] = []

        /// A folder among the inputs (an export's) stands for its data files — CSV, JSON Lines, SQL, SQLite, plain
        /// or gzipped, by name — and, when no model is given, its model file (`model.yaml`).
        static func expandFolders(_ options: inout Options) throws {
            var expanded: [String] = []
            for path in options.inputs {
                var isDirectory: ObjCBool = false
                guard path != "-", FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
                    isDirectory.boolValue
                else {
                    expanded.append(path)
                    continue
                }
                let names = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
                let files = names.filter { name in
                    !name.hasPrefix(".")
                        && [.csv, .sqldump, .sqlite, .json, .jsonl].contains(InputFormat.named(byExtensionOf: name))
                }
                guard !files.isEmpty else {
                    throw ReaderError(
                        .io, "the folder \(path) holds no CSV, JSON, JSON Lines, SQL or SQLite file to import")
                }
                expanded += files.map { URL(fileURLWithPath: path).appendingPathComponent($0).path }
                if options.modelPath == nil { options.modelPath = StoreExport.modelFile(inFolder: path) }
            }
            options.inputs = expanded
        }

        /// Reads every input once (sniffing a CSV dialect the options leave open, into `options.csv`).
        /// - Throws: `ReaderError` for unreadable inputs, options that do not fit them, or inputs
        ///   with nothing to import.
        init(reading options: inout Options) throws {
            guard !options.inputs.isEmpty else { throw ReaderError(.invalidOption, "give at least one input") }
            try Self.expandFolders(&options)
            let givenFormat = try InputFormat.named(options.format)
            if options.csv == nil {
                options.csv = try options.csvFlags.dialect(for: options.inputs, format: givenFormat)
            }
            try Self.refuseXMLOptionsWithoutXML(options, givenFormat: givenFormat)
            for path in options.inputs {
                let format = try givenFormat ?? InputFormat.detect(path: path)
                if options.entity != nil || options.table != nil, options.inputs.count > 1,
                    format == .csv || format.isNested
                {
                    throw ReaderError(
                        .invalidOption,
                        "\(options.entity != nil ? "--entity" : "--table") names the entity of one CSV, XML or JSON "
                            + "input; "
                            + "give one input per import")
                }
                var spec: RecordSpec?
                if format.isNested {
                    let record = try Self.recordPath(options.record, of: path, format: format)
                    spec =
                        options.fields.isEmpty
                        ? try Self.discoverSpec(path: path, format: format, recordPath: record)
                        : RecordSpec(path: record, fields: options.fields)
                    // `--key user.id` names the field read from that path (`user_id`).
                    if let spec, let key = options.key {
                        options.key = key.map { name in spec.fields.first { $0.path == name }?.name ?? name }
                    }
                }
                let first = inference.entities.count
                inference.sampleLimit = format == .csv ? options.sampleRecords : nil
                try inference.add(
                    inputAt: path, format: format, recordPath: spec?.path ?? options.record, entity: options.entity,
                    table: options.table, dialect: options.csv, spec: spec, namespaces: options.namespaces)
                sources.append(Source(path: path, format: format, firstEntity: first, spec: spec))
                if format.isNested, !options.fields.isEmpty, first < inference.entities.count {
                    try Self.checkFields(options, of: inference.entities[first], path: path, format: format)
                }
            }
            guard !inference.entities.isEmpty else { throw inference.nothingIn(options.inputs, toDo: "import") }
            if let key = options.key { applyKey(key) }
        }

        /// A key given for an inferred model becomes its uniqueness constraint (upserts need one): each
        /// name the attribute of that name, else the column the input spells so (as the mapping takes it).
        private mutating func applyKey(_ key: [String]) {
            for source in sources {
                let columns = inference.entities[source.firstEntity].columns.map(\.source)
                let found = key.compactMap { name in
                    columns.first { ModelInference.attributeName($0) == name } ?? columns.first { $0 == name }
                }
                if found.count == key.count { inference.entities[source.firstEntity].uniqueKeys.append(found) }
            }
        }

        /// Each `--field` must find something in the records (a path that matches nothing would make a
        /// column of nulls): one that never does is refused, with the fields the records hold.
        private static func checkFields(
            _ options: Options, of entity: ModelInference.Entity, path: String, format: InputFormat
        ) throws {
            guard entity.columns.contains(where: { $0.values > 0 }) else { return }  // no records: nothing to say
            let empty = options.fields.filter { field in
                entity.columns.first { $0.source == field.name }.map { $0.values == 0 } ?? true
            }
            guard let first = empty.first, path != "-" else { return }
            let record = options.record ?? "/"
            let held = ((try? discoverSpec(path: path, format: format, recordPath: record))?.fields ?? []).map(\.path)
            let near = NearestName.nearest(to: first.path, among: held).map { " (did you mean \($0)?)" } ?? ""
            throw ReaderError(
                .invalidOption,
                "--field \(first.name)=\(first.path)\(near) matches nothing in the \(record) records of \(path) (their "
                    + "fields: \(held.joined(separator: ", ")))")
        }

        /// The record path of an XML or JSON input: XML needs one; a JSON document whose root is an
        /// object needs one too (`/` would make the whole document one record).
        private static func recordPath(_ given: String?, of path: String, format: InputFormat) throws -> String {
            if let given { return given }
            switch format {
            case .xml: throw XMLReader.recordPathNeeded(for: path)
            case .json: return try JSONReader.defaultRecordPath(of: path)
            default: return "/"
            }
        }

        /// The fields and children an XML or JSON input's records hold, from a sample of them.
        private static func discoverSpec(path: String, format: InputFormat, recordPath: String) throws -> RecordSpec {
            format == .xml
                ? try XMLReader.discoverSpec(path: path, recordPath: recordPath)
                : try JSONReader.discoverSpec(path: path, lines: format == .jsonl, recordPath: recordPath)
        }

        /// XML and JSON options with no such input are refused rather than ignored (standard input is
        /// not looked at twice).
        private static func refuseXMLOptionsWithoutXML(_ options: Options, givenFormat: InputFormat?) throws {
            guard !options.fields.isEmpty || options.record != nil, !options.inputs.contains("-"),
                try options.inputs.allSatisfy({ try !(givenFormat ?? InputFormat.detect(path: $0)).isNested })
            else { return }
            let inputs = options.inputs
            throw ReaderError(
                .invalidOption,
                "\(options.fields.isEmpty ? "--record" : "--field") applies to XML and JSON inputs, and "
                    + "\(inputs.joined(separator: ", ")) \(inputs.count == 1 ? "is" : "are") neither")
        }

        /// The entity plans of one input: `sources[number]`'s entities.
        func entities(of number: Int) -> Range<Int> {
            let end = number + 1 < sources.count ? sources[number + 1].firstEntity : inference.entities.count
            return sources[number].firstEntity..<end
        }
    }
}
