import ArgumentParser
import Foundation
import ObjectGraph
import Pipeline

/// `sluice seed MODEL SEED`: loads a model file and a seed file into a store, validates, saves, and
/// prints what the store holds.
struct Seed: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load a seed (fixture) file into a store through the object graph and print the store.",
        discussion: """
            Each object of the seed is inserted with its attributes, relationships are set by the
            destination's key values, the whole graph is validated (every failure listed) and saved.

            Examples:
              sluice seed SampleData/shop.model.yaml SampleData/shop.seed.yaml
              sluice seed SampleData/shop.model.yaml SampleData/shop.seed.yaml --to out/seeded.sqlite
            """)

    @Argument(help: "The model file (YAML or JSON).")
    var model: String

    @Argument(help: "The seed file (YAML).")
    var seed: String

    @Option(name: .customLong("to"), help: "The store file to write (SQLite). Without it, an in-memory store.")
    var store: String?

    @Flag(help: "Print only the summary line.")
    var quiet = false

    func run() throws {
        let loaded: ManagedObjectModel
        do { loaded = try ModelFile.load(contentsOf: URL(fileURLWithPath: model)) } catch {
            FileHandle.standardError.write(Data("sluice: \(error)\n".utf8))
            throw ExitStatus.configError
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: loaded)
        let storeURL = store.map { URL(fileURLWithPath: $0) }
        do { try TargetStore.add(to: coordinator, at: storeURL) } catch {
            FileHandle.standardError.write(Data("sluice: \(error)\n".utf8))
            throw ExitStatus.ioError
        }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let counts: [String: Int]
            do {
                counts = try SeedFile.load(contentsOf: URL(fileURLWithPath: seed), into: context)
                try context.save()
            } catch let error as SeedFileError {
                FileHandle.standardError.write(Data("sluice: \(error)\n".utf8))
                throw ExitStatus.dataErrors
            } catch let error as ObjectGraph.ValidationError {
                FileHandle.standardError.write(Data("sluice: \(error)\n".utf8))
                throw ExitStatus.dataErrors
            } catch let error as MergeError {
                FileHandle.standardError.write(Data("sluice: \(error)\n".utf8))
                throw ExitStatus.dataErrors
            } catch let error as StoreError {
                FileHandle.standardError.write(Data("sluice: \(error)\n".utf8))
                throw error.code == .constraintViolation || error.code == .conflict
                    ? ExitStatus.dataErrors : ExitStatus.ioError
            }
            context.reset()
            let total = counts.values.reduce(0, +)
            let target = storeURL.map { "the SQLite store \($0.path)" } ?? "an in-memory store"
            let perEntity = counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            print("Seeded \(total) objects (\(perEntity)) into \(target).")
            if !quiet { print(try GraphReport.text(for: context)) }
        }
    }
}
