import Foundation
import ModelFiles
import ObjectGraph
import Readers
import Yams

extension PipelineReader {
    // MARK: Fields and their transforms

    mutating func readField(
        _ attribute: String, _ type: AttributeType, _ spec: Node, source: String
    ) -> PipelineConfig.Field? {
        if spec.scalar != nil {
            return text(spec, "field \(attribute)", source: source).map {
                PipelineConfig.Field(attribute: attribute, from: $0)
            }
        }
        let allowed: Set<String> = [
            "column", "path", "transform", "date", "binary", "default", "null", "true", "false",
        ]
        let entries = pairs(spec, allowed: allowed, what: "field \(attribute)", entity: source, property: attribute)
        let sources = entries.filter { $0.key == "column" || $0.key == "path" }
        guard sources.count == 1, let from = text(sources[0].value, sources[0].key, source: source) else {
            if sources.count != 1 {
                fail(
                    spec, "field \(attribute) needs exactly one of `column` or `path`", entity: source,
                    property: attribute)
            }
            return nil
        }
        var field = PipelineConfig.Field(attribute: attribute, from: from)
        for (key, _, value) in entries {
            switch key {
            case "transform":
                let items = value.sequence ?? [value]
                for item in items {
                    if let transform = readTransform(item, source: source, attribute: attribute) {
                        field.transforms.append(transform)
                    }
                }
            case "date": readDateFormat(value, into: &field, type: type, source: source)
            case "binary": readBinaryEncoding(value, into: &field, type: type, source: source)
            case "default": readDefault(value, into: &field, type: type, source: source)
            case "null": field.nulls = texts(value, "null", source: source) ?? []
            case "true", "false":
                guard type == .boolean else {
                    fail(
                        value, "`\(key)` applies to boolean attributes; \(attribute) is \(type)", entity: source,
                        property: attribute)
                    continue
                }
                let words = texts(value, key, source: source) ?? []
                if key == "true" { field.trueWords = words } else { field.falseWords = words }
            default: break
            }
        }
        if !Set(field.trueWords.map { $0.lowercased() }).isDisjoint(with: field.falseWords.map { $0.lowercased() }) {
            fail(spec, "a word cannot mean both true and false", entity: source, property: attribute)
        }
        return field
    }

    /// A date field's format: `iso8601`, `unix`, a pattern (`dd.MM.yyyy`), or a list of them (the
    /// first that reads a value wins), for date attributes only.
    private mutating func readDateFormat(
        _ value: Node, into field: inout PipelineConfig.Field, type: AttributeType, source: String
    ) {
        let attribute = field.attribute
        guard type.isDate else {
            fail(
                value, "`date` applies to date attributes; \(attribute) is \(type)", entity: source, property: attribute
            )
            return
        }
        if case .sequence(let list) = value {
            // Several formats: the first that reads a value wins.
            let formats = list.compactMap { dateFormat($0, attribute: attribute, source: source) }
            if list.isEmpty { fail(value, "`date` lists no format", entity: source, property: attribute) }
            if formats.count == list.count, !formats.isEmpty {
                field.date = formats.count == 1 ? formats[0] : .any(formats)
            }
            return
        }
        field.date = dateFormat(value, attribute: attribute, source: source)
    }

    /// One date format: `iso8601`, `unix`, or a pattern whose mistakes are issues.
    private mutating func dateFormat(_ value: Node, attribute: String, source: String) -> PipelineConfig.DateFormat? {
        switch text(value, "date", source: source) {
        case "iso8601"?: return .iso8601
        case "unix"?, "unix-seconds"?: return .unixSeconds
        case let pattern?:
            if let mistake = Self.datePatternMistake(pattern) {
                fail(value, mistake, entity: source, property: attribute)
                return nil
            }
            return .pattern(pattern)
        case nil: return nil
        }
    }

    /// A binary field's text encoding (`hex`, `base64`), for binary attributes only.
    private mutating func readBinaryEncoding(
        _ value: Node, into field: inout PipelineConfig.Field, type: AttributeType, source: String
    ) {
        let attribute = field.attribute
        guard type == .binary else {
            fail(
                value, "`binary` applies to binary attributes; \(attribute) is \(type)", entity: source,
                property: attribute)
            return
        }
        guard let name = text(value, "binary", source: source) else { return }
        if let encoding = PipelineConfig.BinaryEncoding(rawValue: name) {
            field.binary = encoding
        } else {
            fail(value, "binary must be hex or base64", entity: source, property: attribute)
        }
    }

