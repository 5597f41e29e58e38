import ArgumentParser
import Foundation
import Pipeline
import Readers

/// `sluice infer INPUT...`: prints a proposed model file for the inputs.
struct Infer: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Propose a model (YAML) for CSV, XML, SQL dump or SQLite inputs, from every value they hold.")

    @Argument(help: "Input files (plain or gzipped).")
    var inputs: [String]

    @Option(help: "auto, csv, xml, sqldump or sqlite.")
    var format = "auto"

    @Option(help: "For XML: the path of the record elements, e.g. /orders/order.")
    var record: String?

    func validate() throws {
        guard format == "auto" || InputFormat(rawValue: format) != nil else {
            throw ValidationError("--format must be auto, csv, xml, sqldump or sqlite, not \(format.debugDescription)")
        }
    }

    func run() throws {
        var inference = ModelInference()
        for input in inputs {
            do {
                try inference.add(inputAt: input, format: InputFormat(rawValue: format), recordPath: record)
            } catch let error as ReaderError {
                FileHandle.standardError.write(Data("sluice: \(error)\n".utf8))
                throw error.kind == .invalidOption ? ExitStatus.configError : (error.kind == .io ? ExitStatus.ioError : ExitStatus.dataErrors)
            }
        }
        print(inference.modelFile(), terminator: "")
    }
}
