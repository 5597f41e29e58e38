import Foundation
import ModelFiles
import ObjectGraph
import Readers

extension PipelineConfig.Mapping {
    /// The XML or JSON record spec that yields what this mapping reads: its fields (named by their
    /// paths), the key paths of its lookups, and its children's records. `#row` is no path (the
    /// record's number fills it).
    public func recordSpec(path: String) -> RecordSpec {
        var paths: [String] = []
        for field in fields where !paths.contains(field.from) { paths.append(field.from) }
        for lookup in lookups {
            for part in lookup.key where !paths.contains(part.from) { paths.append(part.from) }
        }
        paths.removeAll { $0 == Record.ordinalFieldName }
        return RecordSpec(
            path: path, kind: path, fields: paths.map { ($0, $0) },
            children: children.map { $0.mapping.recordSpec(path: $0.record) })
    }
}

extension PipelineConfig {
    /// Every lookup of every source, nested children's included.
    var lookups: [Lookup] {
        func all(_ mapping: Mapping) -> [Lookup] {
            mapping.lookups + mapping.children.flatMap { all($0.mapping) }
        }
        return sources.flatMap { all($0.mapping) }
    }
}
