import Foundation
import ModelFiles
import ObjectGraph
import Readers
import Stores

extension ImportPlan {
    /// The first line of every pipeline `sluice import` writes (`--save-pipeline` replaces only such
    /// a file).
    static let pipelineHeader = "# " + pipelineComment
    private static let pipelineComment = "Written by `sluice import`; run it again with `sluice run`."

    /// Writes an import's pipeline: the target, the run's settings, and a source per input file,
    /// SQL table or XML record path.
    struct PipelineWriter {
        let options: Options
        /// The folder the pipeline is saved in (`nil`: paths are written absolute).
        let folder: URL?
        /// What was guessed about the inputs (an encoding taken for invalid UTF-8).
        private(set) var guesses: [String] = []

        init(options: Options, folder: URL?) {
            self.options = options
            self.folder = folder?.standardizedFileURL
        }

        /// The pipeline file's text.
        /// - Throws: `ReaderError` when a given or stored model has nothing for an input.
        mutating func pipeline(inputs: Inputs, model: ModelChoice) throws -> String {
            let type = try TargetStore.storeType(
                forTargetAt: options.target, given: options.storeType, option: "--store-type")
            let typeName = TargetStore.typesByName.first { $0.value == type }?.key ?? "sqlite"
            if typeName != "sqlite", options.layout != nil || options.dates != nil {
                throw UsageError("--layout and --dates are options of a SQLite target")
            }
            var target: [(String, YAMLValue)] =
                type == PostgresStore.storeType
                ? [
                    ("store", .text("postgres")), ("url", .text(PostgresStore.redacted(options.target))),
                    ("commit", .text("atomic")),
                ]
                : [("store", .text(typeName)), ("path", .text(written(options.target))), ("commit", .text("atomic"))]
            if model.sharesFile { target.append(("shared", .flag(true))) }
            if model.migrates { target.append(("lightweight_migration", .flag(true))) }
            if let layout = options.layout { target.append(("layout", .text(layout))) }
            if let dates = options.dates { target.append(("dates", .text(dates))) }
            var errors: [(String, YAMLValue)] = [("max", .number(options.maxErrors))]
            if let rejects = options.rejects { errors.append(("rejects", .text(written(rejects)))) }
            let file = YAMLValue.map([
                ("version", .number(1)), ("model", .text(written(model.path))), ("target", .map(target, flow: true)),
                ("batch", .map([("size", .number(options.batchSize)), ("contexts", .number(2))], flow: true)),
                ("merge", .text(options.merge)), ("errors", .map(errors, flow: true)),
                ("sources", .list(try sources(inputs: inputs, model: model.model), flow: false)),
            ])
            // Names from the command line and the inputs are what they say: a `${` in one is no variable.
            return file.mappingTexts { $0.replacingOccurrences(of: "${", with: "$${") }
                .document(comment: ImportPlan.pipelineComment)
        }

        /// A path as the pipeline says it: relative to the pipeline's folder when both are under
        /// one folder other than the root, else absolute (standard input stays `-`).
        func written(_ path: String) -> String {
            guard path != "-" else { return path }
            let url = URL(fileURLWithPath: path).standardizedFileURL
            guard let folder else { return url.path }
            let base = folder.pathComponents, parts = url.pathComponents
            var common = 0
            while common < base.count, common < parts.count, base[common] == parts[common] { common += 1 }
            guard common > 1 else { return url.path }
            let relative = Array(repeating: "..", count: base.count - common) + parts[common...]
            return relative.joined(separator: "/")
        }

