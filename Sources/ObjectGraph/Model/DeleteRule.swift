/// What happens to a relationship's destinations when its source object is deleted.
public enum DeleteRule: String, Sendable, CaseIterable {
    /// The delete fails at save (a validation error) while any destination exists.
    case deny
    /// Each destination's inverse is cleared.
    case nullify
    /// The destinations are deleted too, each applying its own rules.
    case cascade
    /// Nothing is done: destinations may point at a deleted object.
    case noAction
}
