import FuzzSupport
import ModelFiles

// Model files as YAML, or as JSON when the control byte's low bit is set: every input either loads
// into a model or is refused with a `ModelFileError` — never a crash or a hang.
fuzz { data, count in
    guard let data, count > 0 else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data + 1, count: count - 1), as: UTF8.self)
    do {
        let model = try ModelFile.load(text: text, file: "fuzz.yaml", isJSON: data[0] & 1 != 0)
        for entity in model.entities { _ = entity.uniquenessConstraints }
    } catch let error as ModelFileError {
        _ = error.description
    } catch {
        fatalError("ModelFile.load threw something other than a ModelFileError: \(error)")
    }
    return 0
}
