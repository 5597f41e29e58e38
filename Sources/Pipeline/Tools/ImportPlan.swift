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
        /// The inputs' format: `csv`, `xml`, `sqldump` or `sqlite`; `nil` (or `auto`) tells it per file.
        public var format: String?
        /// The entity of a single CSV or XML input (default: from the file name or record element).
        public var entity: String?
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
        /// A new target's `layout` and `dates` (the SQLite store's options; `nil`: its defaults).
        public var layout: String?
        public var dates: String?

        public init(inputs: [String], target: String) {
            self.inputs = inputs
            self.target = target
        }
    }

    /// The pipeline file's text (absolute paths).
    public let pipelineText: String
    /// The inferred model file's text, or `nil` when the model is given or stored in the target.
    public let modelText: String?
    /// What the inputs define but hold no rows of (views, triggers, virtual tables), for a warning.
    public let notImported: [String]
    /// What the plan guessed that the user should know (an encoding taken for invalid UTF-8).
    public private(set) var guesses: [String] = []

    /// Infers what is needed and writes the pipeline.
    /// - Parameter modelFile: where the pipeline says the model is (the inferred model is to be
    ///   written there; ignored when the model is given or stored).
    /// - Throws: `ReaderError` for unreadable inputs or missing options; `StoreError`.
    public init(_ options: Options, modelFile: String) throws {
        guard !options.inputs.isEmpty else { throw ReaderError(.invalidOption, "give at least one input") }
        let givenFormat = try InputFormat.named(options.format)
        var options = options
        if options.csv == nil { options.csv = try options.csvFlags.dialect(for: options.inputs, format: givenFormat) }
        var inference = ModelInference()
        var sources: [(path: String, format: InputFormat, firstEntity: Int, spec: XMLRecordSpec?)] = []
        // XML-only options with no XML input are refused rather than ignored (standard input is
        // not looked at twice).
        if !options.fields.isEmpty || options.record != nil, !options.inputs.contains("-"),
            try options.inputs.allSatisfy({ try (givenFormat ?? InputFormat.detect(path: $0)) != .xml })
        {
            throw ReaderError(
                .invalidOption,
                "\(options.fields.isEmpty ? "--record" : "--field") applies to XML inputs, and "
                    + "\(options.inputs.joined(separator: ", ")) \(options.inputs.count == 1 ? "is" : "are") not XML")
        }
        for path in options.inputs {
            let format = try givenFormat ?? InputFormat.detect(path: path)
            if options.entity != nil, options.inputs.count > 1, format == .csv || format == .xml {
                throw ReaderError(
                    .invalidOption, "--entity names the entity of one CSV or XML input; give one input per import")
            }
            var spec: XMLRecordSpec?
            if format == .xml {
                guard let record = options.record else {
                    throw XMLReader.recordPathNeeded(for: path)
                }
                spec =
                    options.fields.isEmpty
                    ? try XMLReader.discoverSpec(path: path, recordPath: record)
                    : XMLRecordSpec(path: record, fields: options.fields)
            }
            let first = inference.entities.count
            try inference.add(
                inputAt: path, format: format, recordPath: options.record, entity: options.entity, dialect: options.csv,
                spec: spec, namespaces: options.namespaces)
            sources.append((path, format, first, spec))
        }

        guard !inference.entities.isEmpty else {
            throw ReaderError(
                .io,
                "\(options.inputs.joined(separator: ", ")) hold\(options.inputs.count == 1 ? "s" : "") no records, nor "
                    + "a header naming columns: nothing to import")
        }
        // A key given for an inferred model becomes its uniqueness constraint (upserts need one).
        if let key = options.key {
            for source in sources {
                let columns = inference.entities[source.firstEntity].columns.map(\.source).filter {
                    key.contains(ModelInference.attributeName($0))
                }
                if columns.count == key.count { inference.entities[source.firstEntity].uniqueKeys.append(columns) }
            }
        }
        // The model: given, stored in the target, or the inferred one.
        var modelPath = modelFile, inferred: String? = inference.modelFile(), model: ManagedObjectModel?
        var migrates = false
        if let given = options.modelPath {
            modelPath = URL(fileURLWithPath: given).standardizedFileURL.path
            inferred = nil
            model = try ModelFile.load(contentsOf: URL(fileURLWithPath: modelPath))
        } else if FileManager.default.fileExists(atPath: options.target),
            let metadata = try? SQLiteStore.metadata(at: URL(fileURLWithPath: options.target)),
            let stored = try StoredModel.model(in: metadata, store: options.target),
            let recorded = StoredModel.text(in: metadata), !recorded.isJSON
        {
            // Into an existing store: its own model, written out for the pipeline to read — grown by
            // the entities of inputs it has no entity for (a new file) and the optional attributes of
            // columns its entities lack (Core Data's lightweight migration; the store checks its tables).
            model = stored
            inferred = recorded.text
            let plans = inference.plans().filter { $0.parent == nil && $0.links == nil }
            let newEntities = plans.map(\.name).filter { stored.entity(named: $0) == nil }
            var newAttributes: [String: [String]] = [:]
            for plan in plans {
                guard let entity = stored.entity(named: plan.name) else { continue }
                let missing = plan.fields.filter { field in
                    field.column != Record.ordinalFieldName
                        && Self.property(forColumn: field.column, inferred: field.attribute, of: entity) == nil
                }
                if !missing.isEmpty { newAttributes[plan.name] = missing.map(\.attribute) }
            }
            if !newEntities.isEmpty || !newAttributes.isEmpty, let text = inferred,
                let grown = ModelFile.growing(
                    text, by: inference.modelFile(), entities: newEntities, attributes: newAttributes),
                let grownModel = try? ModelFile.load(text: grown, file: options.target)
            {
                model = grownModel
                inferred = grown
                migrates = true
            }
        }
        modelText = inferred
        notImported = inference.notImported

        let plans = inference.plans()
        var text = Self.pipelineHeader + "\nversion: 1\n"
        text += "model: \(Self.quoted(modelPath))\n"
        // Another program's SQLite database: the store's tables go next to its own.
        var shared = false
        if FileManager.default.fileExists(atPath: options.target) {
            do { _ = try SQLiteStore.metadata(at: URL(fileURLWithPath: options.target)) } catch let error as StoreError
                where error.code == .incompatibleModel
            {
                shared = true
            }
        }
        text +=
            "target: { store: sqlite, path: "
            + "\(Self.quoted(URL(fileURLWithPath: options.target).standardizedFileURL.path)), commit: "
            + "atomic\(shared ? ", shared: true" : "")\(migrates ? ", lightweight_migration: true" : "")"
            + (options.layout.map { ", layout: \($0)" } ?? "") + (options.dates.map { ", dates: \($0)" } ?? "") + " }\n"
        text += "batch: { size: \(options.batchSize), contexts: 2 }\n"
        text += "merge: \(options.merge)\n"
        text +=
            "errors: { max: \(options.maxErrors)"
            + (options.rejects.map { ", rejects: \(Self.quoted(URL(fileURLWithPath: $0).standardizedFileURL.path))" }
                ?? "") + " }\n"
        text += "sources:\n"
        for (number, source) in sources.enumerated() {
            let end = number + 1 < sources.count ? sources[number + 1].firstEntity : plans.count
            let path = Self.quoted(
                source.path == "-" ? "-" : URL(fileURLWithPath: source.path).standardizedFileURL.path)
            for index in source.firstEntity..<end where plans[index].parent == nil {
                let plan = plans[index]
                // A pure link table fills its many-to-many relationship, when the model has it.
                var links = plan.links.flatMap { links -> ModelInference.LinksPlan? in
                    guard let model else { return links }
                    let relationship = model.entity(named: links.owner)?.relationship(named: links.relationship)
                    return relationship?.isManyToMany == true
                        && relationship?.destinationEntityName == links.destination ? links : nil
                }
                // A file of pairs named as a join table of the model (a CSV export's `book_author.csv`).
                if links == nil, let model, model.entity(named: plan.name) == nil {
                    links = Self.links(
                        ofTable: plan.table, columns: plan.fields.map(\.column) + plan.lookups.map(\.column), in: model)
                }
                guard links != nil || model == nil || model?.entity(named: plan.name) != nil else {
                    throw ReaderError(
                        .invalidOption,
                        "the target's model has no entity \(plan.name) for \(source.path) (it has: "
                            + "\(model!.entities.map(\.name).sorted().joined(separator: ", "))); name it with --entity"
                    )
                }
                let sourceName = source.format == .sqldump || source.format == .sqlite ? plan.origin : plan.name
                text += "  - name: \(Self.quoted(sourceName))\n"
                text += "    format: \(source.format.rawValue)\n    path: \(path)\n"
                var dialect =
                    try source.format == .csv ? options.csv ?? CSVSniffer.sniff(path: source.path) : CSVDialect()
                // Inference takes an empty field for null; so does the import, unless markers are given.
                if dialect.nullMarkers.isEmpty { dialect.nullMarkers = [""] }
                if source.format == .csv, dialect.encoding == .windows1252, options.csvFlags.encoding == nil,
                    !guesses.contains(where: { $0.hasPrefix(source.path + " ") })
                {
                    let at = (try? CSVSniffer.firstInvalidUTF8(inSampleOf: source.path)).flatMap { $0 }
                    guesses.append(
                        "\(source.path) is not valid UTF-8"
                            + (at.map { " (the first invalid byte at line \($0.line), column \($0.column))" } ?? "")
                            + ": read as windows-1252; give --encoding to read it otherwise")
                }
                switch source.format {
                case .csv:
                    text += "    csv: \(Self.csvOptions(dialect))\n"
                case .xml:
                    text += "    record: \(Self.quoted(options.record ?? ""))\n"
                    if !options.namespaces.isEmpty {
                        let bound = options.namespaces.sorted { $0.key < $1.key }.map {
                            "\(Self.quoted($0.key)): \(Self.quoted($0.value))"
                        }
                        text += "    namespaces: { \(bound.joined(separator: ", ")) }\n"
                    }
                case .sqldump, .sqlite: text += "    table: \(Self.quoted(plan.origin))\n"
                }
                let numbered = source.format == .csv && !dialect.hasHeader
                if let links {
                    text += Self.linksMapping(links, indent: "    ")
                    continue
                }
                text += try Self.mapping(
                    plans, index, spec: source.spec, numberedColumns: numbered, key: options.key, model: model,
                    indent: "    ")
            }
        }
        pipelineText = text
    }

    /// A mapping's lines: entity, key, fields, lookups, nested children.
    /// - Parameter numberedColumns: CSV without a header: columns are `1`, `2`, … (inference calls
    ///   them `field1`, `field2`, …).
    /// - Throws: `ReaderError` when a given or stored model has no attribute or relationship for a
    ///   column (importing it would drop the column's values).
    private static func mapping(
        _ plans: [ModelInference.EntityPlan], _ index: Int, spec: XMLRecordSpec?, numberedColumns: Bool,
        key: [String]?, model: ManagedObjectModel?, indent: String
    ) throws -> String {
        var plan = plans[index]
        let entity = model?.entity(named: plan.name)
        var text = "\(indent)entity: \(quoted(plan.name))\n"
        var keyNames = key ?? plan.key
        if let entity {
            try mapColumns(of: &plan, onto: entity)
            if key == nil {
                // The model's key, when the input maps all of it (upserts go through a uniqueness constraint).
                keyNames =
                    entity.constraintsWithInherited.map(\.names).first { constraint in
                        constraint.allSatisfy { name in
                            plan.fields.contains { $0.attribute == name }
                                || plan.lookups.contains { $0.relationship == name }
                        }
                    } ?? []
            }
        }
        let fields = plan.fields
        // A key names attributes the fields fill, or to-one relationships a lookup finds.
        keyNames = keyNames.filter { name in
            fields.contains { $0.attribute == name } || plan.lookups.contains { $0.relationship == name }
        }
        if !keyNames.isEmpty, plan.parent == nil {
            text += "\(indent)key: [\(keyNames.map(quoted).joined(separator: ", "))]\n"
        }
        let paths = Dictionary(spec?.fields.map { ($0.name, $0.path) } ?? [], uniquingKeysWith: { first, _ in first })
        func from(_ column: String) -> String {
            if spec != nil { return paths[column] ?? column }
            if numberedColumns, column.hasPrefix("field"), let number = Int(column.dropFirst(5)) {
                return String(number)
            }
            return column
        }
        if !fields.isEmpty { text += "\(indent)fields:\n" }  // none for a link table of foreign keys only
        for field in fields { text += "\(indent)  \(quoted(field.attribute)): \(quoted(from(field.column)))\n" }
        let lookups = plan.lookups
        if !lookups.isEmpty {
            text += "\(indent)relationships:\n"
            for lookup in lookups {
                text +=
                    "\(indent)  \(quoted(lookup.relationship)): { entity: \(quoted(lookup.destination)), key: { "
                    + "\(quoted(lookup.destinationAttribute)): \(quoted(from(lookup.column))) }, missing: reject "
                    + "}\n"
            }
        }
        let children = plans.indices.filter { plans[$0].parent?.entity == index }
        if !children.isEmpty, let spec {
            text += "\(indent)children:\n"
            for child in children {
                guard
                    let childSpec = spec.children.first(where: {
                        ModelInference.entityName($0.kind ?? $0.path) == plans[child].name
                    })
                else { continue }
                text += "\(indent)  - record: \(quoted(childSpec.path))\n"
                text += "\(indent)    parent: \(quoted(plans[child].parent!.relationship))\n"
                text += try mapping(
                    plans, child, spec: childSpec, numberedColumns: false, key: nil, model: model,
                    indent: indent + "    ")
            }
        }
        return text
    }

    /// Maps the input's columns onto a given model's entity: each onto the attribute or to-one
    /// relationship stored in a column of that name (as `sluice export` writes them: `lead_id` for
    /// `lead`), else onto the one inference names after it; a to-one is found by its destination's
    /// key attribute.
    /// - Throws: `ReaderError` when the entity has nothing for a column (importing would drop its values).
    private static func mapColumns(of plan: inout ModelInference.EntityPlan, onto entity: EntityDescription) throws {
        var fields: [(attribute: String, column: String)] = []
        var lookups: [(relationship: String, destination: String, destinationAttribute: String, column: String)] = []
        var missing: [String] = []
        let columns = plan.fields.map { ($0.column, $0.attribute) } + plan.lookups.map { ($0.column, $0.relationship) }
        // The column of the store's own reference an export writes for objects without a key of one
        // attribute: the store gives its own.
        var reference: String?
        if case .reference = ExportTable.Key(of: entity) { reference = entity.storageKeyColumnName.lowercased() }
        for (column, inferred) in columns where column.lowercased() != reference {
            switch Self.property(forColumn: column, inferred: inferred, of: entity) {
            case let attribute as AttributeDescription:
                fields.append((attribute.name, column))
            case let relationship as RelationshipDescription where !relationship.isToMany:
                guard case .attribute(let key) = ExportTable.Key(of: relationship.destinationEntity) else {
                    missing.append("\(column) (relationship \(relationship.name), whose destination has no key)")
                    continue
                }
                lookups.append((relationship.name, relationship.destinationEntityName, key.name, column))
            default:
                missing.append("\(column) (\(inferred))")
            }
        }
        guard missing.isEmpty else {
            throw ReaderError(
                .invalidOption,
                "the model's entity \(plan.name) has nothing for the column\(missing.count == 1 ? "" : "s") "
                    + "\(missing.joined(separator: ", ")) of \(plan.origin); importing would drop them")
        }
        plan.fields = fields
        plan.lookups = lookups
    }

    /// The property of `entity` a column fills: the one stored in that column (`lead_id` → `lead`),
    /// else the one named as inference named the column.
    private static func property(
        forColumn column: String, inferred: String, of entity: EntityDescription
    ) -> PropertyDescription? {
        entity.attributes.first { !$0.isTransient && $0.storageColumnName.lowercased() == column.lowercased() }
            ?? entity.relationships.first { !$0.isToMany && $0.storageColumnName.lowercased() == column.lowercased() }
            ?? entity.attribute(named: inferred) ?? entity.relationship(named: inferred)
    }

    /// The links of a many-to-many relationship of `model` whose join table is `table` (in any
    /// case) and whose two columns (named as `sluice export` names them) are among `columns`.
    static func links(
        ofTable table: String, columns: [String], in model: ManagedObjectModel
    )
        -> ModelInference.LinksPlan?
    {
        let names = Set(columns.map { $0.lowercased() })
        for entity in model.entities {
            for relationship in entity.relationships
            where relationship.entity === entity && relationship.isManyToMany
                && relationship.joinTableOwner === relationship
                && relationship.joinTableName.lowercased() == table.lowercased()
            {
                let link = ExportTable(link: relationship)
                guard case .attribute(let ownerKey) = ExportTable.Key(of: relationship.entity),
                    case .attribute(let destinationKey) = ExportTable.Key(of: relationship.destinationEntity),
                    link.columns.count == 2, link.columns.allSatisfy({ names.contains($0.name.lowercased()) })
                else { continue }
                func column(_ name: String) -> String { columns.first { $0.lowercased() == name.lowercased() }! }
                return ModelInference.LinksPlan(
                    owner: entity.name, ownerKey: (ownerKey.name, column(link.columns[0].name)),
                    relationship: relationship.name, destination: relationship.destinationEntityName,
                    destinationKey: (destinationKey.name, column(link.columns[1].name)))
            }
        }
        return nil
    }

    /// The mapping of a source of links: the owner found by its key, the destination added to its
    /// many-to-many relationship.
    private static func linksMapping(_ links: ModelInference.LinksPlan, indent: String) -> String {
        "\(indent)entity: \(quoted(links.owner))\n"
            + "\(indent)find: { \(quoted(links.ownerKey.attribute)): \(quoted(links.ownerKey.column)) }\n"
            + "\(indent)relationships:\n"
            + "\(indent)  \(quoted(links.relationship)): { entity: \(quoted(links.destination)), key: { "
            + "\(quoted(links.destinationKey.attribute)): \(quoted(links.destinationKey.column)) }, missing: reject }\n"
    }

    private static func csvOptions(_ dialect: CSVDialect) -> String {
        func byte(_ value: UInt8) -> String { quoted(String(UnicodeScalar(value))) }
        var parts = [
            "header: \(dialect.hasHeader)", "delimiter: \(byte(dialect.delimiter))",
            "quote: \(dialect.quote.map(byte) ?? "none")", "encoding: \(dialect.encoding.rawValue)",
            "null: [\(dialect.nullMarkers.map(quoted).joined(separator: ", "))]",
        ]
        if let escape = dialect.escape { parts.append("escape: \(byte(escape))") }
        if let comment = dialect.comment { parts.append("comment: \(byte(comment))") }
        return "{ " + parts.joined(separator: ", ") + " }"
    }

    /// A YAML scalar in double quotes (JSON's escapes, which YAML shares).
    static func quoted(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\\/", with: "/")
    }

    /// `--namespace p=URI` options as prefix → URI bindings.
    /// - Throws: `ReaderError.Kind.invalidOption` (exit 2) for one without `=`, an empty prefix or URI,
    ///   or a prefix bound twice.
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
