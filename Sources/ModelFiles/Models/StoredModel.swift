import Foundation
import ObjectGraph

/// The model a run wrote a store with, kept in the store's metadata (`sluice.model`: the model
/// file's format on the first line, then its text), so `sluice inspect` and `sluice validate` can
/// open the store without being told the model.
public enum StoredModel {
    public static let key = "sluice.model"

    /// Records the model file's text in `metadata`.
    public static func record(text: String, isJSON: Bool, in metadata: inout StoreMetadata) {
        metadata.userInfo[key] = (isJSON ? "json" : "yaml") + "\n" + text
    }

    /// The model file's text recorded in `metadata`, and whether it is JSON.
    public static func text(in metadata: StoreMetadata) -> (text: String, isJSON: Bool)? {
        guard let recorded = metadata.userInfo[key], let newline = recorded.firstIndex(of: "\n") else { return nil }
        return (String(recorded[recorded.index(after: newline)...]), recorded[..<newline] == "json")
    }

    /// The model recorded in `metadata`, or `nil` when none is.
    /// - Throws: `ModelFileError` when the recorded text no longer reads as a model.
    public static func model(in metadata: StoreMetadata, store: String) throws -> ManagedObjectModel? {
        guard let recorded = text(in: metadata) else { return nil }
        return try ModelFile.load(text: recorded.text, file: "\(store) (stored model)", isJSON: recorded.isJSON)
    }
}
