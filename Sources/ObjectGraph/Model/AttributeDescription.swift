import Foundation

/// A typed attribute with its validation rules.
public final class AttributeDescription: PropertyDescription, @unchecked Sendable {
    public let type: AttributeType
    /// Transient attributes live in memory only: never written to a store.
    public let isTransient: Bool
    /// The value a newly inserted object starts with (`.null` when none).
    public let defaultValue: AttributeValue
    public let minValue: AttributeValue?
    public let maxValue: AttributeValue?
    /// Length rules: characters for strings, bytes for binary data.
    public let minLength: Int?
    public let maxLength: Int?
    /// A regular expression the whole string must match.
    public let regularExpression: String?
    /// For decimals: the digits after the point values have (`scale: 2` for money). A value with
    /// more is refused, never rounded; exports and `inspect` print values with exactly this many.
    public let scale: Int?
    /// For derived attributes: the expression their value is computed from at every save (see
    /// `Derivation`); `nil` for attributes whose values are set.
    public let derivationExpression: String?
    /// Whether the value is computed (`derivationExpression`) rather than set.
    public let isDerived: Bool
    /// The parsed `derivationExpression`, checked against the entity when the model is built.
    @exclusivity(unchecked) public internal(set) var derivation: Derivation?
    let compiledRegex: NSRegularExpression?
    let regexError: String?
    /// Whether any rule beyond optionality and type applies (range, length, pattern): most attributes
    /// have none, and validation stops after the type check for them.
    let hasValueRules: Bool

    public init(
        name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
        defaultValue: AttributeValue = .null, minValue: AttributeValue? = nil, maxValue: AttributeValue? = nil,
        minLength: Int? = nil, maxLength: Int? = nil, regularExpression: String? = nil, scale: Int? = nil,
        columnName: String? = nil, derivation: String? = nil
    ) {
        self.derivationExpression = derivation
        self.isDerived = derivation != nil
        self.type = type
        self.isTransient = isTransient
        self.defaultValue = defaultValue
        self.minValue = minValue
        self.maxValue = maxValue
        self.minLength = minLength
        self.maxLength = maxLength
        self.regularExpression = regularExpression
        self.scale = scale
        hasValueRules =
            minValue != nil || maxValue != nil || minLength != nil || maxLength != nil || regularExpression != nil
            || scale != nil
        if let pattern = regularExpression {
            do {
                compiledRegex = try NSRegularExpression(pattern: "^(?:\(pattern))$", options: [])
                regexError = nil
            } catch {
                compiledRegex = nil
                regexError = "invalid regular expression \(pattern.debugDescription)"
            }
        } else {
            compiledRegex = nil
            regexError = nil
        }
        super.init(name: name, isOptional: isOptional, columnName: columnName)
    }

    /// Canonical text that feeds the model version hash: only what decides how values are stored.
    var hashText: String { "\(name):\(type.rawValue):\(isOptional ? "?" : "!")\(columnHashText)" }
}
