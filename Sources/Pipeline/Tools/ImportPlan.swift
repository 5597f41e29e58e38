import Foundation
import ModelFiles
import ObjectGraph
import Readers
import Stores

/// `sluice import INPUT... --to STORE`: the one-off form of a pipeline. The inputs are read once to
/// infer a model (unless one is given, or the target is a Sluice store that holds its model); then a
/// pipeline is written for them — one source per file, per SQL table, or per XML record path, every
/// column mapped onto the attribute inference named after it, foreign keys as must-exist lookups
/// (a child row before its parent waits for it), keys for upserts — and run like any other.
/// `pipelineText` is that pipeline, so a user can keep it and run it from cron instead.
public struct ImportPlan {
    public struct Options: Sendable {
        public var inputs: [String]
        public var target: String
        /// The inputs' format: `csv`, `xml`, `sqldump`, `sqlite` or `jsonl`; `nil` (or `auto`) tells it per file.
        public var format: String?
        /// The entity of a single CSV or XML input (default: from the file name or record element).
        public var entity: String?
        /// The table of a CSV or XML input's new entity (`--table`).
        public var table: String?
        /// XML: the path of the record elements.
        public var record: String?
        /// XML: namespace prefixes the record path uses, bound to their URIs.
        public var namespaces: [String: String] = [:]
        /// XML: the record's fields, `name` → `@attr`, `child` or `child/grandchild`.
        public var fields: [(name: String, path: String)] = []
        /// Attributes identifying an object (default: the input's primary key, or a unique `id`).
        public var key: [String]?
        /// A model file to import into instead of an inferred one.
        public var modelPath: String?
        /// CSV: the dialect (sniffed per file when `nil`).
        public var csv: CSVDialect?
        /// CSV: what the command line says of the dialect; applied over what sniffing the first
        /// CSV input finds, and the result used for every CSV input (see `csv`).
        public var csvFlags = CSVFlags()
        public var batchSize = 5_000
        public var maxErrors = 0
        public var rejects: String?
        public var merge = "object-trumps"
        /// How each input's records meet the stored objects of their entity (`mode:`).
        public var mode = PipelineConfig.LoadMode.merge
        /// `mode: sync`: `sync.max_delete` as given (`100`, `5%`).
        public var maxDelete: String?
        /// A new target's `layout` and `dates` (the SQLite store's options; `nil`: its defaults).
        /// The target's store type (`sqlite`, `xml`, `binary`); `nil`: the existing file's, else the
        /// target's extension's (`TargetStore.storeType(forTargetAt:given:option:)`).
        public var storeType: String?
        public var layout: String?
        public var dates: String?
        /// Infer from at most this many records of each CSV input (`nil`: every record); the plan
        /// then says `isSample` when an input held more (`SampledImport`).
        public var sampleRecords: Int?
        /// What an earlier plan read of the target, to take instead of reading it again.
        public var targetReading: TargetReading?
        /// Whether loading the pipeline keeps a given Xcode model's warnings to itself (a second plan
        /// of the same import).
        public var quiet = false

        public init(inputs: [String], target: String) {
            self.inputs = inputs
            self.target = target
        }
    }

    /// The pipeline file's text: paths relative to the folder it is saved in, or absolute.
    public let pipelineText: String
    /// The inferred model file's text, or `nil` when the model is given or stored in the target.
    public let modelText: String?
    /// What the inputs define but hold no rows of (views, triggers, virtual tables), for a warning.
    public let notImported: [String]
    /// What the plan guessed that the user should know (an encoding taken for invalid UTF-8).
    public let guesses: [String]
    /// Whether the model was inferred from a sample of an input (`Options.sampleRecords`).
    public let isSample: Bool
    /// What was read of the target.
    public let targetReading: TargetReading

    /// Infers what is needed and writes the pipeline.
    /// - Parameters:
    ///   - modelFile: where the pipeline says the model is (the inferred model is to be written
    ///     there; ignored when the model is given or stored).
    ///   - folder: the folder the pipeline is saved in: its paths are written relative to it (`nil`:
    ///     absolute).
    /// - Throws: `ReaderError` for unreadable inputs or missing options; `StoreError`.
    public init(_ options: Options, modelFile: String, folder: URL? = nil) throws {
        var options = options
        let inputs = try Inputs(reading: &options)
        let model = try ModelChoice(for: options, inputs: inputs, modelFile: modelFile)
        targetReading = model.reading
        modelText = model.text
        notImported = inputs.inference.notImported
        isSample = inputs.inference.isSample
        var writer = PipelineWriter(options: options, folder: folder)
        pipelineText = try writer.pipeline(inputs: inputs, model: model)
        // Why an input has no key, when none was given and the model gives none.
        let hints = options.key == nil && model.model == nil ? inputs.inference.keyHints() : []
        guesses = writer.guesses + hints
    }

    /// `--namespace p=URI` options as prefix → URI bindings.
    /// - Throws: `ReaderError.Kind.invalidOption` (exit 2) for one without `=`, an empty prefix or URI,
    ///   or a prefix bound twice.
    /// `--field NAME=PATH` options as (name, path) pairs (checked for the `=` by the command).
    public static func fieldPaths(_ options: [String]) -> [(name: String, path: String)] {
        options.map { option in
            let parts = option.split(separator: "=", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
    }

    public static func namespaceBindings(_ options: [String]) throws -> [String: String] {
        var bindings: [String: String] = [:]
        for option in options {
            let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ReaderError(.invalidOption, "--namespace takes PREFIX=URI (got \(option.debugDescription))")
            }
            guard bindings.updateValue(parts[1], forKey: parts[0]) == nil else {
                throw ReaderError(.invalidOption, "--namespace binds the prefix \(parts[0]) twice")
            }
        }
        return bindings
    }
}
