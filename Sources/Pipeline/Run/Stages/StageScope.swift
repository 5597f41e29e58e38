import ObjectGraph
import Readers

/// What a context's stages share for one source: the source, its record kinds and the context
/// (used on its queue only), and how a record of a batch is rejected.
struct StageScope {
    let source: PipelineConfig.Source
    /// The source's place in the pipeline.
    let sourceIndex: Int
    let config: PipelineConfig
    let kinds: RecordKinds
    let context: ManagedObjectContext

    /// Rejects an item: its object (and its nested children's) leave the context.
    func reject(
        _ batch: inout ImportBatch, _ index: Int, property: String, rule: String, message: String,
        raw: String? = nil, position: SourcePosition? = nil
    ) {
        let item = batch.items[index]
        let failure = RejectFailure(
            property: property, raw: raw, rule: rule, message: message, position: position ?? item.record.position)
        if item.reject == nil {
            batch.items[index].reject = RecordReject(
                source: source.name, entity: kinds[item.kind].mapper.reportName, position: item.record.position,
                failures: [failure])
        } else {
            batch.items[index].reject!.failures.append(failure)
        }
        if let object = item.object { discard(object) }
        for link in item.links { link.owner.removeRelatedObject(link.destination, forKey: link.relationship) }
        batch.items[index].links = []
        for child in batch.items.indices where batch.items[child].parent == index && batch.items[child].reject == nil {
            rejectWithParent(&batch, child)
        }
    }

    /// Rejects a child whose parent record was rejected.
    /// Rejects a record for a failure of the save (`WriteStage.SaveFailure`), showing the field
    /// of the attribute it is about.
    func reject(_ batch: inout ImportBatch, _ index: Int, for failure: WriteStage.SaveFailure) {
        let item = batch.items[index]
        let field = failure.attribute.flatMap { kinds[item.kind].mapper.field(of: $0, in: item.record) }
        reject(
            &batch, index, property: failure.property, rule: failure.rule, message: failure.message,
            raw: field?.raw ?? failure.value, position: field?.position)
    }

    func rejectWithParent(_ batch: inout ImportBatch, _ index: Int) {
        reject(
            &batch, index, property: kinds[batch.items[index].kind].parentRelationship ?? "", rule: "parent",
            message: "its parent record was rejected")
    }

    /// Takes an object of the batch out of the context: unlinked from the destinations lookups gave
    /// it first (stored destinations are faults whose to-many edits would keep it), then deleted. An
    /// object of a stored row (an update, or an insert that took a stored row's key) is not deleted:
    /// its changes are dropped and the row stays as stored.
    func discard(_ object: ManagedObject) {
        guard !object.isDeleted else { return }
        if !object.isInserted {
            context.refresh(object, mergeChanges: false)
            return
        }
        for relationship in object.entity.relationships
        where !relationship.isToMany && object.relatedObject(forKey: relationship.name) != nil {
            object.setRelatedObject(nil, forKey: relationship.name)
        }
        context.delete(object)
    }
}
