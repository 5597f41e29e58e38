import Foundation
import ObjectGraph
import Readers

/// One failure of a rejected record: which attribute (or relationship key), the raw text, the rule,
/// a sentence, and where the field is.
public struct RejectFailure: Sendable, Equatable {
    public var property: String
    public var raw: String?
    public var rule: String
    public var message: String
    public var position: SourcePosition
}

/// A record that cannot become an object: every failure of it, not the first.
public struct RecordReject: Error, Sendable {
    public var source: String
    public var entity: String
    public var position: SourcePosition
    public var failures: [RejectFailure]
}

/// What one record becomes before it meets a context: attribute values by attribute index, and the
/// key of each lookup (by the lookup's index in the mapping), in the destination's attribute types.
public struct MappedRecord: Sendable {
    public var values: [(attribute: Int, value: AttributeValue)] = []
    /// `nil` for a lookup whose key fields are all null (the relationship stays empty).
    public var lookupKeys: [[AttributeValue]?] = []
}

/// A source's mapping compiled against the fields its reader yields: each attribute's field index
/// and converter, each lookup's key fields, the `where` filter — built once, then applied to every
/// record without looking anything up by name.
public final class RecordMapper {
    public let source: String
    public let entity: EntityDescription
    private let fields: [(attribute: Int, field: Int, converter: ValueConverter)]
    private let lookups: [[(field: Int, converter: ValueConverter)]]
    private let filter: CompiledPredicate?

    /// - Parameters:
    ///   - fieldNames: the names the reader gives its fields (CSV header, table columns, XML spec
    ///     field names — the mapping's `column`/`path` values).
    /// - Throws: `PipelineFileError` when the mapping names a field the source does not have.
    public init(mapping: PipelineConfig.Mapping, model: ManagedObjectModel, fieldNames: [String], source: String,
                sourceNulls: [String] = [], file: String = "", line: Int = 0) throws {
        guard let entity = model.entity(named: mapping.entity) else {
            throw PipelineFileError(issues: [ModelFileIssue(file: file, line: line, column: 0, entity: "source \(source)", message: "the model has no entity \(mapping.entity)")])
        }
        self.source = source
        self.entity = entity
        var index: [String: Int] = [:]
        for (position, name) in fieldNames.enumerated() where index[name] == nil { index[name] = position }
        var missing: [String] = []
        func field(_ name: String) -> Int {
            if let position = index[name] { return position }
            missing.append(name)
            return -1
        }
        var fields: [(Int, Int, ValueConverter)] = []
        for mapped in mapping.fields {
            guard let attribute = entity.attribute(named: mapped.attribute) else { continue }
            fields.append((attribute.index, field(mapped.from), try ValueConverter(field: mapped, attribute: attribute, sourceNulls: sourceNulls)))
        }
        var lookups: [[(Int, ValueConverter)]] = []
        for lookup in mapping.relationships {
            guard let destination = model.entity(named: lookup.entity) else { continue }
            lookups.append(try lookup.key.compactMap { part in
                guard let attribute = destination.attribute(named: part.attribute) else { return nil }
                return (field(part.from), try ValueConverter(field: PipelineConfig.Field(attribute: part.attribute, from: part.from),
                                                             attribute: attribute, sourceNulls: sourceNulls))
            })
        }
        guard missing.isEmpty else {
            let known = fieldNames.isEmpty ? "it has no named fields" : "it has: \(fieldNames.joined(separator: ", "))"
            throw PipelineFileError(issues: missing.map {
                ModelFileIssue(file: file, line: line, column: 0, entity: "source \(source)", message: "the input has no field \($0.debugDescription) (\(known))")
            })
        }
        self.fields = fields
        self.lookups = lookups
        filter = try mapping.filter?.compiled(for: entity)
    }

    /// The text and position of the field an attribute was mapped from (for failures found later,
    /// such as validation at save); `nil` when the attribute is not mapped from a field.
    public func field(of attributeName: String, in record: Record) -> (raw: String?, position: SourcePosition)? {
        guard let index = entity.attributeIndex(named: attributeName),
              let field = fields.first(where: { $0.attribute == index })?.field, field < record.count else { return nil }
        return (record.string(field), record.position(ofField: field))
    }

    /// The record's values and lookup keys; `nil` when the `where` filter skips it.
    /// - Throws: `RecordReject` with every field that failed.
    public func map(_ record: Record) throws(RecordReject) -> MappedRecord? {
        var mapped = MappedRecord()
        mapped.values.reserveCapacity(fields.count)
        var failures: [RejectFailure] = []
        for (attribute, field, converter) in fields {
            let raw = field < record.count ? record.string(field) : nil
            switch converter.convert(raw) {
            case .success(let value): mapped.values.append((attribute, value))
            case .failure(let failure):
                failures.append(RejectFailure(property: converter.attribute.name, raw: raw, rule: failure.rule.rawValue,
                                              message: failure.message, position: field < record.count ? record.position(ofField: field) : record.position))
            }
        }
        for parts in lookups {
            var key: [AttributeValue] = []
            for (field, converter) in parts {
                let raw = field < record.count ? record.string(field) : nil
                switch converter.convert(raw) {
                case .success(let value): key.append(value)
                case .failure(let failure):
                    failures.append(RejectFailure(property: converter.attribute.name, raw: raw, rule: failure.rule.rawValue,
                                                  message: failure.message, position: field < record.count ? record.position(ofField: field) : record.position))
                }
            }
            mapped.lookupKeys.append(key.allSatisfy(\.isNull) ? nil : key)
        }
        guard failures.isEmpty else {
            throw RecordReject(source: source, entity: entity.name, position: record.position, failures: failures)
        }
        if let filter, !filter.evaluate(MappedSubject(entity: entity, values: mapped.values)) { return nil }
        return mapped
    }

    /// The record's mapped attribute values seen by the `where` filter (relationships are not set yet).
    private struct MappedSubject: PredicateSubject {
        let entity: EntityDescription
        let values: [(attribute: Int, value: AttributeValue)]
        var predicateObjectID: ManagedObjectID { ManagedObjectID(entityName: entity.name, storeIdentifier: nil, reference: .temporary(0)) }
        func predicateValue(forKey key: String) -> PredicateValue {
            guard let index = entity.attributeIndex(named: key) else { return .value(.null) }
            return .value(values.first { $0.attribute == index }?.value ?? entity.attributes[index].defaultValue)
        }
    }
}

extension PipelineConfig.Mapping {
    /// The XML record spec that yields what this mapping reads: its fields (named by their paths),
    /// the key paths of its lookups, and its children's records.
    public func xmlSpec(path: String) -> XMLRecordSpec {
        var paths: [String] = []
        for field in fields where !paths.contains(field.from) { paths.append(field.from) }
        for lookup in relationships { for part in lookup.key where !paths.contains(part.from) { paths.append(part.from) } }
        return XMLRecordSpec(path: path, kind: path, fields: paths.map { ($0, $0) },
                             children: children.map { $0.mapping.xmlSpec(path: $0.record) })
    }
}

extension PipelineConfig {
    /// Every lookup of every source, nested children's included.
    var lookups: [Lookup] {
        func all(_ mapping: Mapping) -> [Lookup] { mapping.relationships + mapping.children.flatMap { all($0.mapping) } }
        return sources.flatMap { all($0.mapping) }
    }
}