        /// One source per input file, SQL table or XML record path (nested records stay with their parent's).
        private mutating func sources(inputs: Inputs, model: ManagedObjectModel?) throws -> [YAMLValue] {
            let plans = inputs.inference.plans()
            var sources: [YAMLValue] = []
            var key = options.key.map { KeyRequest(names: $0) }
            for (number, input) in inputs.sources.enumerated() {
                for index in inputs.entities(of: number) where plans[index].parent == nil {
                    let plan = plans[index]
                    let links = ImportPlan.links(of: plan, in: model)
                    guard links != nil || model == nil || model?.entity(named: plan.name) != nil else {
                        throw ReaderError(
                            .invalidOption,
                            "the target's model has no entity \(plan.name) for \(input.path) (it has: "
                                + "\(model!.entities.map(\.name).sorted().joined(separator: ", "))); name it with "
                                + "--entity")
                    }
                    var parts: [(String, YAMLValue)] = [
                        ("name", .text(input.format == .sqldump || input.format == .sqlite ? plan.origin : plan.name)),
                        ("format", .text(input.format.rawValue)), ("path", .text(written(input.path))),
                    ]
                    var numbered = false
                    switch input.format {
                    case .csv:
                        let dialect = try dialect(of: input.path)
                        numbered = !dialect.hasHeader
                        parts.append(("csv", Self.csvOptions(dialect)))
                    case .xml:
                        parts.append(("record", .text(options.record ?? "")))
                        if !options.namespaces.isEmpty {
                            let bound = options.namespaces.sorted { $0.key < $1.key }.map {
                                ($0.key, YAMLValue.text($0.value))
                            }
                            parts.append(("namespaces", .map(bound, flow: true)))
                        }
                    case .sqldump, .sqlite: parts.append(("table", .text(plan.origin)))
                    case .json, .jsonl:
                        if let record = options.record, record != "/" { parts.append(("record", .text(record))) }
                    }
                    if let links {
                        parts += ImportPlan.linksMapping(links)
                    } else {
                        if options.mode != .merge { parts.append(("mode", .text(options.mode.rawValue))) }
                        if let most = options.maxDelete {
                            parts.append(("sync", .map([("max_delete", .text(most))], flow: true)))
                        }
                        parts += try ImportPlan.mapping(
                            plans, index, spec: input.spec, numberedColumns: numbered, key: &key, model: model)
                    }
                    sources.append(.map(parts))
                }
            }
            if let key {
                guard key.used else {
                    throw key.unmatched(in: plans.filter { $0.parent == nil }, inputs: inputs.sources.map(\.path))
                }
                guesses += key.notes
            }
            return sources
        }

        /// A CSV input's dialect: the options', or sniffed; an empty field is null unless markers are
        /// given (as inference takes it). A guessed encoding is noted in `guesses`.
        private mutating func dialect(of path: String) throws -> CSVDialect {
            var dialect = try options.csv ?? CSVSniffer.sniff(path: path)
            if options.csv == nil, let at = try CSVSniffer.unclosedQuoteInFirstRecord(of: path, dialect: dialect) {
                guesses.append(
                    "\(path): the double quote at line \(at.line), column \(at.column) opens a field that is never "
                        + "closed, so the file is read with double quotes as part of the values; give --quote '\"' "
                        + "to be stopped there instead")
            }
            if dialect.nullMarkers.isEmpty { dialect.nullMarkers = [""] }
            if dialect.encoding == .windows1252, options.csvFlags.encoding == nil,
                !guesses.contains(where: { $0.hasPrefix(path + " ") })
            {
                let at = (try? CSVSniffer.firstInvalidUTF8(inSampleOf: path)).flatMap { $0 }
                guesses.append(
                    "\(path) is not valid UTF-8"
                        + (at.map { " (the first invalid byte at line \($0.line), column \($0.column))" } ?? "")
                        + ": read as windows-1252; give --encoding to read it otherwise")
            }
            return dialect
        }

        private static func csvOptions(_ dialect: CSVDialect) -> YAMLValue {
            func byte(_ value: UInt8) -> YAMLValue { .text(String(UnicodeScalar(value))) }
            var parts: [(String, YAMLValue)] = [
                ("header", .flag(dialect.hasHeader)), ("delimiter", byte(dialect.delimiter)),
                ("quote", dialect.quote.map(byte) ?? .text("none")), ("encoding", .text(dialect.encoding.rawValue)),
                ("null", .texts(dialect.nullMarkers)),
            ]
            if let escape = dialect.escape { parts.append(("escape", byte(escape))) }
            if let comment = dialect.comment { parts.append(("comment", byte(comment))) }
            return .map(parts, flow: true)
        }
    }
}
