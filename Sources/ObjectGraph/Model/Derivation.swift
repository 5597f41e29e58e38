import Foundation

/// How a derived attribute's value is computed (Core Data's `NSDerivedAttributeDescription`): from
/// other values of its object, when a context of the stores saves it (after uniqueness conflicts
/// are settled, before the write; its validation rules are not checked). The expression is one of
///
/// - a key path through to-one relationships to an attribute: `name`, `department.name`;
/// - an aggregate over a to-many relationship: `lines.@count`, `lines.@sum.amount` (`@avg`,
///   `@min`, `@max` too), also after to-one steps (`order.lines.@count`);
/// - `now()`: the time of the save, to the millisecond (only for an object with a change of its
///   own: an unchanged row keeps its time);
/// - `canonical:(path)`, `lowercase:(path)`, `uppercase:(path)` of a string key path (canonical:
///   case and diacritics folded, as `[cd]` comparisons see the text).
///
/// The value is stored like any attribute's (SQL and other programs read it); a value set in code
/// is replaced at the next save. The model checks each expression against the entity.
public struct Derivation: Sendable, CustomStringConvertible {
    public enum Function: String, Sendable { case canonical, lowercase, uppercase }

    enum Kind: Sendable {
        case keyPath([String])
        case now
        case text(Function, [String])
    }

    /// The expression as written.
    public let expression: String
    let kind: Kind

    /// Parses an expression (its key paths are checked when the model is built).
    /// - Throws: a message saying what is wrong with it.
    public init(_ expression: String) throws(DerivationSyntaxError) {
        self.expression = expression
        let text = expression.trimmingCharacters(in: .whitespaces)
        if text == "now()" {
            kind = .now
            return
        }
        for function in [Function.canonical, .lowercase, .uppercase] {
            let head = function.rawValue + ":("
            guard text.hasPrefix(head) else { continue }
            guard text.hasSuffix(")") else { throw DerivationSyntaxError("\(head)… has no closing parenthesis") }
            let path = String(text.dropFirst(head.count).dropLast()).trimmingCharacters(in: .whitespaces)
            kind = .text(function, try Self.keyPath(path))
            return
        }
        kind = .keyPath(try Self.keyPath(text))
    }

    private static func keyPath(_ text: String) throws(DerivationSyntaxError) -> [String] {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for part in parts {
            let name = part.hasPrefix("@") ? String(part.dropFirst()) : part
            guard !name.isEmpty, ManagedObjectModel.isValidName(name) else {
                throw DerivationSyntaxError(
                    "\(text.debugDescription) is not a key path, now(), canonical:(…), lowercase:(…) or uppercase:(…)")
            }
        }
        return parts
    }

    /// Whether the expression is `now()`.
    var isNow: Bool { if case .now = kind { return true } else { return false } }

    /// The key path the value comes from (`nil` for `now()`).
    var path: [String]? {
        switch kind {
        case .keyPath(let path), .text(_, let path): return path
        case .now: return nil
        }
    }

    public var description: String { expression }

    /// The value for `object`, as an attribute of `type` holds it (`.null` when a step is missing).
    func value(for object: ManagedObject, as type: AttributeType) -> AttributeValue {
        switch kind {
        case .now:
            // To the millisecond, which every store keeps exactly.
            return .date(
                Date(timeIntervalSinceReferenceDate: (Date.timeIntervalSinceReferenceDate * 1000).rounded() / 1000))
        case .text(let function, let path):
            guard case .string(let text) = Self.evaluate(path, from: object) else { return .null }
            switch function {
            case .canonical: return .string(PredicateStrings.fold(text, [.caseInsensitive, .diacriticInsensitive]))
            case .lowercase: return .string(text.lowercased())
            case .uppercase: return .string(text.uppercased())
            }
        case .keyPath(let path):
            return Self.converted(Self.evaluate(path, from: object), to: type)
        }
    }

    /// Follows a checked key path from `object`. A to-many step takes the members that are not
    /// deleted and whose to-one back still names their owner (a line a re-import moved to another
    /// order leaves the old order's sum although the stored row still lists it there).
    private static func evaluate(_ path: [String], from object: ManagedObject) -> AttributeValue {
        var objects = [object]
        var index = 0
        while index < path.count {
            let key = path[index]
            if key == "@count" { return .integer(Int64(objects.count)) }
            if key.hasPrefix("@") {
                let values = objects.map { $0[path[index + 1]] }.filter { !$0.isNull }
                return KeyPathEvaluator.aggregate(key, values)
            }
            guard let relationship = objects.first?.entity.relationship(named: key) else {
                return objects.first.map { $0[key] } ?? .null
            }
            objects = objects.flatMap { owner -> [ManagedObject] in
                guard relationship.isToMany else { return owner.relatedObject(forKey: key).map { [$0] } ?? [] }
                return owner.relatedObjects(forKey: key).filter { member in
                    guard !member.isDeleted else { return false }
                    guard let inverse = relationship.inverse, !inverse.isToMany else { return true }
                    let named = member.relatedObject(forKey: inverse.name)
                    return named === owner || !owner.objectID.isTemporaryID && named?.objectID == owner.objectID
                }
            }
            index += 1
        }
        return .null
    }

    /// Numbers as the attribute's numeric type; other values as they are.
    private static func converted(_ value: AttributeValue, to type: AttributeType) -> AttributeValue {
        guard let number = value.numeric, value.isStorable(as: type) == false else { return value }
        switch type {
        case .integer16, .integer32, .integer64:
            switch number {
            case .integer(let v): return .integer(v)
            case .double(let v): return v.isFinite && v.rounded() == v && abs(v) < 9.2e18 ? .integer(Int64(v)) : value
            case .decimal(let v):
                guard v == v.rounded(toPlaces: 0), let integer = Int64(NSDecimalNumber(decimal: v).stringValue) else {
                    return value
                }
                return .integer(integer)
            }
        case .double: return .double(number.asDouble)
        case .float: return .float(Float(number.asDouble))
        case .decimal: return number.asDecimal.map(AttributeValue.decimal) ?? value
        default: return value
        }
    }
}

/// A derivation expression that does not parse.
public struct DerivationSyntaxError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension Decimal {
    fileprivate func rounded(toPlaces places: Int) -> Decimal {
        var value = self, result = Decimal()
        NSDecimalRound(&result, &value, places, .plain)
        return result
    }
}
