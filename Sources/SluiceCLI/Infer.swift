import ArgumentParser
import Pipeline

/// `sluice infer INPUT...`: prints a proposed model file for the inputs.
struct Infer: LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Propose a model (YAML) for CSV, XML, JSON, JSON Lines, SQL dump or SQLite inputs.",
        usage: "sluice infer <inputs> ... [<options>]",
        discussion: """
            One entity per CSV file, XML record element, JSON record array (and each kind
            of nested record: repeated XML elements, JSON arrays) or SQL table. JSON
            members of nested objects are columns by path (customer.address.city →
            customer_address_city). A column's type is the narrowest that holds every value
            without loss (`007` and `+5` stay strings; a date only when every value is
            ISO 8601 with a zone, a bare day, or SQL's `2024-01-31 12:30:00` in UTC); a
            column is required when no value is empty (a SQL table: when it says NOT
            NULL). Keys come from declared primary keys and unique constraints, or an
            `id` column whose values all differ; relationships from declared foreign
            keys, `<name>_id` columns matching another input's key, and nesting. Review
            the proposal, then use it with `sluice import --model` or a pipeline file.

            Examples:
              sluice infer SampleData/customers.csv
              sluice infer SampleData/legacy-orders.sql > legacy.model.yaml
              sluice infer SampleData/orders.xml --record /orders/order
              sluice infer SampleData/orders-api.json --record /data/orders
              sluice infer events.jsonl --field id=event_id --field country=user.country

            Exit status: 0 success; 2 a missing or wrong option; 3 an input that cannot
            be read (the message names file, line and column).
            """)

    @Argument(help: "Input files (plain or gzipped).")
    var inputs: [String]

    @Option(help: "auto, csv, xml, sqldump, sqlite, json or jsonl.")
    var format = FormatOption.auto

    @Option(
        help: "XML: the path of the record elements, e.g. /orders/order; JSON: of the records' array, e.g. /data/items."
    )
    var record: String?

    @Option(name: .customLong("namespace"), help: "XML: a prefix the record path uses, as PREFIX=URI; repeatable.")
    var namespaces: [String] = []

    @Option(
        name: .customLong("field"),
        help: "XML or JSON: a field as NAME=PATH (XML: @attr, child/grandchild; JSON: a.b, list[0]); repeatable.")
    var fields: [String] = []

    @OptionGroup var logging: LogOptions

    func validate() throws {
        for field in fields where !field.contains("=") {
            throw ValidationError("--field takes NAME=PATH, not \(field.debugDescription)")
        }
    }

    func run() throws {
        let model = try exitingOnFailure {
            try ModelProposal.modelFile(
                for: inputs, format: format.rawValue, recordPath: record,
                namespaces: try ImportPlan.namespaceBindings(namespaces), fields: ImportPlan.fieldPaths(fields),
                warn: warn)
        }
        print(model, terminator: "")
    }
}
