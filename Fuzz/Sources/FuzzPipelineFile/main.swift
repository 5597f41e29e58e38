import Foundation
import FuzzSupport
import ModelFiles
import Pipeline

// Pipeline files read against a fixed model (`model: m.yaml`, written once beside the pipeline's
// name): every input either reads or is refused with the pipeline's or the model's error — never a
// crash or a hang. `${VAR}` values come from a fixed environment.
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-fuzz-pipeline-\(getpid())")
try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
try! """
version: 1
entities:
  Customer:
    attributes: { id: integer64!, email: { type: string, regex: "[^@]+@[^@]+" }, balance: decimal }
    relationships: { orders: { destination: Order, toMany: true, inverse: customer } }
    unique: [[id], [email]]
  Order:
    attributes: { number: integer64!, placedAt: date, note: string }
    relationships: { customer: { destination: Customer, inverse: orders } }
    unique: [[number]]
""".write(to: folder.appendingPathComponent("m.yaml"), atomically: true, encoding: .utf8)
let file = folder.appendingPathComponent("p.yaml").path
let environment = ["OUT": "/tmp/out", "EMPTY": "", "NAME": "shop"]

fuzz { data, count in
    guard let data, count > 0 else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    do {
        let config = try PipelineFile.load(text: text, file: file, environment: environment)
        _ = config.sources.map(\.mapping.repeatKeys)
    } catch let error as PipelineFileError {
        _ = error.description
    } catch let error as ModelFileError {
        _ = error.description
    } catch {
        fatalError("PipelineFile.load threw something other than a pipeline or model error: \(error)")
    }
    return 0
}
