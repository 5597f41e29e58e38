import ArgumentParser
import Foundation
import Pipeline

/// `sluice import INPUT... --to STORE`: a one-off import without a pipeline file.
struct Import: LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import files into a store, inferring the model when none is given.",
        discussion: """
            Reads the inputs once to infer a model (an entity per CSV file, XML record
            element, JSON record array or SQL table, named after it; nested arrays of
            JSON and repeated XML elements as child entities; types from every value:
            `007` stays text; a dump's keys, unique columns and foreign keys become keys
            and relationships), then imports them like a pipeline would: a foreign key
            whose row comes later waits for it, keys make re-imports update instead of
            duplicate, the target is replaced only when the import succeeds.

            CSV inputs are read once: the model is inferred from the first 50,000
            records and the import starts at once, while every record is inferred
            beside it; should the whole file say otherwise (a later value that is no
            number, a missing value, a repeated key), that attempt is thrown away and
            the import runs again with the model of every record. The store is always
            the one a model of every record makes.

            Into an existing store: a store written by Sluice is imported into with its
            own model (or --model); a SQLite database of another program gets Sluice's
            tables next to its own, which are never touched (a name clash is refused).

            A folder stands for its CSV, JSON, SQL and SQLite files, and its model.yaml
            (what `sluice export` writes) is the model unless --model names another: an
            export imports back into an equal store.

            --save-pipeline writes the pipeline (and the inferred model next to it) to
            keep: run it from cron with `sluice run`.

            Examples:
              sluice import SampleData/customers.csv --to out/customers.sqlite
              sluice import export.csv --to out/x.sqlite --delimiter ';' --no-header \\
                --null NULL --encoding latin1
              sluice import feed.xml --record /orders/order --field number=@id \\
                --field placed=placed/date --to out/feed.sqlite
              sluice import api.json --record /data/orders --field id=id \\
                --field city=customer.address.city --to out/api.sqlite
              sluice import events.jsonl.gz --to out/events.sqlite --key event_id
              sluice import legacy.sql.gz --to app.db --save-pipeline legacy.yaml
              sluice import shop-export/ --to copy.db

            Exit status: as `sluice run` (0 success; 1 rejected records or an invalid
            graph; 2 usage, model or pipeline error; 3 input, store or I/O error; 4 the
            target is locked).
            """)

    @Argument(
        help:
            "Input files: CSV, XML, JSON, JSON Lines, SQL dumps or SQLite files (plain or gzipped), or export folders.")
    var inputs: [String]

    @Option(help: "The target store (a SQLite file; .xml an XML store, .bin a binary one; or postgresql://…?schema=…).")
    var to: String

    @Option(help: "The target's store type: sqlite, xml or binary (default: the file's, else its extension's).")
    var storeType: StoreTypeOption?

    @Option(help: "auto, csv, xml, sqldump, sqlite, json or jsonl.")
    var format = FormatOption.auto

    @Option(help: "The entity of a CSV, XML or JSON input (default: from the file name or record path).")
    var entity: String?

    @Option(help: "The table of a CSV, XML or JSON input's entity (default: the entity's name, else the file name).")
    var table: String?

    @Option(
        help: "XML: the path of the record elements, e.g. /orders/order; JSON: of the records' array, e.g. /data/items."
    )
    var record: String?

    @Option(name: .customLong("namespace"), help: "XML: a prefix the record path uses, as PREFIX=URI; repeatable.")
    var namespaces: [String] = []

    @Option(
        name: .customLong("field"),
        help:
            "XML or JSON: a field as NAME=PATH (XML: @attr, child/grandchild; JSON: a.b, list[0]); repeatable."
    )
    var fields: [String] = []

    @Option(
        name: .customLong("key"),
        help: "An attribute identifying objects (upserts); repeatable. Default: the input's primary key or unique id.")
    var keys: [String] = []

    @Option(
        help: """
            How records meet stored objects: merge (new keys inserted, stored ones updated), append (inserted \
            only: a stored key is rejected), replace (the stored objects of the entity deleted first), sync \
            (merge, then delete the stored objects whose key the input lacks).
            """)
    var mode = ModeOption.merge

    @Option(
        help: "With --mode sync: the most stored objects it may delete, a count (100) or a share (5%). Default 10%.")
    var maxDelete: String?

    @Option(help: "A model file (YAML, JSON or Xcode) instead of an inferred one.")
    var model: String?

    @Option(help: "Top-level records per batch.")
    var batchSize = 5_000

    @Option(help: "Rejected records allowed before the import fails.")
    var maxErrors = 0

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

    @OptionGroup var layout: LayoutOptions

    @OptionGroup var output: RunOutput

    @OptionGroup var logging: LogOptions

    func validate() throws {
        for field in fields where !field.contains("=") {
            throw ValidationError("--field takes NAME=PATH, not \(field.debugDescription)")
        }
        guard batchSize > 0, batchSize <= PipelineConfig.maxBatchSize else {
            throw ValidationError("--batch-size must be from 1 to \(PipelineConfig.maxBatchSize)")
        }
        guard maxErrors >= 0 else { throw ValidationError("--max-errors cannot be negative") }
        if let maxDelete {
            guard mode == .sync else { throw ValidationError("--max-delete applies to --mode sync") }
            guard PipelineConfig.DeleteLimit(maxDelete) != nil else {
                throw ValidationError("--max-delete takes a count (100) or a share of the stored objects (5%)")
            }
        }
        if output.dryRun, let savePipeline {
            throw ValidationError(
                "--save-pipeline writes \(savePipeline) and its model, and --dry-run writes nothing: "
                    + "drop --dry-run to save the pipeline (then `sluice run \(savePipeline) --dry-run` previews it)")
        }
    }

    func run() throws {
        var options = ImportPlan.Options(inputs: inputs, target: to)
        options.format = format.rawValue
        options.entity = entity
        options.record = record
        options.namespaces = try exitingOnFailure { try ImportPlan.namespaceBindings(namespaces) }
        options.fields = ImportPlan.fieldPaths(fields)
        options.key = keys.isEmpty ? nil : keys.flatMap { $0.split(separator: ",").map(String.init) }
        options.modelPath = model
        options.mode = PipelineConfig.LoadMode(rawValue: mode.rawValue) ?? .merge
        options.maxDelete = maxDelete
        options.batchSize = batchSize
        options.maxErrors = maxErrors
        options.rejects = output.rejects
        options.csvFlags.delimiter = delimiter
        options.csvFlags.quote = quote
        options.csvFlags.escape = escape
        options.csvFlags.noHeader = noHeader
        options.csvFlags.encoding = encoding
        options.csvFlags.nullMarkers = null
        options.csvFlags.comment = comment
        options.storeType = storeType?.rawValue
        options.table = table
        options.layout = layout.layout?.rawValue
        options.dates = layout.dates?.rawValue
        // One pass over the inputs where they allow it (SampledImport): a pipeline to save needs the
        // whole inputs' plan first, standard input is read once.
        let onePass = savePipeline == nil && !options.inputs.contains("-")
        var check: SampledImport?
        try execute(
            command: "import", pipeline: savePipeline, output, resume: false, sampled: { check },
            prepare: {
                guard onePass else {
                    let plan = try ImportPlan.prepare(options, savingPipelineTo: savePipeline)
                    warnAbout(plan)
                    return plan.config
                }
                let (plan, sampled) = try SampledImport.start(options)
                check = sampled
                if sampled == nil { warnAbout(plan) }
                return plan.config
            })
    }
}

/// What an import's plan says the user should know: what the inputs hold that is not imported, and
/// what was guessed.
func warnAbout(_ plan: ImportPlan.Prepared) {
    for name in plan.notImported { warn("not imported: \(name)") }
    for guess in plan.guesses { warn(guess) }
}
