import ArgumentParser
import Foundation
import Pipeline
import Readers

/// `sluice import INPUT... --to STORE`: a one-off import without a pipeline file.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import files into a store in one command, inferring the model when none is given.",
        discussion: """
            Reads the inputs once to infer a model (an entity per CSV file, XML record element or SQL
            table, named after it; types from every value — `007` stays text; a dump's keys, unique
            columns and foreign keys become keys and relationships), then imports them like a
            pipeline would: a foreign key whose row comes later waits for it, keys make re-imports
            update instead of duplicate, the target is replaced only when the import succeeds.

            Into an existing store: a store written by Sluice is imported into with its own model
            (or --model); a SQLite database of another program gets Sluice's tables next to its
            own, which are never touched (a name clash is refused).

            --save-pipeline writes the pipeline (and the inferred model next to it) to keep: run it
            from cron with `sluice run`.

            Examples:
              sluice import SampleData/customers.csv --to out/customers.sqlite
              sluice import export.csv --to out/x.sqlite --delimiter ';' --no-header --null NULL --encoding latin1
              sluice import feed.xml --record /orders/order --field number=@id \\
                --field placed=placed/date --to out/feed.sqlite
              sluice import legacy.sql.gz --to app.db --save-pipeline legacy.yaml

            Exit status: as `sluice run` (0 success; 1 rejected records or an invalid graph; 2 usage,
            model or pipeline error; 3 input, store or I/O error; 4 the target is locked).
            """)

    @Argument(help: "Input files: CSV, XML, SQL dumps or SQLite files (plain or gzipped).")
    var inputs: [String]

    @Option(help: "The target store (SQLite file).")
    var to: String

    @Option(help: "auto, csv, xml, sqldump or sqlite.")
    var format = "auto"

    @Option(help: "The entity of a CSV or XML input (default: from the file name or record element).")
    var entity: String?

    @Option(help: "XML: the path of the record elements, e.g. /orders/order.")
    var record: String?

    @Option(name: .customLong("field"), help: "XML: a field as NAME=PATH (@attr, child, child/grandchild); repeatable.")
    var fields: [String] = []

    @Option(
        name: .customLong("key"),
        help: "An attribute identifying objects (upserts); repeatable. Default: the input's primary key or unique id.")
    var keys: [String] = []

    @Option(help: "A model file (YAML or JSON) instead of an inferred one.")
    var model: String?

    @Option(help: "Top-level records per batch.")
    var batchSize = 5_000

    @Option(help: "Rejected records allowed before the import fails.")
    var maxErrors = 0

    @Option(help: "Write rejected records here (JSON lines).")
    var rejects: String?

    @Option(help: "CSV: the field delimiter (one character, or \\t).")
    var delimiter: String?

    @Option(help: "CSV: the quote character, or none.")
    var quote: String?

    @Option(help: "CSV: an escape character inside quotes (default: quotes are doubled).")
    var escape: String?

    @Flag(help: "CSV: the first line is data, not column names (columns are then 1, 2, …).")
    var noHeader = false

    @Option(help: "CSV: utf-8, latin1, windows-1252, utf-16, utf-16le or utf-16be.")
    var encoding: String?

    @Option(help: "CSV: a value meaning null; repeatable.")
    var null: [String] = []

    @Option(help: "CSV: lines starting with this character are skipped.")
    var comment: String?

    @Option(help: "Also write the pipeline to this file (and an inferred model next to it).")
    var savePipeline: String?

    @OptionGroup var output: RunOutput

    func validate() throws {
        guard format == "auto" || InputFormat(rawValue: format) != nil else {
            throw ValidationError("--format must be auto, csv, xml, sqldump or sqlite, not \(format.debugDescription)")
        }
        for field in fields where !field.contains("=") {
            throw ValidationError("--field takes NAME=PATH, not \(field.debugDescription)")
        }
        guard batchSize > 0 else { throw ValidationError("--batch-size must be at least 1") }
        guard maxErrors >= 0 else { throw ValidationError("--max-errors cannot be negative") }
    }

    func run() throws {
        var options = ImportPlan.Options(inputs: inputs, target: to)
        options.format = InputFormat(rawValue: format)
        options.entity = entity
        options.record = record
        options.fields = fields.map { field in
            let parts = field.split(separator: "=", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
        options.key = keys.isEmpty ? nil : keys.flatMap { $0.split(separator: ",").map(String.init) }
        options.modelPath = model
        options.batchSize = batchSize
        options.maxErrors = maxErrors
        options.rejects = rejects
        let plan: ImportPlan
        do {
            options.csv = try dialect()
            let directory =
                savePipeline.map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
                ?? FileManager.default.temporaryDirectory
            let stem =
                savePipeline.map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent }
                ?? "sluice-import-\(getpid())"
            let modelFile = directory.appendingPathComponent(stem + ".model.yaml")
            plan = try ImportPlan(options, modelFile: modelFile.path)
            let pipelineFile =
                savePipeline.map { URL(fileURLWithPath: $0) } ?? directory.appendingPathComponent(stem + ".yaml")
            if let modelText = plan.modelText { try modelText.write(to: modelFile, atomically: true, encoding: .utf8) }
            try plan.pipelineText.write(to: pipelineFile, atomically: true, encoding: .utf8)
            defer {
                if savePipeline == nil {
                    try? FileManager.default.removeItem(at: pipelineFile)
                    if plan.modelText != nil { try? FileManager.default.removeItem(at: modelFile) }
                }
            }
            let config = try PipelineFile.load(contentsOf: pipelineFile)
            try execute(config, output, resume: false)
        } catch let error as ExitCode {
            throw error
        } catch {
            throw report(error)
        }
    }

    /// The CSV dialect from the flags (over what sniffing the first CSV input finds), or `nil` to
    /// sniff every CSV input.
    private func dialect() throws -> CSVDialect? {
        guard
            delimiter != nil || quote != nil || escape != nil || noHeader || encoding != nil || !null.isEmpty
                || comment != nil
        else { return nil }
        let firstCSV = inputs.first { (try? InputFormat(rawValue: format) ?? InputFormat.detect(path: $0)) == .csv }
        var dialect = try firstCSV.map { try CSVSniffer.sniff(path: $0) } ?? CSVDialect()
        func byte(_ text: String, _ flag: String) throws -> UInt8 {
            let value = text == "\\t" ? "\t" : text
            guard value.utf8.count == 1, let byte = value.utf8.first else {
                throw ReaderError(.invalidOption, "\(flag) takes one ASCII character, not \(text.debugDescription)")
            }
            return byte
        }
        if let delimiter { dialect.delimiter = try byte(delimiter, "--delimiter") }
        if let quote { dialect.quote = quote.lowercased() == "none" ? nil : try byte(quote, "--quote") }
        if let escape { dialect.escape = try byte(escape, "--escape") }
        if noHeader { dialect.hasHeader = false }
        if let encoding {
            guard let known = TextEncoding(name: encoding) else {
                throw ReaderError(
                    .invalidOption,
                    "unknown encoding \(encoding.debugDescription) (known: "
                        + "\(TextEncoding.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            dialect.encoding = known
        }
        if !null.isEmpty { dialect.nullMarkers = null }
        if let comment { dialect.comment = try byte(comment, "--comment") }
        return dialect
    }
}
