import Foundation
import ModelFiles
import ObjectGraph
import Readers

/// A source's mapping compiled against the fields its reader yields: each attribute's field index
/// and converter, each lookup's key fields, the `where` filter — built once, then applied to every
/// record without looking anything up by name.
public final class RecordMapper {
    public let source: String
    public let entity: EntityDescription
    /// What the run's counts and rejects call its records: the entity, or for records of links
    /// `<entity>.<relationship>` (`+` between several).
    public let reportName: String
    private let fields: [(attribute: Int, field: Int, converter: ValueConverter)]
    private let lookups: [[(field: Int, converter: ValueConverter)]]
    private let filter: CompiledPredicate?
    /// The attribute (index in the entity) of each of a mapped record's first values.
    public let attributes: [Int]
    /// Where each lookup's key parts start among a mapped record's values.
    private let keyStarts: [Int]
    /// How many values a mapped record holds.
    private let valueCount: Int

    /// - Parameters:
    ///   - fieldNames: the names the reader gives its fields (CSV header, table columns, XML spec
    ///     field names — the mapping's `column`/`path` values).
    /// - Throws: `PipelineFileError` when the mapping names a field the source does not have.
    public init(
        mapping: PipelineConfig.Mapping, model: ManagedObjectModel, fieldNames: [String], source: String,
        sourceNulls: [String] = [], file: String = "", line: Int = 0
    ) throws {
        guard let entity = model.entity(named: mapping.entity) else {
            throw PipelineFileError(issues: [
                ModelFileIssue(
                    file: file, line: line, column: 0, entity: "source \(source)",
                    message: "the model has no entity \(mapping.entity)")
            ])
        }
        self.source = source
        self.entity = entity
        reportName = mapping.reportName
        var index: [String: Int] = [:]
        for (position, name) in fieldNames.enumerated() where index[name] == nil { index[name] = position }
        var missing: [String] = []
        func field(_ name: String) -> Int {
            if let position = index[name] { return position }
            if name == Record.ordinalFieldName { return Self.rowField }
            missing.append(name)
            return -1
        }
        var fields: [(Int, Int, ValueConverter)] = []
        for mapped in mapping.fields {
            guard let attribute = entity.attribute(named: mapped.attribute) else { continue }
            fields.append(
                (
                    attribute.index, field(mapped.from),
                    try ValueConverter(field: mapped, attribute: attribute, sourceNulls: sourceNulls)
                ))
        }
        var lookups: [[(Int, ValueConverter)]] = []
        for lookup in mapping.lookups {
            guard let destination = model.entity(named: lookup.entity) else { continue }
            lookups.append(
                try lookup.key.compactMap { part in
                    guard let attribute = destination.attribute(named: part.attribute) else { return nil }
                    return (
                        field(part.from),
                        try ValueConverter(
                            field: PipelineConfig.Field(attribute: part.attribute, from: part.from),
                            attribute: attribute, sourceNulls: sourceNulls)
                    )
                })
        }
        guard missing.isEmpty else {
            let known = fieldNames.isEmpty ? "it has no named fields" : "it has: \(fieldNames.joined(separator: ", "))"
            throw PipelineFileError(
                issues: missing.map {
                    ModelFileIssue(
                        file: file, line: line, column: 0, entity: "source \(source)",
                        message: "the input has no field \($0.debugDescription) (\(known))")
                })
        }
        self.fields = fields
        self.lookups = lookups
        attributes = fields.map(\.0)
        var start = fields.count
        keyStarts = lookups.map { parts in
            defer { start += parts.count }
            return start
        }
        valueCount = start
        filter = try mapping.filter?.compiled(for: entity)
    }

    /// Where `Record.ordinalFieldName` points.
    static let rowField = -2

    /// The text and position of the field an attribute was mapped from (for failures found later,
    /// such as validation at save); `nil` when the attribute is not mapped from a field.
    public func field(of attributeName: String, in record: Record) -> (raw: String?, position: SourcePosition)? {
        guard let index = entity.attributeIndex(named: attributeName),
            let field = fields.first(where: { $0.attribute == index })?.field, field >= 0, field < record.count
        else { return nil }
        return (record.string(field), record.position(ofField: field))
    }

    /// Field `field` of `record` (or its place among its table's rows, `rowField`) as `converter`'s
    /// attribute's value.
    @inline(__always)
    private static func convert(
        _ record: Record, field: Int, _ converter: ValueConverter
    ) -> Result<AttributeValue, ConversionFailure> {
        field == rowField
            ? converter.convert(record.ordinal.map(String.init)) : converter.convert(record, field: field)
    }

    /// The record's values and lookup keys; `nil` when the `where` filter skips it.
    /// - Throws: `RecordReject` with every field that failed.
    /// Where a mapped record holds the values of the attributes `names`; `nil` unless the mapping
    /// fills every one of them.
    public func places(of names: [String]) -> [Int]? {
        let found = names.compactMap { name in
            entity.attribute(named: name).flatMap { attributes.firstIndex(of: $0.index) }
        }
        return found.count == names.count ? found : nil
    }

    /// The values of the attributes `names` in a record, each converted as the mapping converts it
    /// (the key of a record rejected for another field); `nil` when one is not mapped or does not
    /// convert.
    public func values(of names: [String], in record: Record) -> [AttributeValue]? {
        var values: [AttributeValue] = []
        for name in names {
            guard let (_, field, converter) = fields.first(where: { $0.converter.attribute.name == name }),
                case .success(let value) = Self.convert(record, field: field, converter)
            else { return nil }
            values.append(value)
        }
        return values
    }

