import Foundation

extension ManagedObject {
    /// Fails for each Deny relationship that still has destinations that are not deleted too.
    public func validateDenyRules() throws {
        var failures: [ValidationFailure] = []
        for relationship in entity.relationships where relationship.deleteRule == .deny {
            let remaining = destinations(of: relationship).filter { !$0.isDeleted }
            if !remaining.isEmpty {
                failures.append(
                    validationFailure(
                        key: relationship.name, rule: .deny,
                        message:
                            "cannot delete \(entity.name) \(objectID) while \(relationship.name) still has "
                            + "\(remaining.count) object\(remaining.count == 1 ? "" : "s") (delete rule Deny)"
                    ))
            }
        }
        if !failures.isEmpty { throw ValidationError(failures: failures) }
    }

    /// Runs the model's rules and custom property validators on every property, collecting every failure.
    public func validateProperties() throws {
        willAccess()
        var failures: [ValidationFailure] = []
        let values = attributeValues
        // Plain `ManagedObject`s have no custom validation: `validateAttribute` accepts everything.
        let customValidation = type(of: self) != ManagedObject.self
        let validators = customValidation ? context?.validators(for: type(of: self)) ?? [:] : [:]
        // A derived value is computed by the save after validation: its rules are not checked here.
        for attribute in entity.attributes where !attribute.isDerived {
            let value = values[attribute.index]
            let before = failures.count
            checkAttribute(attribute, value, &failures)
            if customValidation, failures.count == before {
                do {
                    try validateAttribute(value, forKey: attribute.name)
                    try validators[attribute.name]?.check(self, value.anyValue)
                } catch {
                    failures += try ValidationError.extract(error)
                }
            }
        }
        for relationship in entity.relationships {
            let before = failures.count
            checkRelationship(relationship, &failures)
            if !validators.isEmpty, let validator = validators[relationship.name], failures.count == before {
                do { try validator.check(self, value(forKey: relationship.name)) } catch {
                    failures += try ValidationError.extract(error)
                }
            }
        }
        if !failures.isEmpty { throw ValidationError(failures: failures) }
    }

    /// Checks one value for one property without setting it (Core Data's `validateValue(_:forKey:)`):
    /// the model's rules for the property (an attribute's required, type, range, length and
    /// pattern; a relationship's required, counts and destination entity), then the custom checks
    /// (`validateAttribute(_:forKey:)`, the property's validator in `propertyValidators`). Values as
    /// `setValue(_:forKey:)` takes them.
    /// - Throws: `ValidationError` holding every failure.
    public func validateValue(_ value: Any?, forKey key: String) throws {
        var failures: [ValidationFailure] = []
        let validator = type(of: self).propertyValidators[key]
        if let attribute = entity.attribute(named: key) {
            guard let converted = AttributeValue(value) else {
                throw ValidationError(failures: [
                    validationFailure(key: key, rule: .type, message: "\(key) cannot hold a \(type(of: value!))")
                ])
            }
            checkAttribute(attribute, converted, &failures)
            if failures.isEmpty {
                do {
                    try validateAttribute(converted, forKey: key)
                    try validator?.check(self, converted.anyValue)
                } catch { failures += try ValidationError.extract(error) }
            }
        } else {
            let relationship = entity.relationships[relationshipIndex(key)]
            checkCandidate(value, for: relationship, &failures)
            if failures.isEmpty {
                do { try validator?.check(self, value) } catch { failures += try ValidationError.extract(error) }
            }
        }
        if !failures.isEmpty { throw ValidationError(failures: failures) }
    }

    /// The model's rules for a value a relationship might take.
    private func checkCandidate(
        _ value: Any?, for relationship: RelationshipDescription, _ failures: inout [ValidationFailure]
    ) {
        func fail(_ rule: ValidationRule, _ message: String) {
            failures.append(validationFailure(key: relationship.name, rule: rule, message: message))
        }
        guard let objects = (value as? ManagedObject).map({ [$0] }) ?? Self.members(of: value) else {
            return fail(.type, "\(relationship.name) takes managed objects, not \(type(of: value!))")
        }
        for object in objects where !object.entity.isKind(of: relationship.destinationEntity) {
            fail(
                .type,
                "\(relationship.name) takes \(relationship.destinationEntityName) objects, not \(object.entity.name)")
        }
        if !relationship.isToMany {
            if objects.count > 1 { fail(.type, "\(relationship.name) is to-one") }
            if objects.isEmpty, !relationship.isOptional { fail(.required, "\(relationship.name) is required") }
            return
        }
        if let minimum = relationship.effectiveMinCount, objects.count < minimum {
            fail(.minCount, "\(relationship.name) must have at least \(minimum), it would have \(objects.count)")
        }
        if let maximum = relationship.maxCount, objects.count > maximum {
            fail(.maxCount, "\(relationship.name) must have at most \(maximum), it would have \(objects.count)")
        }
    }

