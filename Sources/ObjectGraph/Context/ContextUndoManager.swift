import OrderedCollections

/// Undo and redo for one context (Core Data's `undoManager`, opt-in: a context has none until one is
/// set). Every change of the context's objects — values, to-one destinations, to-many members and
/// their order, inserts, deletes (with what their delete rules changed) — is registered in the open
/// group; `undo()` reverts the last group as a whole and makes it redoable.
///
/// Groups: with `groupsByEvent` (the default) a group opens at the first change and closes at the
/// end of the event — `processPendingChanges()`, which runs at the end of every `perform` /
/// `performAndWait` block and at the start of `save()`; `beginUndoGrouping()` /
/// `endUndoGrouping()` make explicit groups (nestable, the outermost counts).
///
/// `rollback()`, `reset()` and a successful `save()` remove every action (Sluice is stricter than
/// Core Data here, which lets a saved change be undone into a new unsaved one). Use a manager on its
/// context's queue only.
///
/// ```swift
/// context.undoManager = ContextUndoManager()
/// employee["name"] = "Ada"
/// context.processPendingChanges()     // the end of an event: the group closes
/// context.undoManager?.undo()         // employee["name"] is back
/// ```
public final class ContextUndoManager {
    enum Action {
        case attribute(ManagedObject, Int, AttributeValue)
        case toOne(ManagedObject, Int, ManagedObject?)
        case addMember(ManagedObject, Int, ManagedObject, Int?)
        case removeMember(ManagedObject, Int, ManagedObject)
        case order(ManagedObject, Int, OrderedSet<ManagedObject>)
        case state(ManagedObject, ManagedObject.ChangeState, (attributes: [AttributeValue], toOne: [ManagedObject?])?)
    }

    /// How many groups `undo()` can go back (0: no limit); the oldest are dropped beyond it.
    public var levelsOfUndo = 0
    /// Whether a group closes at the end of each event (see the type's description).
    public var groupsByEvent = true
    private var undoStack: [[Action]] = []
    private var redoStack: [[Action]] = []
    private var openGroup: [Action]?
    private var explicitDepth = 0
    private var disabledCount = 0
    private var isReplaying = false
    weak var context: ManagedObjectContext?

    public init() {}

    public var canUndo: Bool { !undoStack.isEmpty || openGroup?.isEmpty == false }
    public var canRedo: Bool { !redoStack.isEmpty }
    /// The number of groups `undo()` can revert (an open group counts once it has actions).
    public var groupCount: Int { undoStack.count + (openGroup?.isEmpty == false ? 1 : 0) }
    public var isUndoRegistrationEnabled: Bool { disabledCount == 0 }

    /// Stops registering changes until as many `enableUndoRegistration()` calls.
    public func disableUndoRegistration() { disabledCount += 1 }
    public func enableUndoRegistration() {
        precondition(disabledCount > 0, "enableUndoRegistration() without disableUndoRegistration()")
        disabledCount -= 1
    }

    public func beginUndoGrouping() {
        if explicitDepth == 0 { closeGroup() }
        explicitDepth += 1
        if openGroup == nil { openGroup = [] }
    }

    public func endUndoGrouping() {
        precondition(explicitDepth > 0, "endUndoGrouping() without beginUndoGrouping()")
        explicitDepth -= 1
        if explicitDepth == 0 { closeGroup() }
    }

    /// Reverts the last group (closing the open one first) and makes it redoable.
    public func undo() {
        context?.processPendingChanges()
        closeGroup()
        guard let group = undoStack.popLast() else { return }
        redoStack.append(replay(group))
        context?.processPendingChanges()
    }

    /// Applies the last undone group again.
    public func redo() {
        closeGroup()
        guard let group = redoStack.popLast() else { return }
        undoStack.append(replay(group))
        context?.processPendingChanges()
    }

    public func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        openGroup = explicitDepth > 0 ? [] : nil
    }

    // MARK: Registration (by the context)

    func register(_ action: Action) {
        guard disabledCount == 0, !isReplaying else { return }
        if openGroup == nil { openGroup = [] }
        openGroup!.append(action)
        redoStack.removeAll()
    }

    /// The end of an event: an automatic group closes.
    func endEvent() {
        if groupsByEvent, explicitDepth == 0 { closeGroup() }
    }

    private func closeGroup() {
        guard explicitDepth == 0, let group = openGroup else { return }
        openGroup = nil
        guard !group.isEmpty else { return }
        undoStack.append(group)
        if levelsOfUndo > 0, undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
    }

    /// Applies a group's actions last first; returns the actions that revert what it did.
    private func replay(_ group: [Action]) -> [Action] {
        isReplaying = true
        defer { isReplaying = false }
        return group.reversed().compactMap(apply)
    }

    /// Applies one action; `nil` when its object left the context (a reset, a delete saved or made
    /// elsewhere): there is nothing to revert any more. A refreshed object loads its values first.
    private func apply(_ action: Action) -> Action? {
        guard let context, action.object.context === context else { return nil }
        action.object.willAccess()
        switch action {
        case .attribute(let object, let index, let value):
            let inverse = Action.attribute(object, index, object.attributeValues[index])
            object[attributeAt: index] = value
            return inverse
        case .toOne(let object, let index, let destination):
            guard case .one(let current) = object.relationshipSlots[index] else { return action }
            object.primitiveSetToOne(object.entity.relationships[index], destination)
            return .toOne(object, index, current)
        case .addMember(let object, let index, let member, let position):
            let relationship = object.entity.relationships[index]
            let storage = object.editableStorage(of: relationship)
            object.willChangeToMany()
            object.changeMember(member, of: relationship, in: storage, adding: true)
            if let position, var members = storage.members, let now = members.firstIndex(of: member), now != position {
                members.remove(at: now)
                members.insert(member, at: min(position, members.count))
                storage.members = members
                storage.isReordered = true
            }
            return .removeMember(object, index, member)
        case .removeMember(let object, let index, let member):
            let relationship = object.entity.relationships[index]
            let storage = object.editableStorage(of: relationship)
            let position = relationship.isOrdered ? storage.members?.firstIndex(of: member) : nil
            object.willChangeToMany()
            object.changeMember(member, of: relationship, in: storage, adding: false)
            return .addMember(object, index, member, position)
        case .order(let object, let index, let members):
            let storage = object.editableStorage(of: object.entity.relationships[index])
            let inverse = Action.order(object, index, storage.members ?? [])
            object.willChangeToMany()
            storage.members = members
            storage.isReordered = true
            return inverse
        case .state(let object, let state, let original):
            let inverse = Action.state(object, object.changeState, object.original)
            context.restoreChangeState(of: object, to: state, original: original)
            return inverse
        }
    }
}

extension ContextUndoManager.Action {
    /// The object the action changes.
    var object: ManagedObject {
        switch self {
        case .attribute(let object, _, _), .toOne(let object, _, _), .addMember(let object, _, _, _),
            .removeMember(let object, _, _), .order(let object, _, _), .state(let object, _, _):
            return object
        }
    }
}