    public func map(_ record: Record) throws(RecordReject) -> MappedRecord? {
        var mapped = MappedRecord()
        mapped.values.reserveCapacity(valueCount)
        var failures: [RejectFailure] = []
        func convert(_ field: Int, _ converter: ValueConverter) {
            switch Self.convert(record, field: field, converter) {
            case .success(let value): mapped.values.append(value)
            case .failure(let failure):
                let inRecord = field >= 0 && field < record.count
                let raw = inRecord ? record.string(field) : nil
                failures.append(
                    RejectFailure(
                        property: converter.attribute.name, raw: raw, rule: failure.rule.rawValue,
                        message: failure.message,
                        position: inRecord ? record.position(ofField: field) : record.position))
            }
        }
        for (_, field, converter) in fields { convert(field, converter) }
        for parts in lookups {
            for (field, converter) in parts { convert(field, converter) }
        }
        guard failures.isEmpty else {
            // Every failure of the record: the model's rules the fields that did convert break too.
            for (_, field, converter) in fields {
                guard case .success(let value) = Self.convert(record, field: field, converter) else { continue }
                converter.attribute.checkRules(of: value) { rule, message in
                    let inRecord = field >= 0 && field < record.count
                    failures.append(
                        RejectFailure(
                            property: converter.attribute.name, raw: inRecord ? record.string(field) : nil,
                            rule: "\(rule)", message: message,
                            position: inRecord ? record.position(ofField: field) : record.position))
                }
            }
            throw RecordReject(source: source, entity: reportName, position: record.position, failures: failures)
        }
        if let filter, !filter.evaluate(MappedSubject(entity: entity, attributes: attributes, values: mapped.values)) {
            return nil
        }
        return mapped
    }

    /// For a record `map` rejected: each lookup's key where every part converts (`nil` where one
    /// does not, or all are blank), and where its first field is — so the rejection can list the
    /// lookups that find nothing too.
    public func lookupKeys(ofRejected record: Record) -> [(key: [AttributeValue]?, position: SourcePosition)] {
        lookups.map { parts in
            var key: [AttributeValue]? = []
            for (field, converter) in parts {
                guard case .success(let value) = Self.convert(record, field: field, converter) else {
                    key = nil
                    break
                }
                key?.append(value)
            }
            let field = parts.first?.field ?? -1
            return (
                key?.allSatisfy(Self.isBlank) == false ? key : nil,
                field >= 0 && field < record.count ? record.position(ofField: field) : record.position
            )
        }
    }

    /// The key of lookup `lookup` (its index in the mapping); `nil` when its parts are all blank (the
    /// relationship stays empty).
    public func key(_ lookup: Int, of mapped: MappedRecord) -> [AttributeValue]? {
        let parts = mapped.values[keyStarts[lookup]..<keyStarts[lookup] + lookups[lookup].count]
        return parts.allSatisfy(Self.isBlank) ? nil : Array(parts)
    }

    /// Whether a part of a lookup's key says "none": null, or an empty text (an empty CSV field
    /// reads as one; a key of integers reads it as null). A key of blank parts links nothing.
    static func isBlank(_ value: AttributeValue) -> Bool {
        if case .string(let text) = value { return text.isEmpty }
        return value.isNull
    }

    /// Whether lookup `lookup`'s key is one attribute (`singleKey(_:of:)` then reads it without an array).
    public func hasSingleKey(_ lookup: Int) -> Bool { lookups[lookup].count == 1 }

    /// The one part of a one-attribute key; `nil` when it is blank.
    public func singleKey(_ lookup: Int, of mapped: MappedRecord) -> AttributeValue? {
        let value = mapped.values[keyStarts[lookup]]
        return Self.isBlank(value) ? nil : value
    }

    /// The mapped attributes with their values.
    public func attributeValues(of mapped: MappedRecord) -> [(attribute: Int, value: AttributeValue)] {
        Array(zip(attributes, mapped.values))
    }

    /// Every lookup's key, in the mapping's order.
    public func lookupKeys(of mapped: MappedRecord) -> [[AttributeValue]?] {
        lookups.indices.map { key($0, of: mapped) }
    }

    /// The record's mapped attribute values seen by the `where` filter (relationships are not set yet).
    private struct MappedSubject: PredicateSubject {
        let entity: EntityDescription
        let attributes: [Int]
        let values: [AttributeValue]
        var predicateObjectID: ManagedObjectID {
            ManagedObjectID(entityName: entity.name, storeIdentifier: nil, reference: .temporary(0))
        }
        func predicateValue(forKey key: String) -> PredicateValue {
            guard let index = entity.attributeIndex(named: key) else { return .value(.null) }
            return .value(attributes.firstIndex(of: index).map { values[$0] } ?? entity.attributes[index].defaultValue)
        }
    }
}

extension PipelineConfig.Mapping {
    /// The name a run's counts keep this mapping's records under: its entity (`Order`), or for
    /// links the entity and relationships (`Book.authors`).
    var reportName: String {
        links == nil ? entity : "\(entity).\(relationships.map(\.relationship).joined(separator: "+"))"
    }

    /// `reportName` of this mapping and of its children's, at any depth.
    var reportNames: [String] { [reportName] + children.flatMap(\.mapping.reportNames) }
}