    /// The value a field takes when its record has none, valid for the attribute's type.
    private mutating func readDefault(
        _ value: Node, into field: inout PipelineConfig.Field, type: AttributeType, source: String
    ) {
        guard let raw = text(value, "default", source: source, allowEmpty: true) else { return }
        if let parsed = AttributeValueParser.parse(raw, as: type) {
            field.defaultValue = parsed
        } else {
            fail(
                value,
                "default \(raw.debugDescription) is not a valid \(type)\(AttributeValueParser.formatHint(for: type))",
                entity: source, property: field.attribute)
        }
    }

    mutating func readTransform(_ node: Node, source: String, attribute: String) -> PipelineConfig.Transform? {
        if node.scalar != nil {
            switch text(node, "transform", source: source) {
            case "trim"?: return .trim
            case "lowercase"?: return .lowercase
            case "uppercase"?: return .uppercase
            case let other?:
                fail(
                    node,
                    "unknown transform \(other.debugDescription) (trim, lowercase, uppercase, { replace: [from, to] "
                        + "}, { capture: regex })",
                    entity: source, property: attribute)
                return nil
            case nil: return nil
            }
        }
        let entries = pairs(
            node, allowed: ["replace", "capture"], what: "a transform", entity: source, property: attribute)
        guard entries.count == 1 else {
            fail(
                node, "a transform is one of trim, lowercase, uppercase, { replace: [from, to] }, { capture: regex }",
                entity: source, property: attribute)
            return nil
        }
        let (key, _, value) = entries[0]
        if key == "replace" {
            guard let parts = value.sequence, parts.count == 2,
                let from = text(parts[0], "replace", source: source),
                let to = text(parts[1], "replace", source: source, allowEmpty: true)
            else {
                fail(value, "replace takes [from, to]", entity: source, property: attribute)
                return nil
            }
            return .replace(from, with: to)
        }
        guard let pattern = text(value, "capture", source: source) else { return nil }
        do { _ = try NSRegularExpression(pattern: pattern) } catch {
            fail(
                value, "capture: \(pattern.debugDescription) is not a valid regular expression", entity: source,
                property: attribute)
            return nil
        }
        return .capture(pattern)
    }

    /// Why `pattern` is not a date format (`iso8601`, `unix`, or a Unicode date pattern such as
    /// `dd.MM.yyyy HH:mm`), or `nil` when it is one: a letter outside quotes that no date field
    /// uses (`iso8610`: `i`, `o`), or no field for the day, the year or the time at all.
    static func datePatternMistake(_ pattern: String) -> String? {
        let fields = Set("GyYuUrQqMLlwWdDFgEecabBhHKkjJCmsSAzZOvVXx")
        var quoted = false, used: Set<Character> = [], unknown: [Character] = []
        for character in pattern {
            if character == "'" {
                quoted.toggle()
            } else if !quoted && character.isASCII && character.isLetter {
                if fields.contains(character) { used.insert(character) } else { unknown.append(character) }
            }
        }
        let help = "a date format is iso8601, unix, or a pattern such as yyyy-MM-dd or dd.MM.yyyy HH:mm"
        if !unknown.isEmpty {
            let letters = unknown.map { "`\($0)`" }.joined(separator: ", ")
            return "unknown date format \(pattern.debugDescription): \(letters) \(unknown.count == 1 ? "is" : "are") "
                + "not a date field (\(help))"
        }
        if used.isDisjoint(with: Set("yYuUdDMLHhKkms")) {
            return "unknown date format \(pattern.debugDescription): it has no year, month, day or time field (\(help))"
        }
        // Letters that parse, but not what the pattern surely means.
        let mistaken = "date format \(pattern.debugDescription): "
        if used.contains("m") && used.isDisjoint(with: Set("HhKk")) {
            return mistaken + "`m` is the minute and the pattern has no hour; the month is `MM` (\(help))"
        }
        if used.contains("Y") && !used.contains("w") {
            return mistaken + "`Y` is the week-based year (2024-12-30 is in its 2025); the calendar year is `yyyy`"
        }
        if used.contains("D") && !used.isDisjoint(with: Set("ML")) {
            return mistaken + "`D` is the day of the year; the day of the month is `dd`"
        }
        return nil
    }
}
