import Foundation

/// The rule a value broke.
public enum ValidationRule: Sendable, Hashable, CustomStringConvertible {
    case required, type, range, minValue, maxValue, minLength, maxLength, pattern
    case minCount, maxCount, deny, danglingReference
    /// A rule of the application's own (custom validators and whole-object checks).
    case custom(String)

    public var description: String {
        switch self {
        case .required: return "required"
        case .type: return "type"
        case .range: return "range"
        case .minValue: return "minValue"
        case .maxValue: return "maxValue"
        case .minLength: return "minLength"
        case .maxLength: return "maxLength"
        case .pattern: return "pattern"
        case .minCount: return "minCount"
        case .maxCount: return "maxCount"
        case .deny: return "deny"
        case .danglingReference: return "danglingReference"
        case .custom(let name): return name
        }
    }
}

/// A validator of one property of a `ManagedObject` subclass (see `ManagedObject.propertyValidators`),
/// made from a method of the subclass: `PropertyValidator(Employee.validateEmail)`.
public struct PropertyValidator {
    let check: (ManagedObject, Any?) throws -> Void

    public init<Object: ManagedObject>(_ method: @escaping (Object) -> (Any?) throws -> Void) {
        check = { object, value in
            guard let object = object as? Object else { return }
            try method(object)(value)
        }
    }
}
