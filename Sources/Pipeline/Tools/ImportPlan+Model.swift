import Foundation
import ModelFiles
import ObjectGraph
import Readers
import Stores

extension ImportPlan {
    /// The model an import runs with: the one given, the one the target holds (grown by what the
    /// inputs add), or the one inferred from the inputs.
    struct ModelChoice {
        /// Where the pipeline says the model is.
        var path: String
        /// The model file to write beside the pipeline (`nil`: the given one is used where it is).
        var text: String?
        /// The model, when given or stored (`nil`: the inferred one, which maps every column).
        var model: ManagedObjectModel?
        /// Whether the stored model was grown (the store migrates lightly).
        var migrates = false
        /// Whether the target is another program's SQLite database (the store's tables go beside its own).
        var sharesFile = false
        /// What was read of the target.
        let reading: TargetReading

        /// - Throws: `ModelFileError` for a given model that does not load; `StoreError`.
        init(for options: Options, inputs: Inputs, modelFile: String) throws {
            let reading = options.targetReading ?? TargetReading(options.target)
            self.reading = reading
            path = modelFile
            text = inputs.inference.modelFile()
            if let given = options.modelPath {
                path = URL(fileURLWithPath: given).standardizedFileURL.path
                text = nil
                // Its warnings (what of an Xcode model Sluice does not use) come once, when the
                // pipeline is loaded.
                model = try ModelFile.load(contentsOf: URL(fileURLWithPath: path), warn: { _ in })
            } else if let metadata = reading.metadata,
                let stored = try StoredModel.model(in: metadata, store: options.target),
                let recorded = StoredModel.text(in: metadata), !recorded.isJSON
            {
                try Self.refuseNewEntities(of: inputs, in: stored, mode: options.mode)
                try Self.refuseOtherTable(options.table, of: inputs, in: stored)
                model = stored
                text = recorded.text
                grow(stored, recorded: recorded.text, by: inputs, target: options.target)
            }
            sharesFile = try reading.sharesFile.get()
        }

        /// `--mode sync` and `replace` act on the stored objects of an input's entity: an input whose
        /// entity the store does not have (a renamed day-2 file, `accounts-2.csv`) would act on none
        /// and add a new entity instead — refused, naming the store's entities.
        private static func refuseNewEntities(
            of inputs: Inputs, in stored: ManagedObjectModel, mode: PipelineConfig.LoadMode
        ) throws {
            guard mode == .sync || mode == .replace,
                let new = inputs.inference.plans().first(where: {
                    $0.parent == nil && $0.links == nil && stored.entity(named: $0.name) == nil
                })
            else { return }
            let names = stored.entities.map(\.name).sorted()
            let near = NearestName.nearest(to: new.name, among: names).map { " (did you mean \($0)?)" } ?? ""
            throw ReaderError(
                .invalidOption,
                "--mode \(mode.rawValue) acts on the stored objects of an input's entity, and the target holds no "
                    + "\(new.name)\(near): name the entity with --entity (the target's entities: "
                    + "\(names.joined(separator: ", ")))")
        }

        /// `--table` names the table of an entity the target has already: it must be the table the
        /// target keeps it in (a store's tables are not renamed by an import).
        private static func refuseOtherTable(_ table: String?, of inputs: Inputs, in stored: ManagedObjectModel) throws
        {
            guard let table else { return }
            for plan in inputs.inference.plans() where plan.parent == nil {
                guard let entity = stored.entity(named: plan.name) else { continue }
                let kept = entity.tableName ?? entity.name
                guard kept != table else { continue }
                throw ReaderError(
                    .invalidOption,
                    "--table \(table): the target keeps \(entity.name) in table \(kept) (an import does not rename "
                        + "tables; give --table \(kept), or none)")
            }
        }

        /// Into an existing store: its own model, grown by the entities of inputs it has no entity
        /// for (a new file) and the optional attributes of columns its entities lack (Core Data's
        /// lightweight migration; the store checks its tables).
        private mutating func grow(_ stored: ManagedObjectModel, recorded: String, by inputs: Inputs, target: String) {
            let plans = inputs.inference.plans().filter { $0.links == nil }
            // New entities of new files only (a new nested array would need its parent changed too);
            // new attributes of nested entities as of top-level ones (a member the lines gained).
            let newEntities = plans.filter { $0.parent == nil }.map(\.name).filter { stored.entity(named: $0) == nil }
            var newAttributes: [String: [String]] = [:]
            for plan in plans {
                guard let entity = stored.entity(named: plan.name) else { continue }
                let missing = plan.fields.filter { field in
                    field.column != Record.ordinalFieldName
                        && ImportPlan.property(forColumn: field.column, inferred: field.attribute, of: entity) == nil
                }
                if !missing.isEmpty { newAttributes[plan.name] = missing.map(\.attribute) }
            }
            guard !newEntities.isEmpty || !newAttributes.isEmpty,
                let grown = ModelFile.growing(
                    recorded, by: inputs.inference.modelFile(), entities: newEntities, attributes: newAttributes),
                let grownModel = try? ModelFile.load(text: grown, file: target)
            else { return }
            model = grownModel
            text = grown
            migrates = true
        }
    }
}

extension ImportPlan {
    /// What planning an import reads of its target: read once, before the run — a plan made while
    /// the run holds the target (`SampledImport`) takes this reading instead of opening it again.
    public struct TargetReading: Sendable {
        /// The store's metadata (`nil`: no store there, or none readable).
        let metadata: StoreMetadata?
        /// Whether the target is another program's SQLite database (Sluice's tables go beside its own).
        let sharesFile: Result<Bool, any Error>

        init(_ target: String) {
            metadata =
                TargetStore.exists(target) ? try? TargetStore.metadata(ofStoreAt: TargetStore.url(target)) : nil
            let url = URL(fileURLWithPath: target)
            guard FileManager.default.fileExists(atPath: target),
                TargetStore.type(ofStoreAt: url) == SQLiteStore.storeType
            else {
                sharesFile = .success(false)
                return
            }
            do {
                _ = try SQLiteStore.metadata(at: url)
                sharesFile = .success(false)
            } catch let error as StoreError where error.code == .incompatibleModel {
                sharesFile = .success(true)
            } catch {
                sharesFile = .failure(error)
            }
        }
    }
}