    /// Checks the to-many relationships edited while the object is a fault: dangling destinations and
    /// count limits (which loads the relationship).
    func validateToManyEdits() throws {
        var failures: [ValidationFailure] = []
        for relationship in entity.relationships
        where relationship.isToMany && relationship.index < relationshipSlots.count {
            guard case .many(let storage) = relationshipSlots[relationship.index],
                !storage.added.isEmpty || !storage.removed.isEmpty
            else { continue }
            checkRelationship(relationship, &failures)
        }
        if !failures.isEmpty { throw ValidationError(failures: failures) }
    }

    private func checkAttribute(
        _ attribute: AttributeDescription, _ value: AttributeValue, _ failures: inout [ValidationFailure]
    ) {
        attribute.checkRules(of: value) { rule, message in
            failures.append(validationFailure(key: attribute.name, value: value, rule: rule, message: message))
        }
    }

    private func checkRelationship(_ relationship: RelationshipDescription, _ failures: inout [ValidationFailure]) {
        func fail(_ rule: ValidationRule, _ message: String) {
            failures.append(validationFailure(key: relationship.name, rule: rule, message: message))
        }
        if relationship.isToMany {
            guard case .many(let storage) = relationshipSlots[relationship.index] else { return }
            for destination in storage.added
            where destination.changeState == .insertedThenDeleted || destination.context !== context {
                fail(
                    .danglingReference,
                    "\(relationship.name) refers to \(destination.objectID), which was deleted before it was ever "
                        + "saved or belongs to another context"
                )
            }
            let minimum = relationship.effectiveMinCount, maximum = relationship.maxCount
            guard minimum != nil || maximum != nil else { return }
            let count = members(of: relationship).count
            if let minimum, count < minimum {
                fail(
                    .minCount,
                    "\(relationship.name) must have at least \(minimum) object\(minimum == 1 ? "" : "s"), it has "
                        + "\(count)"
                )
            }
            if let maximum, count > maximum {
                fail(
                    .maxCount,
                    "\(relationship.name) must have at most \(maximum) object\(maximum == 1 ? "" : "s"), it has "
                        + "\(count)"
                )
            }
        } else {
            guard case .one(let destination) = relationshipSlots[relationship.index] else { return }
            if let destination {
                if destination.changeState == .insertedThenDeleted || destination.context !== context {
                    fail(
                        .danglingReference,
                        "\(relationship.name) refers to \(destination.objectID), which was deleted before it was ever "
                            + "saved or belongs to another context"
                    )
                }
            } else if !relationship.isOptional {
                fail(.required, "\(relationship.name) is required")
            }
        }
    }
}

extension AttributeDescription {
    /// Checks a value against the attribute's rules (required, type, range, min/max value, length,
    /// pattern), calling `fail` for each rule it breaks: what saves run for every attribute, and what
    /// a batch insert runs without objects.
    public func checkRules(of value: AttributeValue, fail: (ValidationRule, String) -> Void) {
        if value.isNull {
            if !isOptional { fail(.required, "\(name) is required") }
            return
        }
        guard value.isStorable(as: type) else {
            if type == .calendarDate, case .date = value {
                return fail(.type, "\(name) is a calendar date and \(value) has a time of day (UTC)")
            }
            return fail(.type, "\(name) must be a \(type), not \(value)")
        }
        guard value.fitsRange(of: type) else {
            return fail(.range, "\(value) does not fit in \(type)")
        }
        guard hasValueRules else { return }
        if let scale, case .decimal(let decimal) = value, DecimalText.fractionDigits(of: decimal) > scale {
            fail(.range, "\(name): \(value) has more than \(scale) digits after the point (scale \(scale))")
        }
        if let minimum = minValue, let order = value.compare(to: minimum), order == .orderedAscending {
            fail(.minValue, "\(name) must be at least \(minimum)")
        }
        if let maximum = maxValue, let order = value.compare(to: maximum), order == .orderedDescending {
            fail(.maxValue, "\(name) must be at most \(maximum)")
        }
        var length: Int?
        switch value {
        case .string(let s) where minLength != nil || maxLength != nil:
            // Counting characters is not free; UTF-8 bytes bound them from above, which settles the
            // common case (short enough) without counting.
            let bytes = s.utf8.count
            if minLength == nil, let maximum = maxLength, bytes <= maximum { length = nil } else { length = s.count }
        case .binary(let d): length = d.count
        default: length = nil
        }
        if let length {
            let unit = type == .binary ? "bytes" : "characters"
            if let minimum = minLength, length < minimum {
                fail(.minLength, "\(name) must be at least \(minimum) \(unit) long, it is \(length)")
            }
            if let maximum = maxLength, length > maximum {
                fail(.maxLength, "\(name) must be at most \(maximum) \(unit) long, it is \(length)")
            }
        }
        if let regex = compiledRegex, case .string(let s) = value,
            regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) == nil
        {
            fail(.pattern, "\(name) does not match the pattern \(regularExpression!)")
        }
    }
}
